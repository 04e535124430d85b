use tool_runtime::tool;

/// Waits for "five seconds".
#[tool(read_only, timeout = "5 seconds")]
async fn wait() {}

fn main() {}
