//! Timeouts that really fire and retries only for transient failures, in virtual time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::Duration;

use tool_runtime::{RetryPolicy, RunContext, Runtime, Session, ToolCall, ToolError, tool, tools};

/// Counters the tools under test report to.
#[derive(Default)]
pub struct Counters {
    /// How many times `flaky` ran.
    flaky_runs: AtomicU32,
    /// How many times `closed` ran.
    closed_runs: AtomicU32,
    /// How many times `always_down` ran.
    down_runs: AtomicU32,
    /// How many times `slow` started.
    slow_starts: AtomicU32,
    /// Set when a `slow` attempt's future was dropped.
    slow_dropped: Arc<AtomicBool>,
}

struct DropFlag(Arc<AtomicBool>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Fails transiently `failures` times, then succeeds.
#[tool(read_only)]
async fn flaky(ctx: RunContext<Counters>, failures: u32) -> Result<String, ToolError> {
    let run = ctx.deps().flaky_runs.fetch_add(1, Ordering::SeqCst) + 1;
    if run <= failures {
        return Err(ToolError::transient(format!("overloaded (run {run})")));
    }
    Ok(format!("ok after {run} runs"))
}

/// Fails with a business error.
#[tool(read_only)]
async fn closed(ctx: RunContext<Counters>) -> Result<String, ToolError> {
    ctx.deps().closed_runs.fetch_add(1, Ordering::SeqCst);
    Err(ToolError::failed("order A-1 is closed"))
}

/// Always fails transiently.
#[tool(read_only)]
async fn always_down(ctx: RunContext<Counters>) -> Result<String, ToolError> {
    ctx.deps().down_runs.fetch_add(1, Ordering::SeqCst);
    Err(ToolError::transient("backend down"))
}

/// Sleeps far past its timeout.
#[tool(read_only, timeout = "1s")]
async fn slow(ctx: RunContext<Counters>) -> String {
    ctx.deps().slow_starts.fetch_add(1, Ordering::SeqCst);
    let _flag = DropFlag(Arc::clone(&ctx.deps().slow_dropped));
    tokio::time::sleep(Duration::from_secs(3600)).await;
    "finished".to_owned()
}

fn runtime(policy: RetryPolicy) -> Runtime<Counters> {
    match Runtime::builder(Counters::default())
        .tools(tools![flaky, closed, always_down, slow])
        .retry(policy)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

fn exact_policy() -> RetryPolicy {
    RetryPolicy::attempts(4)
        .with_initial_delay(Duration::from_millis(100))
        .with_multiplier(2.0)
        .with_jitter(false)
}

#[tokio::test(start_paused = true)]
async fn a_timeout_fires_drops_the_future_and_says_after_how_long() {
    let runtime = runtime(exact_policy());
    let report = runtime
        .execute(&Session::new("s"), vec![ToolCall::new("t", "slow", "{}")])
        .await;
    let observation = &report.observations()[0];
    assert_eq!(observation.error_kind(), Some("timeout"));
    let error = observation
        .error()
        .map(|error| (error.message().to_owned(), error.details().cloned()));
    assert_eq!(
        error,
        Some((
            "the tool did not finish within 1s; it was stopped".to_owned(),
            Some(serde_json::json!({"timeout_ms": 1000}))
        ))
    );
    assert_eq!(observation.elapsed(), Duration::from_secs(1));
    assert!(
        runtime.deps().slow_dropped.load(Ordering::SeqCst),
        "the attempt's future was dropped"
    );
    assert_eq!(
        observation.attempts(),
        1,
        "timeouts are not retried by default"
    );
}

#[tokio::test(start_paused = true)]
async fn timeouts_are_retried_only_when_configured() {
    let runtime = runtime(exact_policy().with_retry_timeouts(true));
    let report = runtime
        .execute(&Session::new("s"), vec![ToolCall::new("t", "slow", "{}")])
        .await;
    assert_eq!(report.observations()[0].attempts(), 4);
    assert_eq!(runtime.deps().slow_starts.load(Ordering::SeqCst), 4);
    // Four 1 s attempts and backoff of 100 + 200 + 400 ms.
    assert_eq!(
        report.observations()[0].elapsed(),
        Duration::from_millis(4700)
    );
}

#[tokio::test(start_paused = true)]
async fn transient_failures_are_retried_with_exponential_backoff() {
    let runtime = runtime(exact_policy());
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![ToolCall::new("f", "flaky", r#"{"failures":2}"#)],
        )
        .await;
    let observation = &report.observations()[0];
    assert_eq!(observation.content(), Some("ok after 3 runs"));
    assert_eq!(observation.attempts(), 3);
    assert_eq!(runtime.deps().flaky_runs.load(Ordering::SeqCst), 3);
    assert_eq!(observation.elapsed(), Duration::from_millis(100 + 200));
}

#[tokio::test(start_paused = true)]
async fn a_failure_that_stays_transient_stops_at_the_attempt_limit() {
    let runtime = runtime(exact_policy());
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![ToolCall::new("d", "always_down", "{}")],
        )
        .await;
    let observation = &report.observations()[0];
    assert_eq!(observation.error_kind(), Some("execution_failed"));
    assert_eq!(observation.error().map(ToolError::is_retryable), Some(true));
    assert_eq!(observation.attempts(), 4);
    assert_eq!(runtime.deps().down_runs.load(Ordering::SeqCst), 4);
}

#[tokio::test(start_paused = true)]
async fn business_errors_and_invalid_arguments_are_never_retried() {
    let runtime = runtime(exact_policy());
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![
                ToolCall::new("c", "closed", "{}"),
                ToolCall::new("bad", "flaky", r#"{"failures":"two"}"#),
            ],
        )
        .await;
    assert_eq!(
        report.observations()[0].error_kind(),
        Some("execution_failed")
    );
    assert_eq!(report.observations()[0].attempts(), 1);
    assert_eq!(runtime.deps().closed_runs.load(Ordering::SeqCst), 1);
    assert_eq!(
        report.observations()[1].error_kind(),
        Some("invalid_arguments")
    );
    assert_eq!(report.observations()[1].attempts(), 0);
    assert_eq!(runtime.deps().flaky_runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn jittered_delays_stay_between_half_and_all_of_the_backoff() {
    let runtime = runtime(RetryPolicy::attempts(2).with_initial_delay(Duration::from_millis(1000)));
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![ToolCall::new("f", "flaky", r#"{"failures":1}"#)],
        )
        .await;
    let elapsed = report.observations()[0].elapsed();
    assert!(
        elapsed >= Duration::from_millis(500) && elapsed <= Duration::from_millis(1000),
        "{elapsed:?}"
    );
}
