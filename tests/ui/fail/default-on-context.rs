use tool_runtime::{tool, RunContext};

/// Gives the context a default.
#[tool(read_only)]
fn read(#[default = 1] ctx: RunContext) -> u32 {
    let _ = ctx;
    1
}

fn main() {}
