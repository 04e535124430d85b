//! What the idempotency layer does on a real Redis alone (`RedisStore`, a `redis-server`
//! started per test on a free loopback port): a result is kept under its scope and tool, a
//! failure leaves no key; four processes racing on one key execute it once; a server killed
//! mid-call loses no result and runs no repeat; a late holder never frees the next holder's
//! claim; a denied call sends Redis no command; a claim Redis applied after the runtime gave
//! up on it does not hold the key; a server restarted from its append-only file replays the
//! write.
//!
//! What the layer does on every store, Redis included, is `layer.rs`'s.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use serde_json::{Value, json};
use tests::log::Log;
use tests::redis_server::RedisServer;
use tests::redis_view::{
    after_the_pause, command_calls, connect, delta, entry, get, keys, observer, pause_writes,
};
use tests::report::{kinds, only};
use tests::worker::Worker;
use tokio::sync::watch;
use tokio::time::Instant;
use tool_runtime::gates::{Action, Policy};
use tool_runtime::idempotency::{ConcurrentDuplicates, Idempotency, RedisStore};
use tool_runtime::{
    Limits, RunContext, Runtime, RuntimeBuilder, Session, ToolCall, ToolError, tool, tools,
};

/// What the tools did, and what the tests tell them.
#[derive(Default)]
pub struct Desk {
    /// Executions of `create_ticket` (failed ones included).
    tickets: AtomicU32,
    /// How many of the next `create_ticket` executions fail.
    failures_left: AtomicU32,
    /// Executions of `held_write`.
    held_runs: AtomicU32,
    /// How each `held_write` execution ends, by its number (1 first): it waits until told.
    verdicts: watch::Sender<BTreeMap<u32, bool>>,
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

/// A write that waits until the test says how it ends.
#[tool(stateful)]
async fn held_write(
    ctx: RunContext<Desk>,
    /// The order.
    order: String,
) -> Result<Value, ToolError> {
    let desk = ctx.deps();
    let run = desk.held_runs.fetch_add(1, Ordering::SeqCst) + 1;
    let mut verdicts = desk.verdicts.subscribe();
    let succeeds = match verdicts
        .wait_for(|verdicts| verdicts.contains_key(&run))
        .await
    {
        Ok(verdicts) => verdicts.get(&run).copied().unwrap_or(false),
        Err(_) => false,
    };
    if succeeds {
        Ok(json!({ "order": order, "run": run }))
    } else {
        Err(ToolError::failed(format!("run {run} of {order} failed")))
    }
}

/// How long a test waits for something that happens at once on an idle machine.
const EVENTUALLY: Duration = Duration::from_secs(10);

fn build(
    desk: &Arc<Desk>,
    store: RedisStore,
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
        .tools(tools![create_ticket, held_write])
        .idempotency(idempotency);
    match settings(builder).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

fn ticket(id: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, "create_ticket", arguments)
}

fn held(id: &str) -> ToolCall {
    ToolCall::new(id, "held_write", json!({ "order": "A-1024" }))
}

/// The holder of a pending `key`.
async fn holder(connection: &mut MultiplexedConnection, key: &str) -> String {
    match entry(connection, key).await {
        Some(value) if value["state"] == "pending" => value["holder"]
            .as_str()
            .expect("a pending entry names its holder")
            .to_owned(),
        other => panic!("expected a pending claim on {key}, found {other:?}"),
    }
}

/// Waits until `count` reaches `value` (a tool started), up to [`EVENTUALLY`].
async fn until_count(what: &str, count: &AtomicU32, value: u32) {
    let deadline = Instant::now() + EVENTUALLY;
    while count.load(Ordering::SeqCst) < value {
        assert!(Instant::now() < deadline, "{what} never reached {value}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn verdict(desk: &Desk, run: u32, succeeds: bool) {
    desk.verdicts.send_modify(|verdicts| {
        verdicts.insert(run, succeeds);
    });
}

/// The idempotency keys in Redis, sorted.
async fn idempotency_keys(connection: &mut MultiplexedConnection) -> Vec<String> {
    keys(connection, "tools:idem:*").await
}

#[tokio::test]
async fn a_result_is_kept_in_redis_under_its_scope_and_tool() {
    let server = RedisServer::start();
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, connect(&server).await, |builder| builder);
    let mut observer = observer(&server).await;
    let session = Session::new("s");

    let first = runtime
        .execute(&session, [ticket("1", json!({ "subject": "broken" }))])
        .await;
    assert_eq!(kinds(&first), [None]);
    // The result is in Redis, done.
    let keys = idempotency_keys(&mut observer).await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(
        keys[0].starts_with("tools:idem:s:create_ticket:"),
        "{keys:?}"
    );
    let stored = entry(&mut observer, &keys[0]).await.expect("kept");
    assert_eq!(stored["state"], "done", "{stored}");
    // A replay adds nothing; other arguments are another key.
    let again = runtime
        .execute(&session, [ticket("2", json!({ "subject": "broken" }))])
        .await;
    assert!(only(&again).replayed());
    assert_eq!(idempotency_keys(&mut observer).await, keys);
    runtime
        .execute(&session, [ticket("3", json!({ "subject": "on fire" }))])
        .await;
    assert_eq!(idempotency_keys(&mut observer).await.len(), 2);

    // By default the scope is the session: each session has its key.
    for session in ["a", "b"] {
        runtime
            .execute(
                &Session::new(session),
                [ticket("1", json!({ "subject": "x" }))],
            )
            .await;
    }
    let keys = idempotency_keys(&mut observer).await;
    assert_eq!(keys.len(), 4, "{keys:?}");
    assert!(
        keys[0].starts_with("tools:idem:a:create_ticket:"),
        "{keys:?}"
    );
    assert!(
        keys[1].starts_with("tools:idem:b:create_ticket:"),
        "{keys:?}"
    );
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_failure_is_not_kept_in_redis() {
    let server = RedisServer::start();
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, connect(&server).await, |builder| builder);
    let mut observer = observer(&server).await;
    desk.failures_left.store(1, Ordering::SeqCst);

    let failed = runtime
        .execute(&Session::new("s"), [ticket("1", json!({ "subject": "x" }))])
        .await;
    assert_eq!(kinds(&failed), [Some("execution_failed")]);
    // Its claim was released: nothing is left in Redis.
    assert_eq!(idempotency_keys(&mut observer).await, Vec::<String>::new());
}

/// One `idempotent_worker` process, started and `ready`.
fn worker(url: &str, prefix: &str, others: usize, call_id: &str) -> Worker {
    Worker::start(
        env!("CARGO_BIN_EXE_idempotent_worker"),
        &[url, prefix, &others.to_string(), call_id],
    )
}

#[tokio::test]
async fn four_processes_racing_on_one_key_execute_it_once() {
    const WORKERS: usize = 4;
    let server = RedisServer::start();
    let mut observer = observer(&server).await;

    // Four processes, each with its own call (the model's repeat, a user's re-send on another
    // instance) of the same tool with the same arguments in the same session: one key.
    // Every worker connects first; then all of them send the call at once. The execution
    // holds its claim until the three others have found it pending (the worker counts those
    // answers in `race:pending`), so the race is certain; they wait for its result.
    let mut workers: Vec<Worker> = (0..WORKERS)
        .map(|index| worker(&server.url(), "race", WORKERS - 1, &format!("c-{index}")))
        .collect();
    for worker in &mut workers {
        worker.go();
    }
    let observations: Vec<Value> = workers.into_iter().map(Worker::observation).collect();

    let mut counter = async |name: &str| -> Option<u64> {
        get(&mut observer, &format!("race:{name}"))
            .await
            .map(|count| count.parse().expect("a count"))
    };
    assert_eq!(counter("executions").await, Some(1), "{observations:#?}");
    assert_eq!(
        counter("pending").await,
        Some(3),
        "every other process found the claim pending: {observations:#?}"
    );
    for observation in &observations {
        assert_eq!(observation["kind"], Value::Null, "{observations:#?}");
        assert_eq!(
            observation["content"], observations[0]["content"],
            "every process answers with the one execution's result"
        );
    }
    let replayed = observations
        .iter()
        .filter(|observation| observation["replayed"] == true)
        .count();
    assert_eq!(replayed, WORKERS - 1, "{observations:#?}");
    assert_eq!(idempotency_keys(&mut observer).await.len(), 1);
}

#[tokio::test]
async fn a_server_killed_mid_call_keeps_the_result_and_runs_no_repeat() {
    // The subscriber is this thread's: the test's runtime and its tasks run here.
    let (log, _guard) = Log::capture(tracing::Level::WARN);

    let mut server = RedisServer::start();
    let store = RedisStore::connect_with_timeout(&server.url(), Duration::from_millis(500))
        .await
        .expect("the store connects");
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, store, |builder| builder);
    let session = Session::new("s");
    // A second execution, if anything let one start, would not block the test.
    verdict(&desk, 2, true);

    // The first call claims its key and runs; the server dies while it runs.
    let first = tokio::spawn({
        let (runtime, session) = (runtime.clone(), session.clone());
        async move { runtime.execute(&session, [held("1")]).await }
    });
    until_count("held_write runs", &desk.held_runs, 1).await;
    server.kill();
    verdict(&desk, 1, true);

    // Its result is still its observation; that Redis could not keep it is logged.
    let first = first.await.expect("the call ends");
    let first = only(&first);
    assert_eq!(first.error_kind(), None, "{first:?}");
    assert!(!first.replayed());
    let content: Value = serde_json::from_str(first.content().expect("a result")).expect("JSON");
    assert_eq!(content, json!({ "order": "A-1024", "run": 1 }));
    let text = log.text();
    assert!(
        text.contains("the idempotency store did not record how a write ended"),
        "{text}"
    );

    // The repeat cannot learn that the first call ran (its claim died with the server, which
    // keeps nothing on disk), so it is refused, never run: with the store down, no write runs
    // twice because none runs at all.
    let repeat = runtime.execute(&session, [held("2")]).await;
    let repeat = only(&repeat);
    assert_eq!(
        repeat.error_kind(),
        Some("idempotency_unavailable"),
        "{repeat:?}"
    );
    assert!(!repeat.replayed());
    assert_eq!(desk.held_runs.load(Ordering::SeqCst), 1, "ran once");
}

#[tokio::test]
async fn a_holder_that_outlives_its_window_cannot_free_the_next_claim() {
    let server = RedisServer::start();
    let mut observer = observer(&server).await;
    let desk = Arc::new(Desk::default());
    // Two instances: one with a short window and no timeout (a claim lasts as long as its
    // call can run, so only a call without a bound outlives its claim), one with a long
    // window that refuses duplicates while they run (so a pending claim answers at once).
    let short = build_with(
        &desk,
        Idempotency::new(connect(&server).await).ttl(Duration::from_millis(300)),
        |builder| builder.limits(Limits::default().with_default_timeout(None)),
    );
    let long = build_with(
        &desk,
        Idempotency::new(connect(&server).await)
            .ttl(Duration::from_secs(60))
            .concurrent_duplicates(ConcurrentDuplicates::Refuse),
        |builder| builder,
    );
    let session = Session::new("s");
    // A third execution, if anything let one start, would not block the test.
    verdict(&desk, 3, true);

    // The first holder claims the key and runs past its window.
    let first = tokio::spawn({
        let (runtime, session) = (short.clone(), session.clone());
        async move { runtime.execute(&session, [held("1")]).await }
    });
    until_count("held_write runs", &desk.held_runs, 1).await;
    let keys = idempotency_keys(&mut observer).await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    let key = keys[0].clone();
    let first_holder = holder(&mut observer, &key).await;
    let deadline = Instant::now() + EVENTUALLY;
    while entry(&mut observer, &key).await.is_some() {
        assert!(Instant::now() < deadline, "the first claim never expired");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // A second holder claims the free key and runs.
    let second = tokio::spawn({
        let (runtime, session) = (long.clone(), session.clone());
        async move { runtime.execute(&session, [held("2")]).await }
    });
    until_count("held_write runs", &desk.held_runs, 2).await;
    let second_holder = holder(&mut observer, &key).await;
    assert_ne!(first_holder, second_holder);

    // The first execution fails: its release must leave the second holder's claim alone.
    verdict(&desk, 1, false);
    let first = first.await.expect("the call ends");
    assert_eq!(kinds(&first), [Some("execution_failed")]);
    assert_eq!(holder(&mut observer, &key).await, second_holder);

    // A third call finds the key still held: it does not run.
    let third = long.execute(&session, [held("3")]).await;
    assert_eq!(
        kinds(&third),
        [Some("idempotency_in_progress")],
        "{:?}",
        third.observations()
    );
    assert_eq!(desk.held_runs.load(Ordering::SeqCst), 2);

    // The second execution succeeds: every later call replays it.
    verdict(&desk, 2, true);
    let second = second.await.expect("the call ends");
    assert_eq!(kinds(&second), [None]);
    for runtime in [&short, &long] {
        let later = runtime.execute(&session, [held("4")]).await;
        assert!(only(&later).replayed(), "{:?}", only(&later));
        assert_eq!(only(&later).content(), only(&second).content());
    }
    assert_eq!(desk.held_runs.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_denied_call_never_reaches_redis() {
    let server = RedisServer::start();
    let mut observer = observer(&server).await;
    let desk = Arc::new(Desk::default());
    let denied = build(&desk, connect(&server).await, |builder| {
        builder.policy(Policy::new().tool("create_ticket", Action::Deny))
    });
    let allowed = build(&desk, connect(&server).await, |builder| builder);
    let session = Session::new("s");
    let call = |id: &str| [ticket(id, json!({ "subject": "x" }))];

    let before = command_calls(&mut observer).await;
    let report = denied.execute(&session, call("1")).await;
    assert_eq!(kinds(&report), [Some("denied")]);
    let after = command_calls(&mut observer).await;
    assert_eq!(delta(&before, &after), BTreeMap::new(), "no command at all");
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 0);

    // The same call allowed: Redis counts its claim, its confirmation and its completion.
    let report = allowed.execute(&session, call("2")).await;
    assert_eq!(kinds(&report), [None]);
    let allowed_calls = delta(&after, &command_calls(&mut observer).await);
    assert_eq!(allowed_calls.get("evalsha"), Some(&3), "{allowed_calls:?}");
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_claim_the_server_applied_after_the_runtime_gave_up_does_not_hold_the_key() {
    let server = RedisServer::start();
    let mut observer = observer(&server).await;
    let desk = Arc::new(Desk::default());
    let store = RedisStore::connect_with_timeout(&server.url(), Duration::from_millis(200))
        .await
        .expect("the store connects");
    let runtime = build_with(
        &desk,
        Idempotency::new(store).wait(Duration::from_secs(5)),
        |builder| builder,
    );
    let session = Session::new("s");
    let call = |id: &str| [ticket(id, json!({ "subject": "late" }))];

    // Redis holds every write for a second: the claim is answered unavailable after 200 ms,
    // and Redis applies it when the pause ends.
    pause_writes(&mut observer, 1_000).await;
    let first = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&first), [Some("idempotency_unavailable")]);
    after_the_pause(&server);

    // The first call never ran: a repeat under another call id runs (at most after a short
    // lease), it is not told the call is still running elsewhere.
    let repeat = runtime.execute(&session, call("2")).await;
    assert_eq!(kinds(&repeat), [None], "{:?}", repeat.observations());
    assert!(!only(&repeat).replayed());
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);
    let again = runtime.execute(&session, call("3")).await;
    assert!(only(&again).replayed(), "{:?}", only(&again));
}

#[tokio::test]
async fn a_server_restarted_from_its_append_only_file_replays_the_write() {
    let mut server = RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"]);
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, connect(&server).await, |builder| builder);
    let session = Session::new("s");
    let call = |id: &str| [ticket(id, json!({ "subject": "kept" }))];

    let first = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&first), [None]);
    // Killed at once (nothing more written), started again on the same port and directory.
    server.restart();

    // The store reconnects; until it has, a write is refused, never run.
    let deadline = Instant::now() + EVENTUALLY;
    let repeat = loop {
        let repeat = runtime.execute(&session, call("2")).await;
        if kinds(&repeat) != [Some("idempotency_unavailable")] || Instant::now() >= deadline {
            break repeat;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let repeat = only(&repeat);
    assert_eq!(repeat.error_kind(), None, "{repeat:?}");
    assert!(repeat.replayed(), "run again after the restart: {repeat:?}");
    assert_eq!(repeat.content(), only(&first).content());
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);
}
