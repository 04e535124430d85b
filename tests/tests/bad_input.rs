//! A catalogue of bad input: each bad call gets its own error kind, and the good calls of the
//! same batch come back intact.
//!
//! A binary of its own: its runtime is built from the inventory, and
//! `an_unknown_tool_lists_what_exists` asserts the whole list of tools; the deps-agnostic
//! `#[tool]`s of any file linked with it would join that list.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use tool_runtime::{Observation, Runtime, Session, ToolCall, tool, tools};

/// Deps of the catalogue.
pub struct Desk;

/// Looks up one order.
#[tool(read_only)]
async fn lookup(
    /// The order id.
    order_id: String,
    /// How many lines.
    limit: Option<u32>,
) -> String {
    format!("{order_id}:{limit:?}")
}

/// Panics.
#[tool(read_only)]
async fn explode() -> String {
    let empty: Vec<u8> = Vec::new();
    let index = empty.len() + 3;
    format!("{}", empty[index])
}

/// Never finishes.
#[tool(read_only, timeout = "1s")]
async fn hang() -> String {
    std::future::pending::<()>().await;
    String::new()
}

/// Returns a flood of output.
#[tool(read_only, max_output_chars = 1000)]
async fn flood() -> String {
    "line of output\n".repeat(100_000)
}

/// A parameter whose parsing panics.
#[derive(Debug, JsonSchema)]
pub struct Poison(u32);

impl<'de> Deserialize<'de> for Poison {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = u32::deserialize(deserializer)?;
        assert!(value != 13, "unlucky number");
        Ok(Poison(value))
    }
}

/// Takes a parameter whose parsing panics on 13.
#[tool(read_only)]
async fn poisoned(
    /// A number.
    value: Poison,
) -> u32 {
    value.0
}

fn runtime() -> Runtime<Desk> {
    match Runtime::builder(Desk)
        .tools(tools![lookup, explode, hang, flood, poisoned])
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

/// Runs `bad` between two good reads and returns the bad call's observation, after checking
/// the good ones are intact.
async fn between_good_calls(bad: ToolCall) -> Observation {
    between_good_calls_in(&runtime(), bad).await
}

async fn between_good_calls_in(runtime: &Runtime<Desk>, bad: ToolCall) -> Observation {
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![
                ToolCall::new("good-1", "lookup", r#"{"order_id":"A-1"}"#),
                bad,
                ToolCall::new("good-2", "lookup", r#"{"order_id":"A-2","limit":3}"#),
            ],
        )
        .await;
    assert_eq!(report.observations().len(), 3);
    assert_eq!(report.observations()[0].content(), Some("A-1:None"));
    assert_eq!(report.observations()[2].content(), Some("A-2:Some(3)"));
    report.observations()[1].clone()
}

fn kind_and_message(observation: &Observation) -> (Option<&str>, Option<&str>) {
    (
        observation.error_kind(),
        observation.error().map(|error| error.message()),
    )
}

#[tokio::test]
async fn malformed_json_names_the_position() {
    let observation =
        between_good_calls(ToolCall::new("bad", "lookup", r#"{"order_id": "A-1",}"#)).await;
    assert_eq!(
        kind_and_message(&observation),
        (
            Some("invalid_arguments"),
            Some("arguments are not valid JSON: trailing comma at line 1 column 20")
        )
    );
}

#[tokio::test]
async fn wrong_type_names_the_field_and_carries_its_schema() {
    let observation =
        between_good_calls(ToolCall::new("bad", "lookup", r#"{"order_id": 1024}"#)).await;
    assert_eq!(
        kind_and_message(&observation),
        (
            Some("invalid_arguments"),
            Some("`order_id`: invalid type: integer `1024`, expected a string")
        )
    );
    let details = observation
        .error()
        .and_then(|error| error.details().cloned());
    assert_eq!(
        details,
        Some(serde_json::json!({
            "field": "order_id",
            "schema": {"type": "string", "description": "The order id."}
        }))
    );
}

#[tokio::test]
async fn unknown_and_missing_fields_are_named() {
    let unknown = between_good_calls(ToolCall::new(
        "bad",
        "lookup",
        r#"{"order_id":"A","orderId":"A"}"#,
    ))
    .await;
    assert_eq!(
        kind_and_message(&unknown),
        (
            Some("invalid_arguments"),
            Some("unknown field `orderId`, expected `order_id` or `limit`")
        )
    );
    let missing = between_good_calls(ToolCall::new("bad", "lookup", r#"{"limit": 2}"#)).await;
    assert_eq!(
        kind_and_message(&missing),
        (Some("invalid_arguments"), Some("missing field `order_id`"))
    );
    let schema = missing
        .error()
        .and_then(|error| error.details())
        .map(|details| details["schema"].clone());
    assert_eq!(
        schema,
        Some(serde_json::json!({"type": "string", "description": "The order id."}))
    );
}

#[tokio::test]
async fn ten_mebibytes_of_arguments_are_refused_by_size() {
    let huge = format!(r#"{{"order_id":"{}"}}"#, "x".repeat(10 << 20));
    let observation = between_good_calls(ToolCall::new("bad", "lookup", huge)).await;
    assert_eq!(
        kind_and_message(&observation),
        (
            Some("invalid_arguments"),
            Some("arguments are 10485775 bytes; the limit is 1048576 bytes")
        )
    );
}

#[tokio::test]
async fn nesting_ten_thousand_deep_is_refused_by_depth() {
    let deep = format!(
        r#"{{"order_id":{}1{}}}"#,
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    let observation = between_good_calls(ToolCall::new("bad", "lookup", deep)).await;
    assert_eq!(
        kind_and_message(&observation),
        (
            Some("invalid_arguments"),
            Some("arguments nest 10001 levels deep; the limit is 64 levels")
        )
    );
    let mut value = serde_json::json!(1);
    for _ in 0..10_000 {
        value = serde_json::Value::Array(vec![value]);
    }
    // Built by hand: `json!` would serialize the value recursively.
    let mut arguments = serde_json::Map::new();
    arguments.insert("order_id".to_owned(), value);
    let observation = between_good_calls(ToolCall::new(
        "bad",
        "lookup",
        serde_json::Value::Object(arguments),
    ))
    .await;
    assert_eq!(
        kind_and_message(&observation),
        (
            Some("invalid_arguments"),
            Some("arguments nest 10001 levels deep; the limit is 64 levels")
        )
    );
}

#[tokio::test]
async fn an_unknown_tool_lists_what_exists() {
    let observation = between_good_calls(ToolCall::new("bad", "lookup_order", "{}")).await;
    assert_eq!(
        kind_and_message(&observation),
        (
            Some("unknown_tool"),
            Some("there is no tool named `lookup_order`; did you mean `lookup`?")
        )
    );
    assert_eq!(
        observation.error().and_then(|error| error.hint()),
        Some("available tools: explode, flood, hang, lookup, poisoned, read_artifact")
    );
}

#[tokio::test]
async fn a_panicking_tool_is_contained() {
    let observation = between_good_calls(ToolCall::new("bad", "explode", "{}")).await;
    assert_eq!(
        kind_and_message(&observation),
        (
            Some("panicked"),
            Some("the tool panicked: index out of bounds: the len is 0 but the index is 3")
        )
    );
}

#[tokio::test]
async fn a_panic_while_parsing_arguments_is_contained() {
    let observation =
        between_good_calls(ToolCall::new("bad", "poisoned", r#"{"value": 13}"#)).await;
    assert_eq!(
        kind_and_message(&observation),
        (Some("panicked"), Some("the tool panicked: unlucky number"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_hanging_tool_times_out() {
    let observation = between_good_calls(ToolCall::new("bad", "hang", "{}")).await;
    assert_eq!(observation.error_kind(), Some("timeout"));
    assert_eq!(observation.elapsed(), Duration::from_secs(1));
}

#[tokio::test]
async fn a_flood_of_output_is_cut_with_a_notice() {
    let observation = between_good_calls(ToolCall::new("bad", "flood", "{}")).await;
    assert!(observation.truncated());
    let content = observation.content().unwrap_or_default();
    assert!(
        content.contains("[... 1499000 of 1500000 characters omitted"),
        "{content}"
    );
    assert!(
        content.chars().count() < 1400,
        "{}",
        content.chars().count()
    );
    assert!(observation.artifact().is_some());
}

#[tokio::test]
async fn arguments_that_are_not_an_object_are_refused() {
    let observation = between_good_calls(ToolCall::new("bad", "lookup", r#"["A-1", 3]"#)).await;
    assert_eq!(
        kind_and_message(&observation),
        (
            Some("invalid_arguments"),
            Some("arguments must be a JSON object of named parameters, got an array")
        )
    );
}
