use schemars::JsonSchema;
use serde::Deserialize;
use tool_runtime::tool;

/// A date range.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Range {
    /// First day, inclusive.
    pub from: String,
    /// Last day, inclusive.
    pub to: String,
}

/// Order status.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not shipped yet.
    Open,
    /// On its way.
    Shipped,
}

/// Filters orders.
#[tool(read_only)]
fn filter(
    /// When.
    range: Range,
    /// Which statuses.
    statuses: Vec<Status>,
) -> String {
    format!("{range:?} {statuses:?}")
}

fn main() {
    let schema = filter::spec().input_schema();
    assert_eq!(schema["$defs"]["Range"]["additionalProperties"], serde_json::json!(false));
    assert!(schema["$defs"]["Status"].is_object());
}
