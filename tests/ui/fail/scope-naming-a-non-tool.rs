use tool_runtime::{Scope, intents, tool, tools};

/// A real tool.
#[tool(read_only)]
fn real() -> u32 {
    1
}

fn plain_function() -> u32 {
    2
}

intents! {
    /// Intents, one naming a function that is not a tool.
    enum Intent {
        Real = "real" => [real],
        Plain = "plain" => [real, plain_function],
    }
}

fn main() {
    let _ = Scope::of(tools![real, plain_function]);
    let _ = Intent::ALL;
}
