use tool_runtime::tool;

/// Claims to read with the risk of a write.
#[tool(read_only, risk = "write")]
fn read() {}

fn main() {}
