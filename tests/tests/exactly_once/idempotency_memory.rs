//! The memory store through the runtime: a write stopped mid-flight leaves an abandoned claim,
//! and a repeat is told so at once (`outcome_unknown`) instead of waiting for a run that no
//! longer exists.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::time::Instant;
use tool_runtime::{RetryPolicy, RunContext, Runtime, Session, ToolCall, TurnReport, tool, tools};

/// How often the write started.
#[derive(Default)]
pub struct Backend {
    started: Arc<AtomicU32>,
}

/// A write that may outlast its timeout.
#[tool(stateful, timeout = "50ms")]
async fn slow_write(
    ctx: RunContext<Backend>,
    /// How long it takes, in milliseconds.
    millis: u64,
) -> u32 {
    ctx.deps().started.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    1
}

/// The default memory store and wait (10 s); a 60 s window.
fn build() -> (Runtime<Backend>, Arc<AtomicU32>) {
    let started = Arc::new(AtomicU32::new(0));
    let runtime = Runtime::builder(Backend {
        started: Arc::clone(&started),
    })
    .inventory(false)
    .tools(tools![slow_write])
    .retry(RetryPolicy::none())
    .idempotency_ttl(Duration::from_secs(60))
    .build();
    match runtime {
        Ok(runtime) => (runtime, started),
        Err(error) => panic!("{error}"),
    }
}

fn call(id: &str) -> [ToolCall; 1] {
    [ToolCall::new(id, "slow_write", json!({ "millis": 200 }))]
}

fn kind(report: &TurnReport) -> Option<&str> {
    report.observations()[0].error_kind()
}

#[tokio::test(start_paused = true)]
async fn a_repeat_of_a_write_stopped_by_its_timeout_is_told_its_outcome_is_unknown_at_once() {
    let (runtime, started) = build();
    let session = Session::new("s");
    let first = runtime.execute(&session, call("1")).await;
    assert_eq!(kind(&first), Some("timeout"));
    assert_eq!(started.load(Ordering::SeqCst), 1);

    let asked = Instant::now();
    let again = runtime.execute(&session, call("2")).await;
    let waited = asked.elapsed();
    assert_eq!(
        kind(&again),
        Some("outcome_unknown"),
        "answered after {waited:?}"
    );
    assert!(
        waited < Duration::from_millis(1),
        "answered at once, not after the wait: {waited:?}"
    );
    let error = again.observations()[0].error().expect("an error");
    assert!(
        error.message().contains("may have done its work"),
        "{}",
        error.message()
    );
    assert!(
        error.message().contains("idempotency window ends"),
        "says when it may run again: {}",
        error.message()
    );
    assert!(
        error.message().contains("in 59 s") || error.message().contains("in 60 s"),
        "{}",
        error.message()
    );
    let hint = error.hint().expect("a hint");
    assert!(hint.contains("took effect"), "{hint}");
    let left = error
        .details()
        .and_then(|details| details["expires_in_ms"].as_u64())
        .expect("expires_in_ms");
    assert!((59_000..=60_000).contains(&left), "{left} ms left");

    // The same call resumed under its own id does not take the claim over either, even long
    // after its run could still be going: that run may have done its work.
    for after in [0, 5] {
        tokio::time::advance(Duration::from_secs(after)).await;
        let resumed = runtime.execute(&session, call("1")).await;
        assert_eq!(kind(&resumed), Some("outcome_unknown"), "after {after} s");
    }
    assert_eq!(started.load(Ordering::SeqCst), 1, "nothing ran again");

    // The window over, the call runs again.
    tokio::time::advance(Duration::from_secs(55)).await;
    let later = runtime.execute(&session, call("3")).await;
    assert_eq!(
        kind(&later),
        Some("timeout"),
        "it ran (and timed out again)"
    );
    assert_eq!(started.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_copy_waiting_when_the_first_run_times_out_is_told_at_once() {
    let (runtime, started) = build();
    let session = Session::new("s");
    let copy = async {
        tokio::time::sleep(Duration::from_millis(10)).await;
        let asked = Instant::now();
        let report = runtime.execute(&session, call("2")).await;
        (report, asked.elapsed())
    };
    let (first, (copy, waited)) = tokio::join!(runtime.execute(&session, call("1")), copy);
    assert_eq!(kind(&first), Some("timeout"));
    assert_eq!(
        kind(&copy),
        Some("outcome_unknown"),
        "answered after {waited:?}"
    );
    // Woken when the first run was abandoned (its 50 ms timeout), not after the 10 s wait.
    assert!(
        waited <= Duration::from_millis(41),
        "woken when the claim was abandoned: {waited:?}"
    );
    assert_eq!(started.load(Ordering::SeqCst), 1);
}
