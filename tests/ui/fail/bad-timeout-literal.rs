use tool_runtime::tool;

/// Waits for "five seconds".
#[tool(read_only, timeout = "5 seconds")]
fn wait() {}

fn main() {}
