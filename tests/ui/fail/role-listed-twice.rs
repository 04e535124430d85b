use tool_runtime::tool;

/// Lists one role twice.
#[tool(stateful, roles = ["billing", "admin", "billing"])]
async fn refund(order_id: String) -> String {
    order_id
}

fn main() {}
