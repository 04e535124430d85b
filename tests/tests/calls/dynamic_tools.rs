//! Dynamic tools: a raw JSON Schema and a closure; arguments validated by a JSON Schema
//! validator, every wrong field named by its path.

use serde_json::{Value, json};
use tool_runtime::dynamic::{DynamicTool, DynamicToolError};
use tool_runtime::{Runtime, Session, ToolCall};

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

fn message_and_details(observation: &tool_runtime::Observation) -> (String, Value) {
    let error = observation.error();
    (
        error
            .map(|error| error.message().to_owned())
            .unwrap_or_default(),
        error
            .and_then(|error| error.details().cloned())
            .unwrap_or_default(),
    )
}

#[tokio::test]
async fn every_wrong_field_is_named_by_its_path() {
    let observation =
        run(json!({"city": "", "days": 9, "units": "kelvin", "options": {"hourly": "yes"}})).await;
    assert_eq!(observation.error_kind(), Some("invalid_arguments"));
    let (message, details) = message_and_details(&observation);
    assert_eq!(
        message,
        "`city`: invalid length, expected at least 1 character; `days`: invalid value, expected at most 7; `units`: invalid value, expected `metric` or `imperial`; `options.hourly`: invalid type: string, expected a boolean"
    );
    assert_eq!(
        details,
        json!({
            "field": "city",
            "schema": {"type": "string", "minLength": 1},
            "errors": [
                {"field": "city", "message": "invalid length, expected at least 1 character"},
                {"field": "days", "message": "invalid value, expected at most 7"},
                {"field": "units", "message": "invalid value, expected `metric` or `imperial`"},
                {"field": "options.hourly", "message": "invalid type: string, expected a boolean"}
            ]
        })
    );
}

#[tokio::test]
async fn missing_and_unknown_fields_are_reported_where_they_are() {
    let observation = run(json!({"town": "Oslo"})).await;
    let (message, details) = message_and_details(&observation);
    assert_eq!(
        message,
        "unknown field `town`, expected one of `city`, `days`, `units`, `options`; missing field `city`"
    );
    assert_eq!(details["field"], "town");
    assert_eq!(
        details["schema"]["properties"]["city"],
        json!({"type": "string", "minLength": 1})
    );
    assert_eq!(details["errors"][1]["field"], "city");

    let observation =
        run(json!({"city": "Oslo", "options": {"hourly": true, "daily": true}})).await;
    let (message, details) = message_and_details(&observation);
    assert_eq!(
        message,
        "`options`: unknown field `daily`, expected `hourly`"
    );
    assert_eq!(details["field"], "options.daily");
    assert_eq!(
        details["schema"],
        json!({"type": "object", "properties": {"hourly": {"type": "boolean"}}, "additionalProperties": false})
    );
}

#[tokio::test]
async fn a_value_that_breaks_the_schema_is_not_echoed() {
    let secret = "correct-horse-0123456789abcdef";
    let observation = run(json!({"city": 5, "days": secret, "units": secret})).await;
    assert_eq!(observation.error_kind(), Some("invalid_arguments"));
    let (message, details) = message_and_details(&observation);
    assert!(!message.contains("0123456789abcdef"), "{message}");
    assert!(
        !details.to_string().contains("0123456789abcdef"),
        "{details}"
    );
    assert_eq!(
        message,
        "`city`: invalid type: integer, expected a string; `days`: invalid type: string, expected an integer; `units`: invalid value, expected `metric` or `imperial`"
    );
}

#[tokio::test]
async fn an_integral_float_is_an_integer() {
    let observation = run(json!({"city": "Oslo", "days": 3.0})).await;
    assert_eq!(
        observation.content(),
        Some(r#"{"city":"Oslo","days":3,"session":"s-9"}"#)
    );
    let report = runtime()
        .execute(
            &Session::new("s-9"),
            vec![ToolCall::new(
                "c",
                "get_forecast",
                r#"{"city": "Oslo", "days": 3.5}"#,
            )],
        )
        .await;
    assert_eq!(
        report.observations()[0]
            .error()
            .map(|error| error.message()),
        Some("`days`: invalid type: floating point, expected an integer")
    );
}

/// Looks up an order: the same parameters as the dynamic tool built from its schema.
#[tool_runtime::tool(read_only)]
async fn lookup(
    /// The order id.
    order_id: String,
    /// How many lines, 1 to 10.
    #[schemars(range(min = 1, max = 10))]
    lines: Option<u32>,
    /// Where.
    address: Address,
) -> String {
    format!("{order_id} {lines:?} {}", address.city)
}

/// An address.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub struct Address {
    /// City.
    pub city: String,
}

#[tokio::test]
async fn a_dynamic_tool_answers_like_a_tool_with_the_same_schema() {
    let schema = lookup::spec().input_schema().clone();
    let dynamic = DynamicTool::builder("lookup_dynamic", "The same.", schema)
        .read_only()
        .handler(|_, _| async { Ok(json!("ran")) })
        .build();
    let built = Runtime::builder(Remote)
        .inventory(false)
        .tools(tool_runtime::tools![lookup])
        .dynamic_tool(dynamic)
        .and_then(tool_runtime::RuntimeBuilder::build);
    let runtime = match built {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let bad_calls = [
        json!({"address": {"city": "Oslo"}}),
        json!({"order_id": "A-1", "address": {"city": "Oslo"}, "extra": 1}),
        json!({"order_id": "A-1", "address": {"city": "Oslo", "zip": "0150"}}),
        json!({"order_id": "A-1", "address": {}}),
        json!({"order_id": "A-1", "lines": 0, "address": {"city": "Oslo"}}),
        json!({"order_id": "A-1", "lines": 11.0, "address": {"city": "Oslo"}}),
        json!([]),
    ];
    for arguments in bad_calls {
        let report = runtime
            .execute(
                &Session::new("s"),
                vec![
                    ToolCall::new("a", "lookup", arguments.clone()),
                    ToolCall::new("b", "lookup_dynamic", arguments.clone()),
                ],
            )
            .await;
        let (tool, dynamic) = (&report.observations()[0], &report.observations()[1]);
        assert_eq!(tool.error_kind(), Some("invalid_arguments"), "{arguments}");
        assert_eq!(
            message_and_details(tool),
            message_and_details(dynamic),
            "{arguments}"
        );
    }
    // A wrong type: serde's message for the tool names the Rust type and shows the value,
    // the validator's names the schema's types and shows no value; the details are the same.
    let arguments = json!({"order_id": "A-1", "lines": [], "address": {"city": "Oslo"}});
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![
                ToolCall::new("a", "lookup", arguments.clone()),
                ToolCall::new("b", "lookup_dynamic", arguments),
            ],
        )
        .await;
    let (tool, dynamic) = (
        message_and_details(&report.observations()[0]),
        message_and_details(&report.observations()[1]),
    );
    assert_eq!(tool.0, "`lines`: invalid type: sequence, expected u32");
    assert_eq!(
        dynamic.0,
        "`lines`: invalid type: array, expected u32 or null"
    );
    assert_eq!(tool.1, dynamic.1);
}

#[tokio::test]
async fn free_form_and_composed_schemas_take_their_valid_calls() {
    let free = DynamicTool::builder("free", "Anything.", json!({"type": "object"}))
        .handler(|args, _| async move { Ok(args) })
        .build();
    let composed = DynamicTool::builder(
        "composed",
        "Both parts.",
        json!({
            "type": "object",
            "allOf": [
                {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"type": "object", "properties": {"b": {"type": "integer"}, "meta": {"type": "object"}}}
            ]
        }),
    )
    .handler(|args, _| async move { Ok(args) })
    .build();
    let built = Runtime::builder(Remote)
        .inventory(false)
        .dynamic_tool(free)
        .and_then(|builder| builder.dynamic_tool(composed))
        .and_then(tool_runtime::RuntimeBuilder::build);
    let runtime = match built {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![
                ToolCall::new("1", "free", json!({"anything": [1, {"x": true}]})),
                ToolCall::new("2", "composed", json!({"a": "x", "b": 2, "meta": {"k": 1}})),
                ToolCall::new("3", "composed", json!({"a": "x", "c": 3})),
            ],
        )
        .await;
    let observations = report.observations();
    assert_eq!(
        observations[0].content(),
        Some(r#"{"anything":[1,{"x":true}]}"#)
    );
    assert_eq!(
        observations[1].content(),
        Some(r#"{"a":"x","b":2,"meta":{"k":1}}"#)
    );
    assert_eq!(
        observations[2].error().map(|error| error.message()),
        Some("unknown field `c`, expected one of `a`, `b`, `meta`")
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
    let schema = tool_runtime::core::Tool::spec(&tool).input_schema().clone();
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
