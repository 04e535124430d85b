use tool_runtime::tool;

/// Misspells a key.
#[tool(raed_only)]
fn read() -> u32 {
    1
}

fn main() {}
