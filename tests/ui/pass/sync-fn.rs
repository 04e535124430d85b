use tool_runtime::tool;

/// Adds two numbers.
#[tool(read_only)]
fn add(a: i64, b: i64) -> i64 {
    a + b
}

fn main() {
    assert_eq!(add(2, 3), 5);
    assert_eq!(add::spec().name(), "add");
}
