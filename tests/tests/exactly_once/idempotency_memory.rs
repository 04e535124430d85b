//! The memory store through the runtime: a copy waiting for a write that its timeout stops is
//! woken by the abandoned claim itself (not by a poll), and told `outcome_unknown` at once.
//! A repeat arriving later is told so on every store (`layer.rs`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use tests::report::only;
use tokio::time::Instant;
use tool_runtime::idempotency::Idempotency;
use tool_runtime::{RetryPolicy, RunContext, Runtime, Session, ToolCall, tool, tools};

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
    .idempotency(Idempotency::default().ttl(Duration::from_secs(60)))
    .build();
    match runtime {
        Ok(runtime) => (runtime, started),
        Err(error) => panic!("{error}"),
    }
}

fn call(id: &str) -> [ToolCall; 1] {
    [ToolCall::new(id, "slow_write", json!({ "millis": 200 }))]
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
    assert_eq!(only(&first).error_kind(), Some("timeout"));
    assert_eq!(
        only(&copy).error_kind(),
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
