//! The idempotency layer through `Runtime::execute`, the same scenarios against each store:
//! the memory store (tokio's clock paused) and `RedisStore` (a `redis-server` per test, real
//! time). A repeat is replayed, by another instance too, however its arguments are written;
//! only success is kept; the window counts from the first call; scopes keep sessions apart
//! unless a tenant joins them; an explicit key reused with other arguments is refused; a
//! denied call never reaches the store; a replay runs neither retry nor timeout; a repeat of
//! a write stopped mid-flight is told so at once.
//!
//! What one store alone does (Redis's keys and round trips, the memory store's eviction and
//! wake-ups) is tested in `redis_layer.rs`, `idempotency.rs` and `idempotency_memory.rs`.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tests::redis_server::RedisServer;
use tests::redis_view::connect;
use tests::report::{kinds, only, replayed};
use tests::stores::{Recording, Requests};
use tokio::time::Instant;
use tool_runtime::gates::{Action, Policy};
use tool_runtime::idempotency::{Idempotency, IdempotencyStore, MemoryIdempotency};
use tool_runtime::{
    Limits, RetryPolicy, RunContext, Runtime, RuntimeBuilder, Session, ToolCall, ToolError, tool,
    tools,
};

/// What the tools did, and what the tests tell them.
#[derive(Default)]
pub struct Desk {
    /// Executions of `create_ticket` (failed ones included).
    tickets: AtomicU32,
    /// How many of the next `create_ticket` executions fail.
    failures_left: AtomicU32,
    /// The idempotency key each `create_ticket` execution read from its context.
    keys: Mutex<Vec<Option<String>>>,
    /// When each `timed_write` execution started and ended.
    timed_runs: Mutex<Vec<(Instant, Instant)>>,
    /// Executions of `sync_ledger` (attempts included).
    ledger_runs: AtomicU32,
    /// Makes every further `sync_ledger` execution outlive its timeout.
    ledger_slow: AtomicBool,
    /// Executions of `slow_write`.
    slow_runs: AtomicU32,
}

/// Opens a ticket.
#[tool(stateful)]
async fn create_ticket(
    ctx: RunContext<Desk>,
    /// What is wrong.
    subject: String,
    /// How urgent.
    #[default = "normal".to_owned()]
    priority: String,
    /// A note.
    note: Option<String>,
) -> Result<Value, ToolError> {
    let desk = ctx.deps();
    if let Ok(mut keys) = desk.keys.lock() {
        keys.push(ctx.idempotency_key().map(str::to_owned));
    }
    let number = desk.tickets.fetch_add(1, Ordering::SeqCst) + 1;
    if desk
        .failures_left
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |left| {
            left.checked_sub(1)
        })
        .is_ok()
    {
        return Err(ToolError::failed("the ticket system said no"));
    }
    Ok(json!({ "ticket": number, "subject": subject, "priority": priority, "note": note }))
}

/// How long `timed_write` takes.
const TIMED_RUN: Duration = Duration::from_millis(600);

/// A write that takes 600 ms, noting when it started and ended.
#[tool(stateful)]
async fn timed_write(
    ctx: RunContext<Desk>,
    /// The entry.
    entry: String,
) -> Value {
    let started = Instant::now();
    tokio::time::sleep(TIMED_RUN).await;
    let ended = Instant::now();
    let run = match ctx.deps().timed_runs.lock() {
        Ok(mut runs) => {
            runs.push((started, ended));
            runs.len()
        }
        Err(_) => 0,
    };
    json!({ "entry": entry, "run": run })
}

/// A write safe to repeat (so retried), opted into the layer, with a 100 ms timeout. Its first
/// execution fails transiently, saying nothing was done; the next one succeeds.
#[tool(stateful, idempotent, idempotency = "on", timeout = "100ms")]
async fn sync_ledger(
    ctx: RunContext<Desk>,
    /// The batch.
    batch: String,
) -> Result<Value, ToolError> {
    let desk = ctx.deps();
    let run = desk.ledger_runs.fetch_add(1, Ordering::SeqCst) + 1;
    if desk.ledger_slow.load(Ordering::SeqCst) {
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    if run == 1 {
        return Err(ToolError::transient("the ledger is busy").safe_to_repeat());
    }
    Ok(json!({ "batch": batch, "run": run }))
}

/// A write with a 100 ms timeout that takes a second: every run is stopped mid-flight.
#[tool(stateful, timeout = "100ms")]
async fn slow_write(
    ctx: RunContext<Desk>,
    /// The order.
    order: String,
) -> Value {
    ctx.deps().slow_runs.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(1)).await;
    json!({ "order": order })
}

/// The store under test, as two instances reach it.
pub struct Stores {
    /// The first instance's store.
    first: Arc<dyn IdempotencyStore>,
    /// Another instance's store: the same memory store, or a Redis store of its own connection.
    second: Arc<dyn IdempotencyStore>,
    /// Kept alive for the test.
    _server: Option<RedisServer>,
}

impl Stores {
    async fn memory() -> Self {
        let store: Arc<dyn IdempotencyStore> = Arc::new(MemoryIdempotency::default());
        Self {
            second: Arc::clone(&store),
            first: store,
            _server: None,
        }
    }

    async fn redis() -> Self {
        let server = RedisServer::start();
        Self {
            first: Arc::new(connect(&server).await),
            second: Arc::new(connect(&server).await),
            _server: Some(server),
        }
    }
}

fn build(
    desk: &Arc<Desk>,
    store: impl IdempotencyStore,
    settings: impl FnOnce(RuntimeBuilder<Desk>) -> RuntimeBuilder<Desk>,
) -> Runtime<Desk> {
    build_with(desk, Idempotency::new(store), settings)
}

/// [`build`] with the idempotency layer's own settings.
fn build_with(
    desk: &Arc<Desk>,
    idempotency: Idempotency,
    settings: impl FnOnce(RuntimeBuilder<Desk>) -> RuntimeBuilder<Desk>,
) -> Runtime<Desk> {
    let builder = Runtime::builder_shared(Arc::clone(desk))
        .inventory(false)
        .tools(tools![create_ticket, timed_write, sync_ledger, slow_write])
        .idempotency(idempotency);
    match settings(builder).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

fn ticket(id: &str, arguments: impl Into<tool_runtime::Arguments>) -> ToolCall {
    ToolCall::new(id, "create_ticket", arguments)
}

/// Only claims, `claims` of them.
fn claims(claims: u32) -> Requests {
    Requests {
        claims,
        ..Requests::default()
    }
}

macro_rules! scenarios {
    (#[$test:meta] $stores:expr) => {
        scenarios!(@each #[$test] $stores;
            a_repeat_is_replayed_by_every_instance_however_its_arguments_are_written,
            only_success_is_kept,
            the_window_counts_from_the_first_call,
            sessions_are_kept_apart_unless_a_scope_joins_them,
            an_explicit_key_runs_once_and_its_reuse_with_other_arguments_is_refused,
            a_denied_call_never_reaches_the_store,
            a_replay_runs_neither_retry_nor_timeout,
            a_repeat_of_a_write_stopped_mid_flight_is_told_so_at_once,
        );
    };
    (@each #[$test:meta] $stores:expr; $($scenario:ident),* $(,)?) => {
        $(
            #[$test]
            async fn $scenario() {
                let stores = $stores.await;
                super::$scenario(&stores).await;
            }
        )*
    };
}

mod memory {
    scenarios!(
        #[tokio::test(start_paused = true)]
        super::Stores::memory()
    );
}

mod redis {
    scenarios!(
        #[tokio::test]
        super::Stores::redis()
    );
}

async fn a_repeat_is_replayed_by_every_instance_however_its_arguments_are_written(stores: &Stores) {
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, Arc::clone(&stores.first), |builder| builder);
    let other = build(&desk, Arc::clone(&stores.second), |builder| builder);
    let session = Session::new("s");

    let first = runtime
        .execute(&session, [ticket("1", json!({ "subject": "broken" }))])
        .await;
    let first = only(&first);
    assert_eq!(first.error_kind(), None);
    assert!(!first.replayed());
    assert_eq!(first.attempts(), 1);

    // The same call, then the same arguments written otherwise (key order, an explicit null,
    // the default spelled out), on this instance and on the other.
    for (instance, arguments) in [
        (&runtime, json!({ "subject": "broken" })),
        (&other, json!({ "subject": "broken" })),
        (
            &other,
            json!({ "note": null, "priority": "normal", "subject": "broken" }),
        ),
    ] {
        let again = instance.execute(&session, [ticket("2", arguments)]).await;
        let again = only(&again);
        assert_eq!(again.error_kind(), None);
        assert!(again.replayed(), "{again:?}");
        assert_eq!(again.attempts(), 0);
        assert_eq!(again.content(), first.content());
    }
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);

    // Within one turn too, whatever the form; other arguments are another call.
    let turn = other
        .execute(
            &session,
            [
                ticket("3", json!({ "subject": "x" })),
                ticket("4", json!({ "note": null, "subject": "x" })),
                ticket("5", json!({ "priority": "normal", "subject": "x" })),
                ticket("6", r#"{"subject":"x","priority":"normal","note":null}"#),
                ticket("7", json!({ "subject": "x", "priority": "high" })),
            ],
        )
        .await;
    assert_eq!(kinds(&turn), [None; 5]);
    assert_eq!(replayed(&turn), [false, true, true, true, false]);
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 3);
}

async fn only_success_is_kept(stores: &Stores) {
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, Arc::clone(&stores.first), |builder| builder);
    let session = Session::new("s");
    let call = |id: &str| [ticket(id, json!({ "subject": "x" }))];
    desk.failures_left.store(1, Ordering::SeqCst);

    let failed = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&failed), [Some("execution_failed")]);

    let retried = runtime.execute(&session, call("2")).await;
    assert_eq!(kinds(&retried), [None]);
    assert!(!only(&retried).replayed(), "the failure was not replayed");
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 2);

    let replay = runtime.execute(&session, call("3")).await;
    assert!(only(&replay).replayed());
    assert_eq!(only(&replay).content(), only(&retried).content());
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 2);
}

async fn the_window_counts_from_the_first_call(stores: &Stores) {
    const TTL: Duration = Duration::from_secs(2);
    let desk = Arc::new(Desk::default());
    // The call can run 800 ms at most, less than the window: the window decides.
    let runtime = build_with(
        &desk,
        Idempotency::new(Arc::clone(&stores.first)).ttl(TTL),
        |builder| {
            builder
                .retry(RetryPolicy::none())
                .limits(Limits::default().with_default_timeout(Some(Duration::from_millis(800))))
        },
    );
    let session = Session::new("s");
    let call = |id: &str| [ToolCall::new(id, "timed_write", json!({ "entry": "e-1" }))];

    let sent = Instant::now();
    let first = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&first), [None]);
    let (run_started, run_ended) = desk
        .timed_runs
        .lock()
        .map(|runs| runs[0])
        .expect("one run noted");

    // Within the window: replayed. (The claim was taken after `sent`, so a repeat answered
    // before `sent + TTL` is inside it, however slow the machine.)
    let again = runtime.execute(&session, call("2")).await;
    assert!(
        only(&again).replayed() || sent.elapsed() >= TTL,
        "{:?}",
        only(&again)
    );

    // The claim was taken before the run started, so the window has ended by
    // `run_started + TTL`. Had it counted from the completion (after `run_ended`, 600 ms
    // later) or from the replay, this call would still be answered from the store.
    tokio::time::sleep_until(run_started + TTL + Duration::from_millis(200)).await;
    let after = runtime.execute(&session, call("3")).await;
    assert_eq!(kinds(&after), [None]);
    assert!(
        !only(&after).replayed(),
        "replayed {:?} after the window from the first claim (the run ended {:?} after it \
         started)",
        run_started.elapsed(),
        run_ended - run_started
    );
    assert_eq!(desk.timed_runs.lock().map(|runs| runs.len()).ok(), Some(2));
}

async fn sessions_are_kept_apart_unless_a_scope_joins_them(stores: &Stores) {
    let call = || [ticket("1", json!({ "subject": "x" }))];

    // By default the scope is the session: each session runs the call.
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, Arc::clone(&stores.first), |builder| builder);
    for session in ["a", "b"] {
        let report = runtime.execute(&Session::new(session), call()).await;
        assert!(!only(&report).replayed(), "{session}");
    }
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 2);

    // A tenant scope joins the sessions, across instances.
    let desk = Arc::new(Desk::default());
    let tenant =
        |store: Arc<dyn IdempotencyStore>| Idempotency::new(store).scope(|_| "t-1".to_owned());
    let one = build_with(&desk, tenant(Arc::clone(&stores.first)), |builder| builder);
    let two = build_with(&desk, tenant(Arc::clone(&stores.second)), |builder| builder);
    let first = one.execute(&Session::new("a"), call()).await;
    let second = two.execute(&Session::new("b"), call()).await;
    assert!(!only(&first).replayed());
    assert!(only(&second).replayed());
    assert_eq!(only(&second).content(), only(&first).content());
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);
    // Another tenant is another scope.
    let other = build_with(
        &desk,
        Idempotency::new(Arc::clone(&stores.first)).scope(|_| "t-2".to_owned()),
        |builder| builder,
    );
    assert!(
        !only(&other.execute(&Session::new("a"), call()).await).replayed(),
        "another tenant"
    );
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 2);
}

async fn an_explicit_key_runs_once_and_its_reuse_with_other_arguments_is_refused(stores: &Stores) {
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, Arc::clone(&stores.first), |builder| builder);
    let other = build(&desk, Arc::clone(&stores.second), |builder| builder);
    let session = Session::new("s");

    let first = runtime
        .execute(
            &session,
            [ticket("1", json!({ "subject": "x" })).with_idempotency_key("req-42")],
        )
        .await;
    assert_eq!(kinds(&first), [None]);
    // The other instance reads the first call's arguments digest from the store.
    let report = other
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
    assert_eq!(replayed(&report), [true, false]);
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);
    // The tool read the key from its context, to forward it downstream.
    let keys = desk
        .keys
        .lock()
        .map(|keys| keys.clone())
        .unwrap_or_default();
    assert_eq!(keys, [Some("req-42".to_owned())]);
}

async fn a_denied_call_never_reaches_the_store(stores: &Stores) {
    let store = Arc::new(Recording::new(Arc::clone(&stores.first)));
    let desk = Arc::new(Desk::default());
    let denied = build(&desk, Arc::clone(&store), |builder| {
        builder
            .policy(Policy::new().tool("create_ticket", Action::Deny))
            .retry(RetryPolicy::default())
    });
    let call = |id: &str| [ticket(id, json!({ "subject": "x" }))];
    let session = Session::new("s");

    let report = denied.execute(&session, call("1")).await;
    assert_eq!(kinds(&report), [Some("denied")]);
    assert_eq!(store.requests(), Requests::default(), "nothing asked");
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 0);

    // The same call allowed: a claim, then its completion.
    let allowed = build(&desk, Arc::clone(&store), |builder| builder);
    let report = allowed.execute(&session, call("2")).await;
    assert_eq!(kinds(&report), [None]);
    assert_eq!(
        store.requests(),
        Requests {
            completions: 1,
            ..claims(1)
        }
    );
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);
}

async fn a_replay_runs_neither_retry_nor_timeout(stores: &Stores) {
    let store = Arc::new(Recording::new(Arc::clone(&stores.first)));
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, Arc::clone(&store), |builder| {
        builder.retry(
            RetryPolicy::default()
                .with_initial_delay(Duration::from_millis(10))
                .with_jitter(false),
        )
    });
    let session = Session::new("s");
    let call = |id: &str| [ToolCall::new(id, "sync_ledger", json!({ "batch": "b-7" }))];

    // The first execution goes through the shells: a transient failure, retried once.
    let first = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&first), [None], "{:?}", first.observations());
    assert_eq!(only(&first).attempts(), 2);
    assert_eq!(desk.ledger_runs.load(Ordering::SeqCst), 2);

    // From now on an execution would outlive the 100 ms timeout (and its first attempt would
    // fail again). The replay runs nothing: no attempt, no timeout, one look in the store.
    desk.ledger_slow.store(true, Ordering::SeqCst);
    let before = store.requests();
    let replay = runtime.execute(&session, call("2")).await;
    let replay = only(&replay);
    assert_eq!(replay.error_kind(), None, "{replay:?}");
    assert!(replay.replayed());
    assert_eq!(replay.attempts(), 0);
    assert_eq!(replay.content(), only(&first).content());
    assert_eq!(desk.ledger_runs.load(Ordering::SeqCst), 2);
    assert_eq!(store.requests().since(before), claims(1));
}

async fn a_repeat_of_a_write_stopped_mid_flight_is_told_so_at_once(stores: &Stores) {
    const WINDOW: Duration = Duration::from_secs(3);
    const WAIT: Duration = Duration::from_secs(10);
    let store = Arc::new(Recording::new(Arc::clone(&stores.first)));
    let desk = Arc::new(Desk::default());
    let runtime = build_with(
        &desk,
        Idempotency::new(Arc::clone(&store)).ttl(WINDOW).wait(WAIT),
        |builder| builder.retry(RetryPolicy::none()),
    );
    let session = Session::new("s");
    let call = |id: &str| [ToolCall::new(id, "slow_write", json!({ "order": "A-1" }))];

    let started = Instant::now();
    let first = runtime.execute(&session, call("1")).await;
    // The claim was taken before the run started, at least 100 ms (its timeout) before now.
    let first_ended = Instant::now();
    assert_eq!(
        kinds(&first),
        [Some("timeout")],
        "{:?}",
        first.observations()
    );
    assert_eq!(desk.slow_runs.load(Ordering::SeqCst), 1);

    // Nothing runs the first call any more, and it may have done its work: a repeat under
    // another call id is told so after one look, without waiting for an end that never comes.
    let before = store.requests();
    let asked = Instant::now();
    let repeat = runtime.execute(&session, call("2")).await;
    let took = asked.elapsed();
    let since_start = started.elapsed();
    assert_eq!(
        store.requests().since(before),
        claims(1),
        "one look, no wait"
    );
    assert!(took < WAIT / 5, "answered after {took:?}");
    let repeat = only(&repeat);
    assert_eq!(repeat.error_kind(), Some("outcome_unknown"), "{repeat:?}");
    let error = repeat.error().expect("an error");
    assert!(
        error.message().contains("may have done its work"),
        "{}",
        error.message()
    );
    let left = error
        .details()
        .and_then(|details| details["expires_in_ms"].as_u64())
        .expect("the time left");
    let window = u64::try_from(WINDOW.as_millis()).expect("fits");
    let elapsed = u64::try_from(since_start.as_millis()).expect("fits");
    assert!(
        left <= window && left + elapsed + 1 >= window,
        "{left} ms left of a {window} ms window {elapsed} ms after the first call"
    );
    let when = format!(
        "in {} s, when its idempotency window ends",
        left.div_ceil(1000).max(1)
    );
    assert!(error.message().contains(&when), "{}", error.message());
    let hint = error.hint().expect("a hint");
    assert!(hint.contains("took effect"), "{hint}");

    // The same call again under its own id, and another, at once and past the time the run
    // could still be going (its timeout and a second): neither takes the claim over.
    for after in [Duration::ZERO, Duration::from_millis(1_200)] {
        tokio::time::sleep(after).await;
        for id in ["1", "2"] {
            let again = runtime.execute(&session, call(id)).await;
            assert_eq!(
                kinds(&again),
                [Some("outcome_unknown")],
                "{id} after {after:?}"
            );
        }
    }
    assert_eq!(desk.slow_runs.load(Ordering::SeqCst), 1, "never run again");

    // The window over, the key is free again.
    tokio::time::sleep_until(first_ended + WINDOW + Duration::from_millis(50)).await;
    let later = runtime.execute(&session, call("3")).await;
    assert_eq!(
        kinds(&later),
        [Some("timeout")],
        "it ran (and timed out again)"
    );
    assert_eq!(desk.slow_runs.load(Ordering::SeqCst), 2);
}
