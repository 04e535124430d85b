use std::sync::Arc;

use tool_runtime::{tool, RunContext};

/// Wraps the context in an unsupported order.
#[tool(read_only)]
fn read(ctx: Arc<Option<RunContext>>) -> u32 {
    let _ = ctx;
    1
}

fn main() {}
