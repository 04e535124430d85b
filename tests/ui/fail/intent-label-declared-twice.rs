use tool_runtime::{intents, tool};

/// A real tool.
#[tool(read_only)]
fn real() -> u32 {
    1
}

intents! {
    /// Two intents a classifier could not tell apart.
    enum Intent {
        Status = "status" => [real],
        Tracking = "status" => [real],
    }
}

fn main() {}
