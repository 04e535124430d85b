use tool_runtime::tool;

/// Opts a read out of the idempotency layer, which reads never use.
#[tool(read_only, idempotency = "off")]
async fn get_order(order_id: String) -> String {
    order_id
}

fn main() {}
