use tool_runtime::tool;

/// Searches orders.
#[tool(read_only)]
fn search(
    /// Free text.
    query: String,
    /// Only this status.
    status: Option<String>,
    /// How many results.
    #[default = 20]
    limit: u32,
    /// Sort keys.
    #[default(vec!["date".to_owned()])]
    sort: Vec<String>,
) -> String {
    format!("{query} {status:?} {limit} {sort:?}")
}

fn main() {
    let schema = search::spec().input_schema();
    assert_eq!(schema["required"], serde_json::json!(["query"]));
    assert_eq!(schema["properties"]["limit"]["default"], serde_json::json!(20));
    assert_eq!(schema["properties"]["sort"]["default"], serde_json::json!(["date"]));
}
