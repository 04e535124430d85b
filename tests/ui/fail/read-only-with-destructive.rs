use tool_runtime::tool;

/// Claims to read and to destroy.
#[tool(read_only, destructive)]
fn wipe() {}

fn main() {}
