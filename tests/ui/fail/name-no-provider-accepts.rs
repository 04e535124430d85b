use tool_runtime::tool;

/// Has a dotted name.
#[tool(read_only, name = "orders.get")]
fn get_order() {}

fn main() {}
