use tool_runtime::tool;

/// Finds records of a type.
#[tool(read_only)]
fn r#find(
    /// The record type.
    r#type: String,
) -> String {
    r#type
}

fn main() {
    let spec = find::spec();
    assert_eq!(spec.name(), "find");
    assert!(spec.input_schema()["properties"]["type"].is_object());
}
