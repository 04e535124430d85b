use tool_runtime::tool;

/// Requires roles but lists none.
#[tool(stateful, roles = [])]
async fn refund(order_id: String) -> String {
    order_id
}

fn main() {}
