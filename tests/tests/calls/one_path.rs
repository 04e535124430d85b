//! One path for every call: the futures users spawn are `Send`; writes are repeated only when
//! that is safe; each call has its own time; nested calls obey the scheduler; cancellation is
//! checked before each call starts; nothing a tool or a setting does panics out of `execute`.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::time::Duration;

use tests::assert_send;
use tests::report::{kinds, one_call};
use tool_runtime::{
    BuildError, CancellationToken, Limits, RetryPolicy, RunContext, Runtime, Session, ToolCall,
    ToolError, tool,
};

/// What the tools under test report to.
#[derive(Default)]
pub struct Backend {
    /// How many times a write reached the backend.
    writes: AtomicU32,
    /// How many times a read reached the backend.
    reads: AtomicU32,
    /// Bodies started.
    started: AtomicU32,
    /// Calls inside a body right now, and the most seen at once.
    inside: AtomicUsize,
    most_inside: AtomicUsize,
}

impl Backend {
    fn enter(&self) -> Inside<'_> {
        let now = self.inside.fetch_add(1, Ordering::SeqCst) + 1;
        self.most_inside.fetch_max(now, Ordering::SeqCst);
        Inside(self)
    }
}

struct Inside<'a>(&'a Backend);

impl Drop for Inside<'_> {
    fn drop(&mut self) {
        self.0.inside.fetch_sub(1, Ordering::SeqCst);
    }
}

fn reset() -> ToolError {
    std::io::Error::from(std::io::ErrorKind::ConnectionReset).into()
}

/// Writes a row; the connection drops after the backend received it.
#[tool(stateful)]
async fn write_row(ctx: RunContext<Backend>) -> Result<String, ToolError> {
    ctx.deps().writes.fetch_add(1, Ordering::SeqCst);
    Err(reset())
}

/// Writes a row idempotently (the backend ignores a repeat).
#[tool(stateful, idempotent)]
async fn upsert_row(ctx: RunContext<Backend>) -> Result<String, ToolError> {
    ctx.deps().writes.fetch_add(1, Ordering::SeqCst);
    Err(reset())
}

/// Writes a row; the backend refused it before doing anything.
#[tool(stateful)]
async fn write_refused(ctx: RunContext<Backend>) -> Result<String, ToolError> {
    ctx.deps().writes.fetch_add(1, Ordering::SeqCst);
    Err(ToolError::transient("429 too many requests").safe_to_repeat())
}

/// Reads a row; the connection drops.
#[tool(read_only)]
async fn read_row(ctx: RunContext<Backend>) -> Result<String, ToolError> {
    ctx.deps().reads.fetch_add(1, Ordering::SeqCst);
    Err(reset())
}

/// Blocks its thread, as a tool calling a blocking client does.
#[tool(read_only)]
async fn block_thread(
    /// Milliseconds.
    millis: u64,
) -> String {
    std::thread::sleep(Duration::from_millis(millis));
    "done".to_owned()
}

/// Waits, with a short timeout.
#[tool(read_only, timeout = "100ms")]
async fn quick(
    /// Milliseconds.
    millis: u64,
) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    "quick".to_owned()
}

/// Waits, counting its start.
#[tool(read_only)]
async fn wait(ctx: RunContext<Backend>, millis: u64) -> String {
    ctx.deps().started.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(millis)).await;
    "waited".to_owned()
}

/// Must run alone: records how many calls are inside a body at once.
#[tool(exclusive)]
async fn exclusive_write(ctx: RunContext<Backend>) -> String {
    let _inside = ctx.deps().enter();
    tokio::time::sleep(Duration::from_millis(5)).await;
    "written".to_owned()
}

/// A read that reaches a tool that must run alone.
#[tool(read_only)]
async fn read_then_write(ctx: RunContext<Backend>) -> Result<String, ToolError> {
    let _inside = ctx.deps().enter();
    tokio::time::sleep(Duration::from_millis(5)).await;
    ctx.call_tool("exclusive_write", "{}")
        .await
        .map(|output| output.text().into_owned())
}

/// Runs alone and makes two nested writes at once.
#[tool(stateful)]
async fn two_writes(ctx: RunContext<Backend>) -> Result<String, ToolError> {
    let (a, b) = tokio::join!(
        ctx.call_tool("exclusive_write", "{}"),
        ctx.call_tool("exclusive_write", "{}")
    );
    Ok(format!("{} {}", a?.text(), b?.text()))
}

/// Returns a secret.
#[tool(read_only)]
async fn leak() -> String {
    "key sk-proj-abcdefghijklmnopqrstuvwx1234".to_owned()
}

/// Reads what `leak` returns, through a nested call, and says whether it saw a key (in a form
/// the redaction of its own output could not catch).
#[tool(read_only)]
async fn relay(ctx: RunContext<Backend>) -> Result<String, ToolError> {
    let output = ctx.call_tool("leak", "{}").await?;
    let text = output.text();
    let reversed: String = text.chars().rev().collect();
    Ok(format!("relayed: {reversed}"))
}

fn runtime(retry: RetryPolicy) -> Runtime<Backend> {
    match Runtime::builder(Backend::default()).retry(retry).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

fn no_jitter() -> RetryPolicy {
    RetryPolicy::attempts(3)
        .with_initial_delay(Duration::from_millis(10))
        .with_jitter(false)
}

// Defect 1: the futures of `execute` and `execute_with_cancel` are `Send`, so they can be
// spawned; this file does not compile otherwise.

#[tokio::test]
async fn execute_futures_are_send_and_can_be_spawned() {
    let runtime = runtime(RetryPolicy::none());
    let session = Session::new("s");
    let calls = vec![ToolCall::new("c", "leak", "{}")];
    assert_send(&runtime.execute(&session, &calls));
    assert_send(&runtime.execute_with_cancel(&session, &calls, CancellationToken::new()));
    let spawned = tokio::spawn({
        let runtime = runtime.clone();
        async move { runtime.execute(&session, calls).await }
    });
    let report = match spawned.await {
        Ok(report) => report,
        Err(error) => panic!("{error}"),
    };
    assert!(report.observations()[0].is_success());
}

// Defect 2: an automatic conversion never makes a write retryable.
#[tokio::test(start_paused = true)]
async fn a_write_that_failed_with_a_reset_connection_runs_once() {
    let runtime = runtime(no_jitter());
    let observation = one_call(&runtime, "s", "write_row", "{}").await;
    assert_eq!(runtime.deps().writes.load(Ordering::SeqCst), 1);
    assert_eq!(observation.attempts(), 1);
    assert_eq!(observation.error_kind(), Some("execution_failed"));
    // Nor is the model told to repeat it: the write may have been carried out.
    assert_eq!(
        observation.error().map(ToolError::is_retryable),
        Some(false)
    );
}

#[tokio::test(start_paused = true)]
async fn reads_idempotent_writes_and_failures_safe_to_repeat_are_retried() {
    for (tool, reached) in [
        ("read_row", "reads"),
        ("upsert_row", "writes"),
        ("write_refused", "writes"),
    ] {
        let runtime = runtime(no_jitter());
        let observation = one_call(&runtime, "s", tool, "{}").await;
        let backend = runtime.deps();
        let count = match reached {
            "reads" => backend.reads.load(Ordering::SeqCst),
            _ => backend.writes.load(Ordering::SeqCst),
        };
        assert_eq!((tool, count), (tool, 3));
        assert_eq!(observation.attempts(), 3);
    }
}

// Defect 3: a sibling's time does not count against a call's timeout, and each call's
// elapsed time is its own.
#[tokio::test]
async fn a_blocking_sibling_does_not_time_out_a_quick_call() {
    let runtime = runtime(RetryPolicy::none());
    let report = runtime
        .execute(
            &Session::new("s"),
            [
                ToolCall::new("blocks", "block_thread", r#"{"millis":300}"#),
                ToolCall::new("quick", "quick", r#"{"millis":10}"#),
            ],
        )
        .await;
    assert_eq!(report.schedule(), [vec!["blocks", "quick"]]);
    let quick = &report.observations()[1];
    assert_eq!(quick.content(), Some("quick"), "{quick:?}");
    assert!(quick.elapsed() < Duration::from_millis(100), "{quick:?}");
    assert!(report.observations()[0].elapsed() >= Duration::from_millis(300));
}

/// A sync tool that blocks, run on the blocking pool.
#[tool(read_only, blocking, timeout = "100ms")]
fn blocking_lookup(
    /// Milliseconds.
    millis: u64,
) -> String {
    std::thread::sleep(Duration::from_millis(millis));
    "looked up".to_owned()
}

#[tokio::test]
async fn a_blocking_sync_tool_times_out_and_the_turn_goes_on() {
    let runtime = runtime(RetryPolicy::none());
    let report = runtime
        .execute(
            &Session::new("s"),
            [
                ToolCall::new("slow", "blocking_lookup", r#"{"millis":400}"#),
                ToolCall::new("fast", "blocking_lookup", r#"{"millis":1}"#),
                ToolCall::new("quick", "quick", r#"{"millis":10}"#),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [Some("timeout"), None, None]);
    assert!(report.elapsed() < Duration::from_millis(300), "{report:?}");
}

// Defect 4: a nested call of a tool that must run alone, from a call that runs alongside
// others, is refused; it never overlaps them.
#[tokio::test]
async fn a_read_cannot_reach_a_tool_that_must_run_alone() {
    let runtime = runtime(RetryPolicy::none());
    let calls: Vec<ToolCall> = (0..8)
        .map(|index| ToolCall::new(format!("r{index}"), "read_then_write", "{}"))
        .collect();
    for _ in 0..10 {
        let report = runtime.execute(&Session::new("s"), &calls).await;
        for observation in report.observations() {
            assert_eq!(
                observation.error_kind(),
                Some("nested_call_refused"),
                "{observation:?}"
            );
        }
    }
    let message = one_call(&runtime, "s", "read_then_write", "{}")
        .await
        .error()
        .map(|error| error.message().to_owned());
    assert_eq!(
        message.as_deref(),
        Some(
            "tool `read_then_write` runs alongside other calls and cannot call `exclusive_write`, which must run alone"
        )
    );
}

#[tokio::test]
async fn nested_calls_of_a_tool_that_runs_alone_do_not_overlap() {
    let runtime = runtime(RetryPolicy::none());
    let observation = one_call(&runtime, "s", "two_writes", "{}").await;
    assert_eq!(observation.content(), Some("written written"));
    assert_eq!(runtime.deps().most_inside.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_nested_result_passes_the_output_policy() {
    let runtime = runtime(RetryPolicy::none());
    let observation = one_call(&runtime, "s", "relay", "{}").await;
    assert_eq!(
        observation.content(),
        Some("relayed: ]yek_ipa_ianepo:DETCADER[ yek")
    );
}

// Defect 6: cancellation is checked before each call starts.
#[tokio::test(start_paused = true)]
async fn no_body_starts_after_the_token_fires() {
    for (calls, cap) in [(3, 1), (100, 16)] {
        let runtime = match Runtime::builder(Backend::default())
            .limits(Limits::default().with_max_concurrency(cap))
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => panic!("{error}"),
        };
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            trigger.cancel();
        });
        let turn: Vec<ToolCall> = (0..calls)
            .map(|index| ToolCall::new(format!("w{index}"), "wait", r#"{"millis":10}"#))
            .collect();
        let report = runtime
            .execute_with_cancel(&Session::new("s"), &turn, cancel)
            .await;
        let started = runtime.deps().started.load(Ordering::SeqCst);
        assert_eq!(started, u32::try_from(cap).unwrap_or(u32::MAX));
        let cancelled = report
            .observations()
            .iter()
            .filter(|observation| observation.error_kind() == Some("cancelled"))
            .count();
        assert_eq!(cancelled, calls);
        let never_ran = report
            .observations()
            .iter()
            .filter(|observation| observation.attempts() == 0)
            .count();
        assert_eq!(never_ran, calls - cap);
    }
}

// Defect 7: nothing a tool or a setting does panics out of `execute`.

struct PanicOnDrop;

impl Drop for PanicOnDrop {
    fn drop(&mut self) {
        panic!("dropped while running");
    }
}

/// Panics when its timeout drops it.
#[tool(read_only, timeout = "10ms")]
async fn panics_when_dropped() -> String {
    let _guard = PanicOnDrop;
    tokio::time::sleep(Duration::from_secs(10)).await;
    "never".to_owned()
}

/// Panics with a payload whose own `Drop` panics.
#[tool(read_only)]
async fn panics_twice() -> String {
    std::panic::panic_any(PanicOnDrop)
}

/// Waits once.
#[tool(read_only, timeout = "1s")]
async fn waits_once() -> String {
    tokio::task::yield_now().await;
    "awake".to_owned()
}

/// Fails transiently.
#[tool(read_only)]
async fn always_busy() -> Result<String, ToolError> {
    Err(ToolError::transient("busy"))
}

#[tokio::test(start_paused = true)]
async fn panics_in_drop_and_in_payloads_stay_in_their_call() {
    let runtime = runtime(RetryPolicy::none());
    let report = runtime
        .execute(
            &Session::new("s"),
            [
                ToolCall::new("a", "panics_when_dropped", "{}"),
                ToolCall::new("b", "panics_twice", "{}"),
                ToolCall::new("c", "leak", "{}"),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [Some("timeout"), Some("panicked"), None]);
}

#[tokio::test(start_paused = true)]
async fn a_huge_retry_multiplier_waits_at_most_the_max_delay() {
    let runtime = runtime(
        RetryPolicy::attempts(4)
            .with_multiplier(1e300)
            .with_max_delay(Duration::from_secs(2))
            .with_jitter(false),
    );
    let observation = one_call(&runtime, "s", "always_busy", "{}").await;
    assert_eq!(observation.attempts(), 4);
    assert_eq!(
        observation.elapsed(),
        Duration::from_millis(200 + 2000 + 2000)
    );
}

#[test]
fn a_call_that_waits_without_a_tokio_timer_gets_a_clear_error() {
    let runtime = runtime(RetryPolicy::none());
    let calls = [ToolCall::new("c", "waits_once", "{}")];
    let Ok(no_timers) = tokio::runtime::Builder::new_current_thread().build() else {
        panic!("executor");
    };
    let report = no_timers.block_on(runtime.execute(&Session::new("s"), &calls));
    let error = report.observations()[0].error().cloned();
    assert_eq!(
        error.as_ref().map(|error| error.kind().as_str()),
        Some("internal")
    );
    assert!(
        error
            .as_ref()
            .is_some_and(|error| error.message().contains("timers disabled")
                && error.message().contains("enable_time()")),
        "{error:?}"
    );
    let report = block_on_without_tokio(runtime.execute(&Session::new("s"), &calls));
    let error = report.observations()[0].error().cloned();
    assert!(
        error.as_ref().is_some_and(|error| error
            .message()
            .contains("not running inside a tokio runtime")),
        "{error:?}"
    );
}

/// Drives a future to completion on this thread, outside any tokio runtime.
fn block_on_without_tokio<F: Future>(future: F) -> F::Output {
    use std::task::{Context, Poll, Wake, Waker};
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut future = std::pin::pin!(future);
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        std::thread::park();
    }
}

#[test]
fn limits_beyond_what_the_stack_allows_are_refused_at_build() {
    let deep_calls = Runtime::builder(Backend::default())
        .limits(Limits::default().with_max_call_depth(5_000))
        .build()
        .err();
    assert!(
        matches!(
            deep_calls,
            Some(BuildError::Limit {
                name: "max_call_depth",
                value: 5_000,
                ..
            })
        ),
        "{deep_calls:?}"
    );
    let deep_arguments = Runtime::builder(Backend::default())
        .limits(Limits::default().with_max_argument_depth(10_000))
        .build()
        .err()
        .map(|error| error.to_string());
    assert_eq!(
        deep_arguments.as_deref(),
        Some(
            "limit `max_argument_depth` is 10000; it must be between 1 and 128; deeper arguments would overflow the stack while they are parsed or dropped"
        )
    );
    let no_concurrency = Runtime::builder(Backend::default())
        .limits(Limits::default().with_max_concurrency(0))
        .build()
        .err()
        .map(|error| error.to_string());
    assert_eq!(
        no_concurrency.as_deref(),
        Some("limit `max_concurrency` is 0; it must be at least 1")
    );
    let at_the_bounds = Runtime::builder(Backend::default())
        .limits(
            Limits::default()
                .with_max_call_depth(tool_runtime::MAX_CALL_DEPTH)
                .with_max_argument_depth(tool_runtime::MAX_ARGUMENT_DEPTH),
        )
        .build();
    assert!(at_the_bounds.is_ok());
}

#[tokio::test]
async fn calls_at_the_deepest_allowed_nesting_are_answered() {
    let runtime = match Runtime::builder(Backend::default())
        .limits(Limits::default().with_max_argument_depth(tool_runtime::MAX_ARGUMENT_DEPTH))
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let deep = format!("{{\"millis\": {}1{}}}", "[".repeat(200), "]".repeat(200));
    let observation = one_call(&runtime, "s", "wait", &deep).await;
    assert_eq!(observation.error_kind(), Some("invalid_arguments"));
}
