use tool_runtime::tool;

/// Takes a borrowed string.
#[tool(read_only)]
fn read(order_id: &str) -> usize {
    order_id.len()
}

fn main() {}
