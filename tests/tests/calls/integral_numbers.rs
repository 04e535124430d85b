//! A number sent for an integer parameter is judged as written, on its digits, not on the
//! `f64` it rounds to: `1.0`, `1e2`, `100.0` and `-0.0` (the integer 0) are integers; `1e-400`,
//! `0.99999999999999999` and `1.5` are not, and an integer beyond the parameter's type is
//! refused, never clamped. Whether a call is refused (a duplicate key, say) does not depend on
//! `1` versus `1.0`, and the idempotency key reads a number as validation does.

use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use serde_json::{Value, json};
use tool_runtime::dynamic::DynamicTool;
use tool_runtime::{Observation, RunContext, Runtime, Session, ToolCall, ToolError, tool, tools};

/// Deps of the tests: how many times the write ran.
#[derive(Default)]
pub struct Desk {
    writes: AtomicU32,
}

/// Takes numbers of every integer kind.
#[tool(read_only)]
async fn take(
    /// An unsigned count.
    n: Option<u32>,
    /// A signed offset.
    i: Option<i64>,
    /// A large unsigned number.
    u: Option<u64>,
    /// A label.
    s: Option<String>,
) -> String {
    format!("{n:?} {i:?} {u:?} {s:?}")
}

/// Takes a bounded number: its schema is checked by the runtime as well.
#[tool(read_only)]
async fn bounded(
    /// Up to 12345678901234567.
    #[schemars(range(max = 12_345_678_901_234_567_u64))]
    n: u64,
) -> String {
    format!("{n}")
}

/// A write, run once per key.
#[tool(stateful)]
async fn record(
    ctx: RunContext<Desk>,
    /// The number to record.
    n: u64,
) -> Result<Value, ToolError> {
    let run = ctx.deps().writes.fetch_add(1, Ordering::SeqCst) + 1;
    Ok(json!({ "run": run, "n": n }))
}

fn runtime() -> Runtime<Desk> {
    let schema = json!({
        "type": "object",
        "properties": { "days": { "type": "integer" }, "ratio": { "type": "number" } },
        "additionalProperties": false
    });
    let dynamic = DynamicTool::builder("forecast", "Days ahead.", schema)
        .read_only()
        .handler(|arguments, _| async move { Ok(arguments) })
        .build();
    let built = Runtime::builder(Desk::default())
        .inventory(false)
        .tools(tools![take, bounded, record])
        .dynamic_tool(dynamic)
        .and_then(tool_runtime::RuntimeBuilder::build);
    match built {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

async fn call_on(
    runtime: &Runtime<Desk>,
    name: &str,
    arguments: impl Into<tool_runtime::Arguments>,
) -> Observation {
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![ToolCall::new("c", name, arguments)],
        )
        .await;
    report.observations()[0].clone()
}

async fn call(name: &str, arguments: impl Into<tool_runtime::Arguments>) -> Observation {
    call_on(&runtime(), name, arguments).await
}

/// What the call answered: its content, or its error's kind and message.
fn answer(observation: &Observation) -> String {
    match observation.error() {
        Some(error) => format!(
            "{}: {}",
            observation.error_kind().unwrap_or_default(),
            error.message()
        ),
        None => observation.content().unwrap_or_default().to_owned(),
    }
}

async fn take_text(text: &str) -> String {
    answer(&call("take", text).await)
}

#[tokio::test]
async fn a_number_that_only_rounds_to_an_integer_is_refused() {
    assert_eq!(
        take_text(r#"{"i": 1e-400}"#).await,
        "invalid_arguments: `i`: invalid value: number `1e-400` is not an integer, expected i64"
    );
    assert_eq!(
        take_text(r#"{"n": 0.99999999999999999}"#).await,
        "invalid_arguments: `n`: invalid value: number `0.99999999999999999` is not an integer, expected u32"
    );
    assert_eq!(
        take_text(r#"{"n": 1.5}"#).await,
        "invalid_arguments: `n`: invalid value: number `1.5` is not an integer, expected u32"
    );
    let observation = call("take", r#"{"i": 1e-400}"#).await;
    let error = observation.error();
    assert_eq!(
        error
            .and_then(|error| error.details())
            .map(|d| d["field"].clone()),
        Some(json!("i"))
    );
    assert!(error.and_then(|error| error.hint()).is_some());
}

#[tokio::test]
async fn an_integer_beyond_the_type_is_refused_not_clamped() {
    assert_eq!(
        take_text(r#"{"i": -9223372036854775809}"#).await,
        "invalid_arguments: `i`: invalid value: number `-9223372036854775809` is out of range, expected i64"
    );
    assert_eq!(
        take_text(r#"{"i": -9223372036854775809.0}"#).await,
        "invalid_arguments: `i`: invalid value: number `-9223372036854775809.0` is out of range, expected i64"
    );
    assert_eq!(
        take_text(r#"{"u": 18446744073709551616}"#).await,
        "invalid_arguments: `u`: invalid value: number `18446744073709551616` is out of range, expected u64"
    );
    assert_eq!(
        take_text(r#"{"u": 1e300}"#).await,
        "invalid_arguments: `u`: invalid value: number `1e300` is out of range, expected u64"
    );
    // An integer serde reads exactly, beyond the type: serde's own words.
    assert_eq!(
        take_text(r#"{"i": 9223372036854775808}"#).await,
        "invalid_arguments: `i`: invalid value: integer `9223372036854775808`, expected i64"
    );
}

#[tokio::test]
async fn an_integer_written_as_a_float_is_that_integer() {
    for (text, expected) in [
        (r#"{"i": 1.0}"#, "None Some(1) None None"),
        (r#"{"i": 1e2}"#, "None Some(100) None None"),
        (r#"{"i": 100.0}"#, "None Some(100) None None"),
        (r#"{"i": 1.0e0}"#, "None Some(1) None None"),
        (r#"{"i": 1000e-1}"#, "None Some(100) None None"),
        (r#"{"i": -2.50e1}"#, "None Some(-25) None None"),
        // -0.0 (and -0) is the integer 0.
        (r#"{"i": -0.0, "n": -0}"#, "Some(0) Some(0) None None"),
        (r#"{"n": 0e-400}"#, "Some(0) None None None"),
        // Exact beyond 2^53, where the f64s are further apart than 1.
        (
            r#"{"i": 9223372036854775807.0}"#,
            "None Some(9223372036854775807) None None",
        ),
        (
            r#"{"i": -9223372036854775808.0}"#,
            "None Some(-9223372036854775808) None None",
        ),
        (
            r#"{"u": 18446744073709551615.0}"#,
            "None None Some(18446744073709551615) None",
        ),
        (
            r#"{"u": 12345678901234567.0}"#,
            "None None Some(12345678901234567) None",
        ),
    ] {
        assert_eq!(take_text(text).await, expected, "{text}");
    }
}

#[tokio::test]
async fn a_duplicate_key_is_refused_however_the_numbers_are_written() {
    let plain = take_text(r#"{"n": 1, "s": "a", "s": "b"}"#).await;
    let float = take_text(r#"{"n": 1.0, "s": "a", "s": "b"}"#).await;
    assert_eq!(plain, "invalid_arguments: duplicate field `s`");
    assert_eq!(float, plain);
    assert_eq!(
        take_text(r#"{"s": "a", "n": 1.0, "n": 2.0}"#).await,
        "invalid_arguments: duplicate field `n`"
    );
}

#[tokio::test]
async fn a_value_from_code_keeps_the_rule_of_its_f64() {
    // A value has no digits left to read: a float with no fraction is an integer while it is
    // exact (below 2^53).
    assert_eq!(
        answer(&call("take", json!({"i": 9_007_199_254_740_991.0_f64})).await),
        "None Some(9007199254740991) None None"
    );
    assert_eq!(
        answer(&call("take", json!({"i": -0.0_f64})).await),
        "None Some(0) None None"
    );
    assert_eq!(
        answer(&call("take", json!({"u": 9_007_199_254_740_992.0_f64})).await),
        "invalid_arguments: `u`: invalid value: float `9007199254740992.0` is beyond 2^53, where a float no longer stands for one integer, expected u64"
    );
    assert_eq!(
        answer(&call("take", json!({"n": 1.5})).await),
        "invalid_arguments: `n`: invalid value: number `1.5` is not an integer, expected u32"
    );
}

#[tokio::test]
async fn the_schema_check_reads_the_number_as_written() {
    assert_eq!(
        answer(&call("bounded", r#"{"n": 12345678901234567.0}"#).await),
        "12345678901234567"
    );
    let observation = call("bounded", r#"{"n": 12345678901234568.0}"#).await;
    assert_eq!(observation.error_kind(), Some("invalid_arguments"));
}

#[tokio::test]
async fn a_dynamic_tool_reads_the_number_as_written() {
    let forecast = |text: &'static str| async move { answer(&call("forecast", text).await) };
    assert_eq!(forecast(r#"{"days": 3.0}"#).await, r#"{"days":3}"#);
    assert_eq!(
        forecast(r#"{"days": 12345678901234567.0, "ratio": 2.0}"#).await,
        r#"{"days":12345678901234567,"ratio":2.0}"#
    );
    assert_eq!(
        forecast(r#"{"days": 1e-400}"#).await,
        "invalid_arguments: `days`: invalid value: the number written is not an integer, expected an integer"
    );
    assert_eq!(
        forecast(r#"{"days": -9223372036854775809}"#).await,
        "invalid_arguments: `days`: invalid value: the integer written is out of range, expected an integer of at most 64 bits"
    );
    // A number the schema allows any of is left as it is.
    assert_eq!(forecast(r#"{"ratio": 1e-400}"#).await, r#"{"ratio":0.0}"#);
    // A fraction the validator sees: its words, as for any schema.
    assert_eq!(
        forecast(r#"{"days": 3.5}"#).await,
        "invalid_arguments: `days`: invalid type: floating point, expected an integer"
    );
}

#[tokio::test]
async fn the_idempotency_key_reads_the_number_as_validation_does() {
    let runtime = runtime();
    let first = call_on(&runtime, "record", r#"{"n": 12345678901234567.0}"#).await;
    assert_eq!(first.content(), Some(r#"{"run":1,"n":12345678901234567}"#));
    // The same integer, written otherwise: the same call.
    let same = call_on(&runtime, "record", r#"{"n": 12345678901234567}"#).await;
    assert!(same.replayed());
    let same = call_on(&runtime, "record", r#"{"n": 1234567890123456.7e1}"#).await;
    assert!(same.replayed());
    // Another integer with the same f64: another call.
    let other = call_on(&runtime, "record", r#"{"n": 12345678901234568.0}"#).await;
    assert!(!other.replayed());
    assert_eq!(other.content(), Some(r#"{"run":2,"n":12345678901234568}"#));
}

fn executor() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(executor) => executor,
        Err(error) => panic!("{error}"),
    }
}

#[test]
fn every_integer_is_judged_on_its_digits() {
    let runtime = runtime();
    let executor = executor();
    let take = |text: String| {
        executor.block_on(async { answer(&call_on(&runtime, "take", text.as_str()).await) })
    };
    // All of i64, and around ±2^53, where an f64 no longer holds every integer.
    let integers = prop_oneof![
        any::<i64>(),
        Just(i64::MIN),
        Just(i64::MAX),
        Just(0_i64),
        -(1_i64 << 54)..(1_i64 << 54),
    ];
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    let result = runner.run(&integers, |i| {
        let expected = format!("None Some({i}) None None");
        let mut forms = vec![
            format!("{i}"),
            format!("{i}.0"),
            format!("{i}.000"),
            format!("{i}e0"),
            format!("{i}.0E+0"),
        ];
        if i != 0 {
            // Ten times i, times a tenth (`00e-1` is not JSON).
            forms.push(format!("{i}0e-1"));
        }
        for form in forms {
            prop_assert_eq!(take(format!(r#"{{"i": {form}}}"#)), expected.clone(), "{}", form);
        }
        let half = format!("{i}.5");
        prop_assert_eq!(
            take(format!(r#"{{"i": {half}}}"#)),
            format!(
                "invalid_arguments: `i`: invalid value: number `{half}` is not an integer, expected i64"
            )
        );
        Ok(())
    });
    if let Err(error) = result {
        panic!("{error}");
    }
}
