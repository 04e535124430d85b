use tool_runtime::tool;

/// Claims to read and to write.
#[tool(read_only, mutates_workspace)]
fn write() {}

fn main() {}
