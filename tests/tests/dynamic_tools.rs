//! Dynamic tools: a raw JSON Schema and a closure; arguments validated by a JSON Schema
//! validator, every wrong field named by its path.

use serde_json::{Value, json};
use tool_runtime::{DynamicTool, DynamicToolError, Runtime, Session, ToolCall};

/// Deps of the dynamic-tool tests.
pub struct Remote;

fn weather() -> Result<DynamicTool, DynamicToolError> {
    DynamicTool::builder(
        "get_forecast",
        "Forecast for a city.",
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "ForecastArgs",
            "type": "object",
            "properties": {
                "city": {"type": "string", "minLength": 1},
                "days": {"type": "integer", "minimum": 1, "maximum": 7},
                "units": {"enum": ["metric", "imperial"]},
                "options": {
                    "type": "object",
                    "properties": {"hourly": {"type": "boolean"}}
                }
            },
            "required": ["city"]
        }),
    )
    .read_only()
    .handler(|args: Value, ctx| async move {
        Ok(json!({"city": args["city"], "days": args.get("days"), "session": ctx.session_id()}))
    })
    .build()
}

fn runtime() -> Runtime<Remote> {
    let built = Runtime::builder(Remote)
        .inventory(false)
        .dynamic_tool(weather())
        .and_then(tool_runtime::RuntimeBuilder::build);
    match built {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

async fn run(args: Value) -> tool_runtime::Observation {
    let report = runtime()
        .execute(
            &Session::new("s-9"),
            vec![ToolCall::new("c", "get_forecast", args)],
        )
        .await;
    report.observations()[0].clone()
}

#[tokio::test]
async fn valid_arguments_reach_the_handler() {
    let observation = run(json!({"city": "Oslo", "days": 3})).await;
    assert_eq!(
        observation.content(),
        Some(r#"{"city":"Oslo","days":3,"session":"s-9"}"#)
    );
}

#[tokio::test]
async fn every_wrong_field_is_named_by_its_path() {
    let observation =
        run(json!({"city": "", "days": 9, "units": "kelvin", "options": {"hourly": "yes"}})).await;
    assert_eq!(observation.error_kind(), Some("invalid_arguments"));
    let message = observation
        .error()
        .map(|error| error.message().to_owned())
        .unwrap_or_default();
    assert_eq!(
        message,
        "`/city`: \"\" is shorter than 1 character; `/days`: 9 is greater than the maximum of 7; `/units`: \"kelvin\" is not one of \"metric\" or \"imperial\"; `/options/hourly`: \"yes\" is not of type \"boolean\""
    );
    let paths: Vec<Value> = observation
        .error()
        .and_then(|error| error.details())
        .and_then(|details| details["errors"].as_array().cloned())
        .unwrap_or_default()
        .iter()
        .map(|error| error["path"].clone())
        .collect();
    assert_eq!(
        paths,
        [
            json!("/city"),
            json!("/days"),
            json!("/units"),
            json!("/options/hourly")
        ]
    );
}

#[tokio::test]
async fn missing_and_unknown_fields_are_reported() {
    let observation = run(json!({"town": "Oslo"})).await;
    assert_eq!(
        observation.error().map(|error| error.message()),
        Some(
            "Additional properties are not allowed ('town' was unexpected); \"city\" is a required property"
        )
    );
}

#[tokio::test]
async fn malformed_json_text_is_reported_with_its_position() {
    let report = runtime()
        .execute(
            &Session::new("s"),
            vec![ToolCall::new("c", "get_forecast", r#"{"city": Oslo}"#)],
        )
        .await;
    assert_eq!(
        report.observations()[0]
            .error()
            .map(|error| error.message()),
        Some("arguments are not valid JSON: expected value at line 1 column 10")
    );
}

#[test]
fn the_schema_is_canonical() {
    let Ok(tool) = weather() else {
        panic!("tool");
    };
    let schema = tool_runtime::Tool::spec(&tool).input_schema().clone();
    assert_eq!(schema.get("$schema"), None);
    assert_eq!(schema.get("title"), None);
    assert_eq!(schema["additionalProperties"], json!(false));
    assert_eq!(
        schema["properties"]["options"]["additionalProperties"],
        json!(false)
    );
}

#[test]
fn invalid_definitions_are_refused_at_build() {
    let bad_schema = DynamicTool::builder(
        "x",
        "X.",
        json!({"type": "object", "properties": {"a": {"type": "nonsense"}}}),
    )
    .handler(|_, _| async { Ok(Value::Null) })
    .build();
    assert!(
        matches!(bad_schema, Err(DynamicToolError::InvalidSchema { .. })),
        "{bad_schema:?}"
    );
    let bad_name = DynamicTool::builder("get weather", "X.", json!({"type": "object"}))
        .handler(|_, _| async { Ok(Value::Null) })
        .build();
    assert_eq!(
        bad_name.err().map(|error| error.to_string()),
        Some("tool name `get weather` is not accepted by every provider: use letters, digits, `_` and `-`, start with a letter or `_`, at most 64 characters".to_owned())
    );
    let not_object = DynamicTool::builder("x", "X.", json!({"type": "array"}))
        .handler(|_, _| async { Ok(Value::Null) })
        .build();
    assert_eq!(
        not_object.err(),
        Some(DynamicToolError::NotAnObject("x".to_owned()))
    );
}
