use tool_runtime::tool;

/// Names its role as a string instead of a list.
#[tool(stateful, roles = "billing")]
async fn refund(order_id: String) -> String {
    order_id
}

fn main() {}
