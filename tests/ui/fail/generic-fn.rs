use tool_runtime::tool;

/// Echoes any value.
#[tool(read_only)]
fn echo<T: serde::Serialize>(value: T) -> T {
    value
}

fn main() {}
