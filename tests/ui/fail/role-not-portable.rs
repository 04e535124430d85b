use tool_runtime::tool;

/// Lists a role with a space in it.
#[tool(stateful, roles = ["billing", "team lead"])]
async fn refund(order_id: String) -> String {
    order_id
}

fn main() {}
