use tool_runtime::{tool, RunContext};

/// Reads many contexts.
#[tool(read_only)]
fn read(contexts: Vec<RunContext>) -> usize {
    contexts.len()
}

fn main() {}
