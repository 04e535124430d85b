use tool_runtime::tool;

/// Tells the time of the desk.
#[tool(read_only)]
async fn desk_time() -> &'static str {
    "09:00"
}

fn main() {
    assert_eq!(
        desk_time::spec().input_schema(),
        &serde_json::json!({"type": "object", "properties": {}, "additionalProperties": false})
    );
}
