use tool_runtime::tool;

/// Chooses the idempotency layer with a value it does not take.
#[tool(stateful, idempotency = "yes please")]
async fn refund(order_id: String) -> String {
    order_id
}

/// Misspells `off`.
#[tool(stateful, idempotency = "of")]
async fn restart(service: String) -> String {
    service
}

fn main() {}
