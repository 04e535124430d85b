use tool_runtime::tool;

/// Looks up a context by name.
#[tool(read_only)]
fn read(ctx: String) -> String {
    ctx
}

fn main() {}
