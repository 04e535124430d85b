//! Property: whatever a model sends in a turn, every call is answered exactly once, in call
//! order, and nothing panics.

use std::collections::HashSet;

use proptest::prelude::*;
use tool_runtime::{Limits, RetryPolicy, Runtime, Session, ToolCall, ToolError, tool, tools};

/// Deps of the property tests.
pub struct Desk;

/// Reads a value.
#[tool(read_only)]
async fn read(key: String, limit: Option<u8>) -> String {
    tokio::task::yield_now().await;
    format!("{key}:{limit:?}")
}

/// Writes a value.
#[tool(mutates_workspace)]
async fn write(key: String, value: i64) -> String {
    format!("{key}={value}")
}

/// Panics on odd numbers.
#[tool(read_only)]
async fn fragile(n: u32) -> u32 {
    assert!(n.is_multiple_of(2), "odd");
    n
}

/// Fails transiently on multiples of three.
#[tool(read_only)]
async fn flaky(n: u32) -> Result<u32, ToolError> {
    if n.is_multiple_of(3) {
        return Err(ToolError::transient("try later"));
    }
    Ok(n)
}

fn arguments() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("{}".to_owned()),
        Just(String::new()),
        Just("null".to_owned()),
        Just("[1,2]".to_owned()),
        Just("{\"key\":".to_owned()),
        (any::<String>(), proptest::option::of(any::<u8>()))
            .prop_map(|(key, limit)| serde_json::json!({"key": key, "limit": limit}).to_string()),
        (any::<String>(), any::<i64>())
            .prop_map(|(key, value)| serde_json::json!({"key": key, "value": value}).to_string()),
        any::<u32>().prop_map(|n| serde_json::json!({"n": n}).to_string()),
        any::<u32>().prop_map(|n| serde_json::json!({"n": n, "extra": true}).to_string()),
        (1_usize..200).prop_map(|depth| format!(
            "{{\"key\":{}\"x\"{}}}",
            "[".repeat(depth),
            "]".repeat(depth)
        )),
        any::<String>(),
    ]
}

fn calls() -> impl Strategy<Value = Vec<ToolCall>> {
    let names = prop_oneof![
        Just("read"),
        Just("write"),
        Just("fragile"),
        Just("flaky"),
        Just("read_artifact"),
        Just("missing"),
        Just(""),
    ];
    proptest::collection::vec((names, arguments()), 0..24).prop_map(|calls| {
        calls
            .into_iter()
            .enumerate()
            .map(|(index, (name, args))| ToolCall::new(format!("call-{index}"), name, args))
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn every_call_is_answered_once_in_order(calls in calls()) {
        let runtime = match Runtime::builder(Desk)
            .tools(tools![read, write, fragile, flaky])
            .retry(RetryPolicy::attempts(2))
            .limits(Limits::default().with_max_concurrency(4))
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => panic!("{error}"),
        };
        let executor = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build();
        let Ok(executor) = executor else { panic!("executor") };
        let ids: Vec<String> = calls.iter().map(|call| call.id.to_string()).collect();
        let report = executor.block_on(runtime.execute(&Session::new("p"), calls));

        let answered: Vec<String> = report.observations().iter().map(|o| o.call_id().to_string()).collect();
        prop_assert_eq!(&answered, &ids);

        let mut batched: HashSet<String> = HashSet::new();
        for batch in report.batches() {
            prop_assert!(!batch.calls().is_empty());
            for id in report.batch_call_ids(batch) {
                prop_assert!(batched.insert(id.to_owned()), "{} is in two batches", id);
            }
        }
        for observation in report.observations() {
            let ran = observation.attempts() > 0;
            prop_assert_eq!(ran, batched.contains(observation.call_id()));
            prop_assert_eq!(observation.batch().is_some(), ran);
            if observation.is_success() {
                prop_assert!(ran);
            }
        }
    }
}
