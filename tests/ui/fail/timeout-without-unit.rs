use tool_runtime::tool;

/// Gives the timeout as a bare number.
#[tool(read_only, timeout = 5)]
async fn wait() {}

fn main() {}
