use tool_runtime::{intents, tool};

/// A real tool.
#[tool(read_only)]
fn real() -> u32 {
    1
}

intents! {
    /// The same intent twice.
    enum Intent {
        Status = "status" => [real],
        Status = "status_again" => [real],
    }
}

fn main() {}
