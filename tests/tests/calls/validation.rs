//! What the schema declares, the runtime enforces: bounds, lengths, patterns, unique items and
//! closed nested objects are checked before a `#[tool]` runs, and a call its canonical schema
//! refuses never runs. An integral float (`2.0`) is an integer, as JSON Schema says.

use std::collections::BTreeSet;

use proptest::prelude::*;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_runtime::{Observation, Runtime, Session, ToolCall, tool, tools};

/// Deps of the validation tests.
pub struct Desk;

/// A postal address; serde alone would drop a field it does not know.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Address {
    /// Street and number.
    pub street: String,
    /// City.
    pub city: String,
}

/// A rectangle.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct RectBody {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
}

/// A shape, internally tagged.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Shape {
    /// A circle.
    Circle {
        /// Radius.
        radius: f64,
    },
    /// A rectangle.
    Rect(RectBody),
}

/// Books seats.
#[tool(read_only)]
async fn book(
    /// Seats, 1 to 50.
    #[schemars(range(min = 1, max = 50))]
    seats: u32,
    /// Name on the booking.
    #[schemars(length(min = 1, max = 20))]
    name: String,
    /// Booking code: `A-` and digits.
    #[schemars(regex(pattern = r"^A-\d+$"))]
    code: String,
    /// Tags, each once.
    tags: BTreeSet<String>,
    /// Where to send the tickets.
    address: Address,
) -> String {
    format!(
        "{seats} for {name} ({code}) {tags:?} to {}, {}",
        address.street, address.city
    )
}

/// Draws a shape.
#[tool(read_only)]
async fn draw(
    /// The shape.
    shape: Shape,
) -> String {
    match shape {
        Shape::Circle { radius } => format!("circle {radius}"),
        Shape::Rect(RectBody { width, height }) => format!("rect {width}x{height}"),
    }
}

/// Counts things: integers only.
#[tool(read_only)]
async fn count(
    /// How many.
    n: u32,
    /// Sizes.
    sizes: Vec<u8>,
    /// An optional limit.
    limit: Option<i64>,
    /// A ratio, any number.
    ratio: Option<f64>,
) -> String {
    format!("{n} {sizes:?} {limit:?} {ratio:?}")
}

fn runtime() -> Runtime<Desk> {
    match Runtime::builder(Desk)
        .inventory(false)
        .tools(tools![book, draw, count])
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

async fn call(name: &str, arguments: impl Into<tool_runtime::Arguments>) -> Observation {
    let report = runtime()
        .execute(
            &Session::new("s"),
            vec![ToolCall::new("c", name, arguments)],
        )
        .await;
    report.observations()[0].clone()
}

fn error_of(observation: &Observation) -> (Option<&str>, Option<&str>, Option<Value>) {
    (
        observation.error_kind(),
        observation.error().map(|error| error.message()),
        observation
            .error()
            .and_then(|error| error.details().cloned()),
    )
}

fn booking() -> Value {
    json!({
        "seats": 2,
        "name": "Ada",
        "code": "A-17",
        "tags": ["aisle", "quiet"],
        "address": {"street": "1 Main St", "city": "Oslo"}
    })
}

fn booking_with(pointer: &str, value: Value) -> Value {
    let mut arguments = booking();
    match arguments.pointer_mut(pointer) {
        Some(slot) => *slot = value,
        None => {
            let (parent, key) = pointer.rsplit_once('/').unwrap_or_default();
            if let Some(Value::Object(map)) = arguments.pointer_mut(parent) {
                map.insert(key.to_owned(), value);
            }
        }
    }
    arguments
}

#[tokio::test]
async fn a_valid_call_runs() {
    let observation = call("book", booking()).await;
    assert_eq!(
        observation.content(),
        Some(r#"2 for Ada (A-17) {"aisle", "quiet"} to 1 Main St, Oslo"#)
    );
}

#[tokio::test]
async fn declared_bounds_lengths_and_patterns_are_enforced() {
    let cases = [
        (
            booking_with("/seats", json!(0)),
            "`seats`: invalid value, expected at least 1",
            json!({"field": "seats", "schema": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 50, "description": "Seats, 1 to 50."}}),
        ),
        (
            booking_with("/seats", json!(51)),
            "`seats`: invalid value, expected at most 50",
            json!({"field": "seats", "schema": {"type": "integer", "format": "uint32", "minimum": 1, "maximum": 50, "description": "Seats, 1 to 50."}}),
        ),
        (
            booking_with("/name", json!("")),
            "`name`: invalid length, expected at least 1 character",
            json!({"field": "name", "schema": {"type": "string", "minLength": 1, "maxLength": 20, "description": "Name on the booking."}}),
        ),
        (
            booking_with("/name", json!("x".repeat(21))),
            "`name`: invalid length, expected at most 20 characters",
            json!({"field": "name", "schema": {"type": "string", "minLength": 1, "maxLength": 20, "description": "Name on the booking."}}),
        ),
        (
            booking_with("/code", json!("B-1")),
            "`code`: invalid value, expected a string matching `^A-\\d+$`",
            json!({"field": "code", "schema": {"type": "string", "pattern": "^A-\\d+$", "description": "Booking code: `A-` and digits."}}),
        ),
    ];
    for (arguments, message, details) in cases {
        let observation = call("book", arguments).await;
        assert_eq!(
            error_of(&observation),
            (Some("invalid_arguments"), Some(message), Some(details))
        );
        assert_eq!(observation.attempts(), 0, "the tool did not run");
    }
}

#[tokio::test]
async fn a_set_with_a_repeated_item_is_refused() {
    let observation = call(
        "book",
        booking_with("/tags", json!(["aisle", "quiet", "aisle"])),
    )
    .await;
    assert_eq!(
        error_of(&observation),
        (
            Some("invalid_arguments"),
            Some("`tags`: invalid value, expected unique items (items 0 and 2 are equal)"),
            Some(
                json!({"field": "tags", "schema": {"type": "array", "uniqueItems": true, "items": {"type": "string"}, "description": "Tags, each once."}})
            )
        )
    );
}

#[tokio::test]
async fn an_unknown_field_in_a_nested_struct_is_refused_with_its_path() {
    let observation = call("book", booking_with("/address/extra", json!("x"))).await;
    let (kind, message, details) = error_of(&observation);
    assert_eq!(kind, Some("invalid_arguments"));
    assert_eq!(
        message,
        Some("`address`: unknown field `extra`, expected `street` or `city`")
    );
    let details = details.unwrap_or_default();
    assert_eq!(details["field"], "address.extra");
    assert_eq!(
        details["schema"]["properties"],
        json!({"street": {"type": "string", "description": "Street and number."}, "city": {"type": "string", "description": "City."}})
    );
}

#[tokio::test]
async fn arguments_as_a_value_are_checked_the_same() {
    let text = call("book", booking_with("/seats", json!(0)).to_string()).await;
    let value = call("book", booking_with("/seats", json!(0))).await;
    assert_eq!(error_of(&text), error_of(&value));
    assert!(text.error().is_some());
}

#[tokio::test]
async fn an_internally_tagged_struct_variant_runs_and_refuses_extra_fields() {
    let observation = call(
        "draw",
        json!({"shape": {"type": "rect", "width": 3, "height": 4}}),
    )
    .await;
    assert_eq!(observation.content(), Some("rect 3x4"));
    let observation = call(
        "draw",
        json!({"shape": {"type": "rect", "width": 3, "height": 4, "depth": 5}}),
    )
    .await;
    let (kind, message, details) = error_of(&observation);
    assert_eq!(kind, Some("invalid_arguments"));
    assert_eq!(
        message,
        Some("`shape`: unknown field `depth`, expected one of `type`, `width`, `height`")
    );
    assert_eq!(details.unwrap_or_default()["field"], "shape.depth");
    let observation = call("draw", json!({"shape": {"type": "square", "side": 1}})).await;
    assert_eq!(
        error_of(&observation).1,
        Some("`shape.type`: unknown variant `square`, expected `circle` or `rect`")
    );
}

#[tokio::test]
async fn a_value_that_breaks_the_schema_is_not_echoed() {
    let secret = "correct-horse-0123456789abcdef";
    for arguments in [
        booking_with("/code", json!(secret)),
        booking_with("/name", json!(format!("{secret}{secret}"))),
        booking_with("/tags", json!([secret, secret])),
    ] {
        let observation = call("book", arguments).await;
        assert_eq!(observation.error_kind(), Some("invalid_arguments"));
        let error = observation.error().map(|error| {
            format!(
                "{} {:?} {}",
                error.message(),
                error.hint(),
                error.details().cloned().unwrap_or_default()
            )
        });
        let error = error.unwrap_or_default();
        assert!(!error.contains("0123456789abcdef"), "{error}");
    }
}

#[tokio::test]
async fn integral_floats_are_integers() {
    let text = r#"{"n": 2.0, "sizes": [1.0, 2e0, 3], "limit": -4.0, "ratio": 1.0}"#;
    assert_eq!(
        call("count", text).await.content(),
        Some("2 [1, 2, 3] Some(-4) Some(1.0)")
    );
    let value = json!({"n": 2.0, "sizes": [1.0], "limit": null});
    assert_eq!(
        call("count", value).await.content(),
        Some("2 [1] None None")
    );
    let nested = json!({"shape": {"type": "rect", "width": 3.0, "height": 4}});
    assert_eq!(call("draw", nested).await.content(), Some("rect 3x4"));
}

#[tokio::test]
async fn a_float_with_a_fraction_is_still_refused() {
    let observation = call("count", r#"{"n": 1.5, "sizes": []}"#).await;
    assert_eq!(
        error_of(&observation).1,
        Some("`n`: invalid value: number `1.5` is not an integer, expected u32")
    );
    let observation = call("count", r#"{"n": 2.0, "sizes": [1.0, 2.5]}"#).await;
    assert_eq!(
        error_of(&observation).1,
        Some("`sizes[1]`: invalid value: number `2.5` is not an integer, expected u8")
    );
    let observation = call("count", r#"{"n": 300.0, "sizes": [256.0]}"#).await;
    assert_eq!(
        error_of(&observation).1,
        Some("`sizes[0]`: invalid value: integer `256`, expected u8")
    );
}

// ---------------------------------------------------------------------------------------------
// The property: the runtime runs a call exactly when the tool's canonical schema accepts it.

fn schema_of(name: &str) -> Value {
    match runtime().registry().get(name) {
        Some(tool) => tool.spec().input_schema().clone(),
        None => panic!("no tool {name}"),
    }
}

fn mutated_booking() -> impl Strategy<Value = Value> {
    let pointer = prop_oneof![
        Just("/seats"),
        Just("/name"),
        Just("/code"),
        Just("/tags"),
        Just("/tags/0"),
        Just("/address"),
        Just("/address/city"),
        Just("/address/extra"),
        Just("/extra"),
    ];
    let value = prop_oneof![
        Just(json!(0)),
        Just(json!(1)),
        Just(json!(50)),
        Just(json!(51)),
        Just(json!(7.0)),
        Just(json!(7.5)),
        Just(json!("")),
        Just(json!("A-1")),
        Just(json!("B-1")),
        Just(json!("aisle")),
        Just(json!("x".repeat(21))),
        Just(json!(["a", "a"])),
        Just(json!(["a", "b"])),
        Just(json!([])),
        Just(json!({})),
        Just(json!({"street": "s", "city": "c"})),
        Just(Value::Null),
    ];
    proptest::collection::vec((pointer, value), 0..3).prop_map(|changes| {
        let mut arguments = booking();
        for (pointer, value) in changes {
            let (parent, key) = pointer.rsplit_once('/').unwrap_or_default();
            match arguments.pointer_mut(parent) {
                Some(Value::Object(map)) => {
                    map.insert(key.to_owned(), value);
                }
                Some(Value::Array(items)) if !items.is_empty() => items[0] = value,
                _ => {}
            }
        }
        arguments
    })
}

fn mutated_drawing() -> impl Strategy<Value = Value> {
    let shape = prop_oneof![
        Just(json!({"type": "rect", "width": 1, "height": 2})),
        Just(json!({"type": "rect", "width": 1.0, "height": 2})),
        Just(json!({"type": "rect", "width": 1})),
        Just(json!({"type": "rect", "width": 1, "height": 2, "radius": 1.0})),
        Just(json!({"type": "circle", "radius": 1.5})),
        Just(json!({"type": "circle", "radius": 1, "extra": true})),
        Just(json!({"type": "circle"})),
        Just(json!({"type": "square"})),
        Just(json!({"width": 1, "height": 2})),
        Just(json!("rect")),
    ];
    (shape, any::<bool>()).prop_map(|(shape, extra)| {
        let mut arguments = json!({ "shape": shape });
        if extra {
            arguments["more"] = json!(1);
        }
        arguments
    })
}

#[test]
fn a_call_runs_exactly_when_its_schema_accepts_it() {
    let runtime = runtime();
    let executor = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(executor) => executor,
        Err(error) => panic!("{error}"),
    };
    let validators: Vec<(&str, jsonschema::Validator)> = ["book", "draw"]
        .into_iter()
        .map(
            |name| match jsonschema::draft202012::new(&schema_of(name)) {
                Ok(validator) => (name, validator),
                Err(error) => panic!("{error}"),
            },
        )
        .collect();
    let calls = prop_oneof![
        mutated_booking().prop_map(|arguments| (0_usize, arguments)),
        mutated_drawing().prop_map(|arguments| (1_usize, arguments)),
    ];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&calls, |(tool, arguments)| {
        let (name, validator) = &validators[tool];
        let report = executor.block_on(runtime.execute(
            &Session::new("s"),
            vec![ToolCall::new("c", *name, arguments.clone())],
        ));
        let observation = &report.observations()[0];
        let accepted = validator.is_valid(&arguments);
        prop_assert_eq!(
            observation.is_success(),
            accepted,
            "{} {}: {:?}",
            name,
            arguments,
            observation.error().map(|error| error.message().to_owned())
        );
        if !accepted {
            prop_assert_eq!(observation.error_kind(), Some("invalid_arguments"));
        }
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
}
