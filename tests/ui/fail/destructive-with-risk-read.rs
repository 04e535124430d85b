use tool_runtime::tool;

/// Claims to destroy with the risk of a read.
#[tool(destructive, risk = "read")]
fn wipe() {}

fn main() {}
