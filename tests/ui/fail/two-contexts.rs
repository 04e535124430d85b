use tool_runtime::{tool, RunContext};

struct Deps;

/// Reads twice.
#[tool(read_only)]
fn read(first: RunContext<Deps>, second: &RunContext<Deps>) -> u32 {
    let _ = (first, second);
    1
}

fn main() {}
