//! Exactly once: a write repeated within its window runs once; only success is kept; the
//! layer sits inside the gates and outside retry and timeout.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tool_runtime::{
    Action, BoxFuture, CancellationToken, Claim, ConcurrentDuplicates, Holder, IdempotencyKey,
    IdempotencyStore, Lookup, MemoryIdempotency, Policy, RetryPolicy, RunContext, Runtime,
    RuntimeBuilder, Session, SharedFailure, StoreError, StoredResult, ToolCall, ToolError,
    TurnReport, tool, tools,
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

fn kinds(report: &TurnReport) -> Vec<Option<&str>> {
    report
        .observations()
        .iter()
        .map(|o| o.error_kind())
        .collect()
}

#[tokio::test]
async fn a_repeated_write_runs_once_and_the_repeat_replays_its_result() {
    let (runtime, backend) = build(|builder| builder);
    let session = Session::new("s");
    let first = runtime
        .execute(&session, [ticket("1", json!({ "subject": "broken" }))])
        .await;
    let again = runtime
        .execute(&session, [ticket("2", json!({ "subject": "broken" }))])
        .await;
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 1);
    assert!(!first.observations()[0].replayed());
    assert!(again.observations()[0].replayed());
    assert_eq!(again.observations()[0].attempts(), 0);
    assert_eq!(
        first.observations()[0].content(),
        again.observations()[0].content()
    );
    // Within one turn too.
    let turn = runtime
        .execute(
            &session,
            [
                ticket("3", json!({ "subject": "other" })),
                ticket("4", json!({ "subject": "other" })),
            ],
        )
        .await;
    assert_eq!(kinds(&turn), [None, None]);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 2);
    assert!(turn.observations()[1].replayed());
}

#[tokio::test]
async fn key_order_null_and_defaults_do_not_change_the_fingerprint() {
    let (runtime, backend) = build(|builder| builder);
    let session = Session::new("s");
    let report = runtime
        .execute(
            &session,
            [
                ticket("1", json!({ "subject": "x" })),
                ticket("2", json!({ "note": null, "subject": "x" })),
                ticket("3", json!({ "priority": "normal", "subject": "x" })),
                ToolCall::new(
                    "4",
                    "create_ticket",
                    r#"{"subject":"x","priority":"normal","note":null}"#,
                ),
                ticket("5", json!({ "subject": "x", "priority": "high" })),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [None; 5]);
    let replayed: Vec<bool> = report.observations().iter().map(|o| o.replayed()).collect();
    assert_eq!(replayed, [false, true, true, true, false]);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn only_success_is_kept() {
    let (runtime, backend) = build(|builder| builder);
    backend.failures_left.store(1, Ordering::SeqCst);
    let session = Session::new("s");
    let failed = runtime
        .execute(&session, [ticket("1", json!({ "subject": "x" }))])
        .await;
    assert_eq!(kinds(&failed), [Some("execution_failed")]);
    let retried = runtime
        .execute(&session, [ticket("2", json!({ "subject": "x" }))])
        .await;
    assert_eq!(kinds(&retried), [None]);
    assert!(!retried.observations()[0].replayed());
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 1);
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
    let (runtime, backend) =
        build(|builder| builder.concurrent_duplicates(ConcurrentDuplicates::Refuse));
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

#[tokio::test(start_paused = true)]
async fn the_window_counts_from_the_first_call() {
    // A window longer than the call can run (its 60 s timeout, once): the window decides.
    let (runtime, backend) = build(|builder| {
        builder
            .retry(RetryPolicy::none())
            .idempotency_ttl(Duration::from_secs(120))
    });
    let session = Session::new("s");
    let call = || [ticket("1", json!({ "subject": "x" }))];
    runtime.execute(&session, call()).await;
    tokio::time::advance(Duration::from_secs(119)).await;
    assert!(runtime.execute(&session, call()).await.observations()[0].replayed());
    tokio::time::advance(Duration::from_secs(2)).await;
    let after = runtime.execute(&session, call()).await;
    assert!(!after.observations()[0].replayed());
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn sessions_are_isolated_unless_a_scope_joins_them() {
    let (runtime, backend) = build(|builder| builder);
    for session in ["a", "b"] {
        runtime
            .execute(
                &Session::new(session),
                [ticket("1", json!({ "subject": "x" }))],
            )
            .await;
    }
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 2);
    let (runtime, backend) = build(|builder| builder.idempotency_scope(|_| "tenant-1".to_owned()));
    for session in ["a", "b"] {
        runtime
            .execute(
                &Session::new(session),
                [ticket("1", json!({ "subject": "x" }))],
            )
            .await;
    }
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_explicit_key_runs_once_and_its_reuse_with_other_arguments_is_refused() {
    let (runtime, backend) = build(|builder| builder);
    let session = Session::new("s");
    let first = runtime
        .execute(
            &session,
            [ticket("1", json!({ "subject": "x" })).with_idempotency_key("req-42")],
        )
        .await;
    assert_eq!(kinds(&first), [None]);
    let report = runtime
        .execute(
            &session,
            [
                ticket("2", json!({ "priority": "normal", "subject": "x" }))
                    .with_idempotency_key("req-42"),
                ticket("3", json!({ "subject": "y" })).with_idempotency_key("req-42"),
            ],
        )
        .await;
    assert_eq!(
        kinds(&report),
        [None, Some("idempotency_key_reused")],
        "{:?}",
        report.observations()
    );
    assert!(report.observations()[0].replayed());
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 1);
    // The tool read the key from its context, to forward it downstream.
    let keys = backend
        .keys
        .lock()
        .map(|keys| keys.clone())
        .unwrap_or_default();
    assert_eq!(keys, [Some("req-42".to_owned())]);
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
    let store = Arc::new(CountingStore::default());
    let (runtime, backend) = build(|builder| builder.idempotency(Arc::clone(&store)));
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
    assert_eq!(store.calls.load(Ordering::SeqCst), 0);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_denied_call_never_reaches_the_store_and_a_replay_skips_retry_and_timeout() {
    let store = Arc::new(CountingStore::default());
    let (runtime, backend) = build(|builder| {
        builder
            .idempotency(Arc::clone(&store))
            .policy(Policy::new().tool("create_ticket", Action::Deny))
            .retry(RetryPolicy::default())
    });
    let report = runtime
        .execute(&Session::new("s"), [ticket("1", json!({ "subject": "x" }))])
        .await;
    assert_eq!(kinds(&report), [Some("denied")]);
    assert_eq!(store.calls.load(Ordering::SeqCst), 0);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 0);

    // A replay does not run the tool: no attempt, so no retry and no timeout.
    let (runtime, backend) = build(|builder| builder);
    let session = Session::new("s");
    let fast = runtime
        .execute(
            &session,
            [ToolCall::new("1", "slow_write", json!({ "millis": 1 }))],
        )
        .await;
    assert_eq!(kinds(&fast), [None]);
    let replay = runtime
        .execute(
            &session,
            [ToolCall::new("2", "slow_write", json!({ "millis": 1 }))],
        )
        .await;
    assert!(replay.observations()[0].replayed());
    assert_eq!(backend.slow_runs.load(Ordering::SeqCst), 1);
}

#[tokio::test(start_paused = true)]
async fn a_write_stopped_by_its_timeout_keeps_its_claim_for_the_window() {
    let (runtime, backend) = build(|builder| {
        builder
            .retry(RetryPolicy::none())
            .idempotency_ttl(Duration::from_secs(60))
            .idempotency_wait(Duration::from_millis(20))
    });
    let session = Session::new("s");
    let call = |id: &str| [ToolCall::new(id, "slow_write", json!({ "millis": 200 }))];
    let first = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&first), [Some("timeout")]);
    // It may have done its work: no copy runs while the claim stands, whatever its call id,
    // and long after the call could still be running; each is told so at once.
    for (id, after) in [("2", 0), ("1", 0), ("1", 5), ("2", 30)] {
        tokio::time::advance(Duration::from_secs(after)).await;
        let again = runtime.execute(&session, call(id)).await;
        assert_eq!(
            kinds(&again),
            [Some("outcome_unknown")],
            "{id} after {after} s"
        );
    }
    // The window over, the key is free again.
    tokio::time::advance(Duration::from_secs(31)).await;
    let later = runtime.execute(&session, call("3")).await;
    assert_eq!(
        kinds(&later),
        [Some("timeout")],
        "it ran (and timed out again)"
    );
    assert_eq!(backend.slow_runs.load(Ordering::SeqCst), 0);
}

#[tokio::test(start_paused = true)]
async fn a_claim_lasts_as_long_as_its_call_can_run_even_past_a_shorter_window() {
    let (runtime, backend) = build(|builder| {
        builder
            .retry(RetryPolicy::none())
            .idempotency_ttl(Duration::from_millis(10))
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
            .idempotency_wait(Duration::from_secs(60))
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
            .idempotency_wait(Duration::from_millis(20))
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
async fn a_claim_taken_over_cannot_be_freed_or_completed_by_the_run_it_was_taken_from() {
    let store = MemoryIdempotency::default();
    let ttl = Duration::from_secs(60);
    let own = |token: &str| IdempotencyKey {
        scope: "s".into(),
        tool: "refund".into(),
        digest: "d".into(),
        arguments_digest: "a".into(),
        holder: Some(Holder {
            token: token.into(),
            stale_after: Duration::from_secs(1),
        }),
    };
    let claim = |lookup: Result<Lookup, StoreError>| match lookup {
        Ok(Lookup::Claimed(claim)) => claim,
        other => panic!("not claimed: {other:?}"),
    };
    let first = claim(store.claim(own("call-1"), ttl).await);
    tokio::time::advance(Duration::from_secs(2)).await;
    let taken = claim(store.claim(own("call-1"), ttl).await);
    assert_ne!(taken, first);
    // The first run was only paused: coming back, it can neither free nor complete the claim.
    let failure = SharedFailure {
        kind: "failed".into(),
        message: "no".into(),
    };
    let stale = |output: &str| StoredResult {
        arguments_digest: "a".into(),
        output: output.into(),
        page: None,
    };
    store
        .release(own("call-1"), first.clone(), failure)
        .await
        .expect("answers");
    store
        .complete(own("call-1"), first, stale("stale"))
        .await
        .expect("answers");
    assert_eq!(
        store.claim(own("call-2"), ttl).await.expect("answers"),
        Lookup::Pending
    );
    store
        .complete(own("call-1"), taken, stale("kept"))
        .await
        .expect("answers");
    assert_eq!(
        store.claim(own("call-2"), ttl).await.expect("answers"),
        Lookup::Done(stale("kept"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_claim_taken_over_lasts_as_long_as_the_call_can_run_again() {
    let store = MemoryIdempotency::default();
    let own = |token: &str| IdempotencyKey {
        scope: "s".into(),
        tool: "refund".into(),
        digest: "d".into(),
        arguments_digest: "a".into(),
        holder: Some(Holder {
            token: token.into(),
            stale_after: Duration::from_millis(300),
        }),
    };
    let window = Duration::from_secs(1);
    assert!(matches!(
        store.claim(own("call-1"), window).await,
        Ok(Lookup::Claimed(_))
    ));
    tokio::time::advance(Duration::from_millis(850)).await;
    assert!(matches!(
        store.claim(own("call-1"), window).await,
        Ok(Lookup::Claimed(_))
    ));
    // Past the window from the first claim, the run taken over may still be going.
    tokio::time::advance(Duration::from_millis(200)).await;
    assert_eq!(
        store.claim(own("call-2"), window).await.expect("answers"),
        Lookup::Pending
    );
}

#[tokio::test(start_paused = true)]
async fn expired_claims_leave_a_full_memory_store() {
    let store = Arc::new(MemoryIdempotency::new(2, 1 << 20));
    let (runtime, backend) = build(|builder| {
        builder
            .idempotency(Arc::clone(&store))
            .retry(RetryPolicy::none())
            .idempotency_ttl(Duration::from_secs(10))
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
    let (runtime, backend) = build(|builder| builder.idempotency(DownStore));
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
        build(|builder| builder.idempotency(DownStore).idempotency_fail_open(true));
    let report = runtime
        .execute(&Session::new("s"), [ticket("w", json!({ "subject": "x" }))])
        .await;
    assert_eq!(kinds(&report), [None]);
    assert_eq!(backend.tickets.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_memory_store_evicts_the_oldest_result_first_and_never_a_claim() {
    let store = Arc::new(MemoryIdempotency::new(2, 1 << 20));
    let (runtime, backend) = build(|builder| builder.idempotency(Arc::clone(&store)));
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
    let replayed: Vec<bool> = report.observations().iter().map(|o| o.replayed()).collect();
    assert_eq!(replayed, [true, false]);
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

/// A store that answers like memory and counts how often it was asked.
#[derive(Default)]
struct CountingStore {
    inner: MemoryIdempotency,
    calls: AtomicU32,
}

impl IdempotencyStore for CountingStore {
    fn claim(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.claim(key, ttl)
    }
    fn wait(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
        wait: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.wait(key, ttl, wait)
    }
    fn complete(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        result: StoredResult,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.complete(key, claim, result)
    }
    fn release(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        failure: SharedFailure,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.release(key, claim, failure)
    }
}

/// A store that is never reachable.
struct DownStore;

impl IdempotencyStore for DownStore {
    fn claim(&self, _: IdempotencyKey, _: Duration) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        Box::pin(async { Err(StoreError("connection refused".into())) })
    }
    fn wait(
        &self,
        _: IdempotencyKey,
        _: Duration,
        _: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        Box::pin(async { Err(StoreError("connection refused".into())) })
    }
    fn complete(
        &self,
        _: IdempotencyKey,
        _: Claim,
        _: StoredResult,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async { Err(StoreError("connection refused".into())) })
    }
    fn release(
        &self,
        _: IdempotencyKey,
        _: Claim,
        _: SharedFailure,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async { Err(StoreError("connection refused".into())) })
    }
}

#[tokio::test]
async fn a_replay_writes_no_outcome_to_the_audit() {
    let audit = Arc::new(tool_runtime::MemoryAudit::default());
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
