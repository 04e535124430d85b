use tool_runtime::tool;

/// A struct is not a tool.
#[tool(read_only)]
struct Desk;

fn main() {}
