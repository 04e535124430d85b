//! The scheduler: which calls run together, proven with instrumented tools rather than
//! wall-clock thresholds.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tests::report::contents;
use tokio::sync::Barrier;
use tool_runtime::{Limits, RunContext, Runtime, Session, ToolCall, ToolError, tool, tools};

/// Shared instruments of the tools under test.
pub struct Probe {
    /// Calls running right now.
    active: AtomicUsize,
    /// Set when a serial call saw anything else running.
    overlap: AtomicBool,
    /// Calls holding the `ledger` resource right now.
    ledger_holders: AtomicUsize,
    /// Set when two `ledger` holders overlapped.
    ledger_overlap: AtomicBool,
    /// Two readers meet here; only concurrent calls get past.
    barrier: Barrier,
    /// The order in which calls finished.
    finished: Mutex<Vec<String>>,
}

impl Probe {
    fn new() -> Self {
        Self {
            active: AtomicUsize::new(0),
            overlap: AtomicBool::new(false),
            ledger_holders: AtomicUsize::new(0),
            ledger_overlap: AtomicBool::new(false),
            barrier: Barrier::new(2),
            finished: Mutex::new(Vec::new()),
        }
    }
}

async fn busy(probe: &Probe) {
    probe.active.fetch_add(1, Ordering::SeqCst);
    for _ in 0..5 {
        tokio::task::yield_now().await;
    }
    probe.active.fetch_sub(1, Ordering::SeqCst);
}

/// A read that yields a few times.
#[tool(read_only)]
async fn read(ctx: RunContext<Probe>, label: String) -> String {
    busy(ctx.deps()).await;
    label
}

/// A write that records whether anything else ran while it did.
#[tool(mutates_workspace)]
async fn write(ctx: RunContext<Probe>, label: String) -> String {
    let probe = ctx.deps();
    if probe.active.fetch_add(1, Ordering::SeqCst) != 0 {
        probe.overlap.store(true, Ordering::SeqCst);
    }
    for _ in 0..5 {
        tokio::task::yield_now().await;
    }
    if probe.active.fetch_sub(1, Ordering::SeqCst) != 1 {
        probe.overlap.store(true, Ordering::SeqCst);
    }
    label
}

/// A tool that declares nothing.
#[tool]
async fn undeclared(ctx: RunContext<Probe>, label: String) -> String {
    write(ctx, label).await
}

/// A read that waits until another reader arrives.
#[tool(read_only)]
async fn rendezvous(ctx: RunContext<Probe>) -> &'static str {
    ctx.deps().barrier.wait().await;
    "met"
}

/// A read of the ledger, which must not be read twice at once.
#[tool(read_only, resources("ledger"))]
async fn read_ledger(ctx: RunContext<Probe>) -> &'static str {
    let probe = ctx.deps();
    if probe.ledger_holders.fetch_add(1, Ordering::SeqCst) != 0 {
        probe.ledger_overlap.store(true, Ordering::SeqCst);
    }
    for _ in 0..5 {
        tokio::task::yield_now().await;
    }
    probe.ledger_holders.fetch_sub(1, Ordering::SeqCst);
    "ledger"
}

/// A read that takes `millis` of (virtual) time.
#[tool(read_only)]
async fn sleepy(ctx: RunContext<Probe>, label: String, millis: u64) -> Result<String, ToolError> {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    if let Ok(mut finished) = ctx.deps().finished.lock() {
        finished.push(label.clone());
    }
    Ok(label)
}

fn runtime() -> Runtime<Probe> {
    match Runtime::builder(Probe::new())
        .tools(tools![
            read,
            write,
            undeclared,
            rendezvous,
            read_ledger,
            sleepy
        ])
        .limits(Limits::default().with_default_timeout(Some(Duration::from_secs(5))))
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("runtime: {error}"),
    }
}

fn call(id: &str, name: &str, args: &str) -> ToolCall {
    ToolCall::new(id, name, args)
}

#[tokio::test]
async fn reads_around_a_write_run_as_three_batches() {
    let runtime = runtime();
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![
                call("r1", "read", r#"{"label":"a"}"#),
                call("r2", "read", r#"{"label":"b"}"#),
                call("w1", "write", r#"{"label":"c"}"#),
                call("r3", "read", r#"{"label":"d"}"#),
                call("r4", "read", r#"{"label":"e"}"#),
            ],
        )
        .await;
    assert_eq!(
        report.schedule(),
        [vec!["r1", "r2"], vec!["w1"], vec!["r3", "r4"]]
    );
    assert_eq!(
        report
            .batches()
            .iter()
            .map(|batch| batch.concurrent())
            .collect::<Vec<_>>(),
        [true, false, true]
    );
    assert_eq!(
        contents(&report),
        [Some("a"), Some("b"), Some("c"), Some("d"), Some("e")]
    );
    assert!(!runtime.deps().overlap.load(Ordering::SeqCst));
}

#[tokio::test]
async fn a_tool_without_flags_runs_alone() {
    let runtime = runtime();
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![
                call("r1", "read", r#"{"label":"a"}"#),
                call("u1", "undeclared", r#"{"label":"b"}"#),
                call("u2", "undeclared", r#"{"label":"c"}"#),
                call("r2", "read", r#"{"label":"d"}"#),
            ],
        )
        .await;
    assert_eq!(
        report.schedule(),
        [vec!["r1"], vec!["u1"], vec!["u2"], vec!["r2"]]
    );
    assert!(!runtime.deps().overlap.load(Ordering::SeqCst));
}

#[tokio::test]
async fn two_reads_that_wait_for_each_other_both_finish() {
    let runtime = runtime();
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![call("a", "rendezvous", "{}"), call("b", "rendezvous", "{}")],
        )
        .await;
    assert_eq!(contents(&report), [Some("met"), Some("met")], "{report:#?}");
}

#[tokio::test]
async fn a_write_never_overlaps_anything() {
    let runtime = runtime();
    let mut calls = Vec::new();
    for n in 0..30 {
        let name = if n % 4 == 3 { "write" } else { "read" };
        calls.push(call(&format!("c{n}"), name, r#"{"label":"x"}"#));
    }
    let report = runtime.execute(&Session::new("s"), calls).await;
    assert!(report.observations().iter().all(|o| o.is_success()));
    assert!(!runtime.deps().overlap.load(Ordering::SeqCst));
}

#[tokio::test]
async fn reads_sharing_a_resource_never_overlap() {
    let runtime = runtime();
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![
                call("l1", "read_ledger", "{}"),
                call("r1", "read", r#"{"label":"a"}"#),
                call("l2", "read_ledger", "{}"),
                call("l3", "read_ledger", "{}"),
            ],
        )
        .await;
    assert_eq!(
        report.schedule(),
        [vec!["l1", "r1"], vec!["l2"], vec!["l3"]]
    );
    assert!(!runtime.deps().ledger_overlap.load(Ordering::SeqCst));
}

#[tokio::test(start_paused = true)]
async fn results_come_back_in_call_order_whatever_order_they_finish_in() {
    let runtime = runtime();
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![
                call("slow", "sleepy", r#"{"label":"slow","millis":300}"#),
                call("fast", "sleepy", r#"{"label":"fast","millis":10}"#),
                call("mid", "sleepy", r#"{"label":"mid","millis":100}"#),
            ],
        )
        .await;
    let finished = runtime
        .deps()
        .finished
        .lock()
        .map(|f| f.clone())
        .unwrap_or_default();
    assert_eq!(finished, ["fast", "mid", "slow"]);
    let ids: Vec<&str> = report.observations().iter().map(|o| o.call_id()).collect();
    assert_eq!(ids, ["slow", "fast", "mid"]);
    // Concurrent: the batch took as long as its slowest call, in virtual time.
    assert_eq!(report.elapsed(), Duration::from_millis(300));
}

#[tokio::test(start_paused = true)]
async fn the_concurrency_cap_bounds_a_batch() {
    let runtime = match Runtime::builder(Probe::new())
        .tools(tools![sleepy])
        .limits(Limits::default().with_max_concurrency(2))
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let calls: Vec<ToolCall> = (0..4)
        .map(|n| call(&format!("c{n}"), "sleepy", r#"{"label":"x","millis":100}"#))
        .collect();
    let report = runtime.execute(&Session::new("s"), calls).await;
    assert_eq!(report.batches().len(), 1);
    // Four 100 ms calls, two at a time: two rounds.
    assert_eq!(report.elapsed(), Duration::from_millis(200));
}
