//! Exactly once, through the runtime with the memory store (the default): a thousand
//! concurrent copies run once; duplicates refused instead of waiting; the key a tool reads;
//! reads and idempotent tools skip the layer; a claim outlasting a shorter window; a waiting
//! copy stopped by its turn's cancellation; the same call resumed after a crash; the memory
//! store's bounds; an unreachable store; a replay's audit.
//!
//! What the layer does on every store is `layer.rs`'s.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tests::report::{kinds, replayed};
use tests::stores::Recording;
use tool_runtime::idempotency::{
    Claim, ConcurrentDuplicates, Idempotency, IdempotencyKey, IdempotencyStore, Lookup,
    MemoryIdempotency, SharedFailure, StoreError, StoredResult,
};
use tool_runtime::{
    BoxFuture, CancellationToken, RetryPolicy, RunContext, Runtime, RuntimeBuilder, Session,
    ToolCall, ToolError, tool, tools,
};

/// What the tools did.
#[derive(Default)]
pub struct Backend {
    tickets: AtomicU32,
    failures_left: AtomicU32,
    reads: AtomicU32,
    slow_runs: AtomicU32,
    keys: Mutex<Vec<Option<String>>>,
}

/// Opens a ticket.
#[tool(stateful)]
async fn create_ticket(
    ctx: RunContext<Backend>,
    /// What is wrong.
    subject: String,
    /// How urgent.
    #[default = "normal".to_owned()]
    priority: String,
    /// A note.
    note: Option<String>,
) -> Result<Value, ToolError> {
    let backend = ctx.deps();
    if let Ok(mut keys) = backend.keys.lock() {
        keys.push(ctx.idempotency_key().map(str::to_owned));
    }
    if backend
        .failures_left
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
            left.checked_sub(1)
        })
        .is_ok()
    {
        return Err(ToolError::failed("the ticket system said no"));
    }
    let number = backend.tickets.fetch_add(1, Ordering::SeqCst) + 1;
    Ok(json!({ "ticket": number, "subject": subject, "priority": priority, "note": note }))
}

/// A slow write.
#[tool(stateful, timeout = "50ms")]
async fn slow_write(
    ctx: RunContext<Backend>,
    /// How long it takes, in milliseconds.
    millis: u64,
) -> u32 {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    ctx.deps().slow_runs.fetch_add(1, Ordering::SeqCst) + 1
}

/// A write that is safe to repeat: the layer leaves it alone.
#[tool(stateful, idempotent)]
async fn set_status(
    ctx: RunContext<Backend>,
    /// The status.
    status: String,
) -> String {
    ctx.deps().tickets.fetch_add(1, Ordering::SeqCst);
    status
}

/// A read.
#[tool(read_only)]
async fn get_ticket(
    ctx: RunContext<Backend>,
    /// The ticket.
    ticket: u32,
) -> u32 {
    ctx.deps().reads.fetch_add(1, Ordering::SeqCst);
    ticket
}

fn build(
    settings: impl FnOnce(RuntimeBuilder<Backend>) -> RuntimeBuilder<Backend>,
) -> (Runtime<Backend>, Arc<Backend>) {
    let backend = Arc::new(Backend::default());
    let builder = Runtime::builder_shared(Arc::clone(&backend))
        .inventory(false)
        .tools(tools![create_ticket, slow_write, set_status, get_ticket]);
    match settings(builder).build() {
        Ok(runtime) => (runtime, backend),
        Err(error) => panic!("{error}"),
    }
}

fn ticket(id: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, "create_ticket", arguments)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_thousand_concurrent_identical_calls_run_once_and_share_the_result() {
    let (runtime, backend) = build(|builder| builder);
    let mut tasks = Vec::new();
    for index in 0..1_000 {
        let runtime = runtime.clone();
        tasks.push(tokio::spawn(async move {
            runtime
                .execute(
                    &Session::new("s"),
                    [ticket(&format!("c{index}"), json!({ "subject": "storm" }))],
                )
                .await
        }));
    }
    let mut contents = Vec::new();
    for task in tasks {
        match task.await {
            Ok(report) => {
                assert_eq!(kinds(&report), [None]);
                contents.push(report.observations()[0].content().map(str::to_owned));
            }
            Err(error) => panic!("{error}"),
        }
    }
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 1);
    assert!(contents.windows(2).all(|pair| pair[0] == pair[1]));
}

#[tokio::test]
async fn concurrent_duplicates_can_be_refused_instead() {
    let (runtime, backend) = build(|builder| {
        builder
            .idempotency(Idempotency::default().concurrent_duplicates(ConcurrentDuplicates::Refuse))
    });
    let session = Session::new("s");
    let call = ToolCall::new("1", "slow_write", json!({ "millis": 30 }));
    let (first, second) = tokio::join!(
        runtime.execute(&session, [call.clone()]),
        runtime.execute(
            &session,
            [ToolCall::new("2", "slow_write", json!({ "millis": 30 }))]
        ),
    );
    let mut kinds: Vec<Option<&str>> = vec![
        first.observations()[0].error_kind(),
        second.observations()[0].error_kind(),
    ];
    kinds.sort();
    assert_eq!(kinds, [None, Some("idempotency_in_progress")]);
    assert_eq!(backend.slow_runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_derived_key_reaches_the_tool_and_is_stable() {
    let (runtime, backend) = build(|builder| builder);
    backend.failures_left.store(1, Ordering::SeqCst);
    let session = Session::new("s");
    for id in ["1", "2"] {
        runtime
            .execute(&session, [ticket(id, json!({ "subject": "x" }))])
            .await;
    }
    let keys = backend
        .keys
        .lock()
        .map(|keys| keys.clone())
        .unwrap_or_default();
    assert_eq!(keys.len(), 2, "the failed attempt and the retry both ran");
    assert!(keys[0].as_ref().is_some_and(|key| key.len() == 64));
    assert_eq!(keys[0], keys[1]);
}

#[tokio::test]
async fn reads_and_idempotent_tools_skip_the_layer() {
    let store = Arc::new(Recording::new(MemoryIdempotency::default()));
    let (runtime, backend) =
        build(|builder| builder.idempotency(Idempotency::new(Arc::clone(&store))));
    let session = Session::new("s");
    runtime
        .execute(
            &session,
            [
                ToolCall::new("1", "get_ticket", json!({ "ticket": 1 })),
                ToolCall::new("2", "set_status", json!({ "status": "open" })),
                ToolCall::new("3", "set_status", json!({ "status": "open" })),
            ],
        )
        .await;
    assert_eq!(store.requests().total(), 0);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_claim_lasts_as_long_as_its_call_can_run_even_past_a_shorter_window() {
    let (runtime, backend) = build(|builder| {
        builder
            .retry(RetryPolicy::none())
            .idempotency(Idempotency::default().ttl(Duration::from_millis(10)))
    });
    let session = Session::new("s");
    let call = |id: &str| [ToolCall::new(id, "slow_write", json!({ "millis": 40 }))];
    // The copy comes after the window but while the first still runs (its timeout is 50 ms):
    // it waits for the first and is answered with its result.
    let copy = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        runtime.execute(&session, call("2")).await
    };
    let (first, copy) = tokio::join!(runtime.execute(&session, call("1")), copy);
    assert_eq!(kinds(&first), [None]);
    assert_eq!(kinds(&copy), [None]);
    assert!(copy.observations()[0].replayed());
    assert_eq!(backend.slow_runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_duplicate_waiting_for_the_first_execution_stops_when_its_turn_is_cancelled() {
    let (runtime, backend) = build(|builder| {
        builder
            .retry(RetryPolicy::none())
            .idempotency(Idempotency::default().wait(Duration::from_secs(60)))
    });
    let session = Session::new("s");
    let call = |id: &str| [ToolCall::new(id, "slow_write", json!({ "millis": 40 }))];
    let cancel = CancellationToken::new();
    let copy = async {
        tokio::time::sleep(Duration::from_millis(5)).await;
        let cancelling = async {
            tokio::time::sleep(Duration::from_millis(10)).await;
            cancel.cancel();
        };
        let (report, ()) = tokio::join!(
            runtime.execute_with_cancel(&session, call("2"), cancel.clone()),
            cancelling
        );
        report
    };
    let (first, copy) = tokio::join!(runtime.execute(&session, call("1")), copy);
    assert_eq!(kinds(&first), [None]);
    // Cancelled while it waited: not answered 25 ms later with the first's result.
    assert_eq!(kinds(&copy), [Some("cancelled")]);
    assert!(!copy.observations()[0].replayed());
    assert_eq!(backend.slow_runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn the_same_call_resumed_after_a_crash_takes_its_claim_over_once_its_run_cannot_be_going() {
    let (runtime, backend) = build(|builder| {
        builder
            .retry(RetryPolicy::none())
            .idempotency(Idempotency::default().wait(Duration::from_millis(20)))
    });
    let session = Session::new("s");
    let call = |id: &str| [ToolCall::new(id, "slow_write", json!({ "millis": 20 }))];
    // The process "crashes" mid-call: the turn's future is dropped while the tool runs, so
    // its run ends without an ending recorded.
    let crashed = tokio::time::timeout(
        Duration::from_millis(5),
        runtime.execute(&session, call("1")),
    )
    .await;
    assert!(crashed.is_err());
    // At once, the same call could still be running somewhere: it waits, as another does.
    for id in ["1", "2"] {
        let again = runtime.execute(&session, call(id)).await;
        assert_eq!(kinds(&again), [Some("in_progress_elsewhere")], "{id}");
    }
    // Past its timeout (50 ms) and a second, the same call takes its claim over and runs;
    // another call still waits for it.
    tokio::time::advance(Duration::from_secs(2)).await;
    let other = runtime.execute(&session, call("2")).await;
    assert_eq!(kinds(&other), [Some("in_progress_elsewhere")]);
    let resumed = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&resumed), [None]);
    assert!(!resumed.observations()[0].replayed());
    assert_eq!(backend.slow_runs.load(Ordering::SeqCst), 1);
    // Its result now answers every copy.
    let later = runtime.execute(&session, call("2")).await;
    assert!(later.observations()[0].replayed());
}

#[tokio::test(start_paused = true)]
async fn expired_claims_leave_a_full_memory_store() {
    let store = Arc::new(MemoryIdempotency::new(2, 1 << 20));
    let (runtime, backend) = build(|builder| {
        builder
            .idempotency(Idempotency::new(Arc::clone(&store)).ttl(Duration::from_secs(10)))
            .retry(RetryPolicy::none())
    });
    let session = Session::new("s");
    // Two writes stopped by their timeouts keep their claims and fill the store.
    for millis in [200, 300] {
        let report = runtime
            .execute(
                &session,
                [ToolCall::new(
                    "1",
                    "slow_write",
                    json!({ "millis": millis }),
                )],
            )
            .await;
        assert_eq!(kinds(&report), [Some("timeout")]);
    }
    assert_eq!(store.len(), 2);
    // Once their window is over they give way: a new write is not refused.
    tokio::time::advance(Duration::from_secs(11)).await;
    let report = runtime
        .execute(&session, [ticket("t", json!({ "subject": "x" }))])
        .await;
    assert_eq!(kinds(&report), [None]);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_same_call_sent_again_while_it_runs_waits_and_is_replayed() {
    let (runtime, backend) = build(|builder| builder);
    let session = Session::new("s");
    let call = || [ToolCall::new("1", "slow_write", json!({ "millis": 30 }))];
    let (first, second) = tokio::join!(
        runtime.execute(&session, call()),
        runtime.execute(&session, call())
    );
    assert_eq!(kinds(&first), [None]);
    assert_eq!(kinds(&second), [None]);
    assert_eq!(backend.slow_runs.load(Ordering::SeqCst), 1);
    assert!(first.observations()[0].replayed() != second.observations()[0].replayed());
}

#[tokio::test]
async fn an_unreachable_store_refuses_writes_unless_fail_open_is_chosen() {
    let (runtime, backend) = build(|builder| builder.idempotency(Idempotency::new(DownStore)));
    let report = runtime
        .execute(
            &Session::new("s"),
            [
                ToolCall::new("r", "get_ticket", json!({ "ticket": 1 })),
                ticket("w", json!({ "subject": "x" })),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [None, Some("idempotency_unavailable")]);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 0);
    let (runtime, backend) =
        build(|builder| builder.idempotency(Idempotency::new(DownStore).fail_open(true)));
    let report = runtime
        .execute(&Session::new("s"), [ticket("w", json!({ "subject": "x" }))])
        .await;
    assert_eq!(kinds(&report), [None]);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_memory_store_evicts_the_oldest_result_first_and_never_a_claim() {
    let store = Arc::new(MemoryIdempotency::new(2, 1 << 20));
    let (runtime, backend) =
        build(|builder| builder.idempotency(Idempotency::new(Arc::clone(&store))));
    let session = Session::new("s");
    for subject in ["a", "b", "c"] {
        runtime
            .execute(&session, [ticket(subject, json!({ "subject": subject }))])
            .await;
    }
    assert_eq!(store.len(), 2);
    // "a" was evicted (oldest), "c" is kept.
    let report = runtime
        .execute(
            &session,
            [
                ticket("1", json!({ "subject": "c" })),
                ticket("2", json!({ "subject": "a" })),
            ],
        )
        .await;
    assert_eq!(replayed(&report), [true, false]);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 4);

    // Claims in flight are never evicted: a full store of claims refuses a new one.
    let claims = MemoryIdempotency::new(1, 1 << 20);
    let key = |digest: &str| IdempotencyKey {
        scope: "s".into(),
        tool: "t".into(),
        digest: digest.into(),
        arguments_digest: digest.into(),
        holder: None,
    };
    let held = claims.claim(key("1"), Duration::from_secs(60)).await;
    assert!(matches!(held, Ok(Lookup::Claimed(_))));
    let refused = claims.claim(key("2"), Duration::from_secs(60)).await;
    assert!(refused.is_err());
    assert!(matches!(
        claims.claim(key("1"), Duration::from_secs(60)).await,
        Ok(Lookup::Pending)
    ));
}

/// A store that is never reachable.
struct DownStore;

impl IdempotencyStore for DownStore {
    fn claim(&self, _: IdempotencyKey, _: Duration) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        Box::pin(async { Err(StoreError::new("connection refused")) })
    }
    fn wait(
        &self,
        _: IdempotencyKey,
        _: Duration,
        _: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        Box::pin(async { Err(StoreError::new("connection refused")) })
    }
    fn complete(
        &self,
        _: IdempotencyKey,
        _: Claim,
        _: StoredResult,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async { Err(StoreError::new("connection refused")) })
    }
    fn release(
        &self,
        _: IdempotencyKey,
        _: Claim,
        _: SharedFailure,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async { Err(StoreError::new("connection refused")) })
    }
}

#[tokio::test]
async fn a_replay_writes_no_outcome_to_the_audit() {
    let audit = Arc::new(tool_runtime::audit::MemoryAudit::default());
    let (runtime, _) = build(|builder| builder.audit(Arc::clone(&audit)));
    let session = Session::new("s");
    for id in ["1", "2"] {
        runtime
            .execute(&session, [ticket(id, json!({ "subject": "x" }))])
            .await;
    }
    let decisions: Vec<(String, String)> = audit
        .lines()
        .iter()
        .map(|line| {
            (
                line["call_id"].as_str().unwrap_or_default().to_owned(),
                line["decision"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = [("1", "auto"), ("1", "outcome"), ("2", "auto")]
        .iter()
        .map(|(call, decision)| ((*call).to_owned(), (*decision).to_owned()))
        .collect();
    assert_eq!(decisions, expected);
}
