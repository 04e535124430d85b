use tool_runtime::tool;

/// Lists an empty role.
#[tool(stateful, roles = ["billing", ""])]
async fn refund(order_id: String) -> String {
    order_id
}

fn main() {}
