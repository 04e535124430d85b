use tool_runtime::{tool, tools};

/// A real tool.
#[tool(read_only)]
fn real() -> u32 {
    1
}

fn plain_function() -> u32 {
    2
}

struct NotATool;

fn main() {
    let _ = tools![real, plain_function];
    let _ = tools![real, NotATool];
}
