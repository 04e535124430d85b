//! The idempotency layer (through `Runtime::execute`) on a real Redis (`RedisStore`, a
//! `redis-server` started per test on a free loopback port): a repeat is replayed, across
//! instances too; only success is kept; the window counts from the first call; scopes keep
//! calls apart; an explicit key reused with other arguments is refused; four processes racing
//! on one key execute it once; a server killed mid-call loses no result and runs no repeat; a
//! late holder never frees the next holder's claim; a denied call never reaches Redis and a
//! replay runs neither retry nor timeout; a repeat of a write stopped mid-flight is told so at
//! once; a claim Redis applied after the runtime gave up on it does not hold the key; a server
//! restarted from its append-only file replays the write.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use redis::aio::MultiplexedConnection;
use serde_json::{Value, json};
use tests::redis_server::RedisServer;
use tokio::sync::watch;
use tokio::time::Instant;
use tool_runtime::{
    Action, ConcurrentDuplicates, Observation, Policy, RedisStore, RetryPolicy, RunContext,
    Runtime, RuntimeBuilder, Session, ToolCall, ToolError, TurnReport, tool, tools,
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
    /// Executions of `held_write`.
    held_runs: AtomicU32,
    /// How each `held_write` execution ends, by its number (1 first): it waits until told.
    verdicts: watch::Sender<BTreeMap<u32, bool>>,
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
    let desk = ctx.deps();
    let run = match desk.timed_runs.lock() {
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

/// How long `timed_write` takes.
const TIMED_RUN: Duration = Duration::from_millis(600);

/// How long a test waits for something that happens at once on an idle machine.
const EVENTUALLY: Duration = Duration::from_secs(10);

async fn connect(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url())
        .await
        .expect("the store connects")
}

fn build(
    desk: &Arc<Desk>,
    store: RedisStore,
    settings: impl FnOnce(RuntimeBuilder<Desk>) -> RuntimeBuilder<Desk>,
) -> Runtime<Desk> {
    let builder = Runtime::builder_shared(Arc::clone(desk))
        .inventory(false)
        .tools(tools![
            create_ticket,
            held_write,
            timed_write,
            sync_ledger,
            slow_write
        ])
        .idempotency(store);
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

fn only(report: &TurnReport) -> &Observation {
    match report.observations() {
        [observation] => observation,
        other => panic!("expected one observation, found {other:?}"),
    }
}

fn kinds(report: &TurnReport) -> Vec<Option<&str>> {
    report
        .observations()
        .iter()
        .map(Observation::error_kind)
        .collect()
}

/// A connection of its own, to look at what the store wrote.
async fn observer(server: &RedisServer) -> MultiplexedConnection {
    redis::Client::open(server.url())
        .expect("a valid url")
        .get_multiplexed_async_connection()
        .await
        .expect("the observer connects")
}

/// The idempotency keys in Redis, sorted.
async fn idempotency_keys(connection: &mut MultiplexedConnection) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("tools:idem:*")
        .query_async(connection)
        .await
        .expect("KEYS answers");
    keys.sort();
    keys
}

/// The value of `key`, as JSON.
async fn entry(connection: &mut MultiplexedConnection, key: &str) -> Option<Value> {
    let text: Option<String> = redis::cmd("GET")
        .arg(key)
        .query_async(connection)
        .await
        .expect("GET answers");
    text.map(|text| serde_json::from_str(&text).expect("the store writes JSON"))
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

/// The calls of every command so far, from `INFO commandstats` (without the observer's own
/// `INFO`).
async fn command_calls(connection: &mut MultiplexedConnection) -> BTreeMap<String, u64> {
    let info: String = redis::cmd("INFO")
        .arg("commandstats")
        .query_async(connection)
        .await
        .expect("INFO answers");
    info.lines()
        .filter_map(|line| {
            let (name, stats) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let calls = stats
                .split(',')
                .find_map(|stat| stat.strip_prefix("calls="))?;
            Some((name.to_owned(), calls.parse().ok()?))
        })
        .filter(|(name, _)| name != "info")
        .collect()
}

/// What changed between two [`command_calls`].
fn delta(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter_map(|(name, calls)| {
            let grown = calls - before.get(name).copied().unwrap_or(0);
            (grown > 0).then(|| (name.clone(), grown))
        })
        .collect()
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

#[tokio::test]
async fn a_repeat_is_replayed_from_redis_by_every_instance() {
    let server = RedisServer::start();
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, connect(&server).await, |builder| builder);
    // Another instance: its own connection, its own runtime, the same server.
    let other = build(&desk, connect(&server).await, |builder| builder);
    let mut observer = observer(&server).await;
    let session = Session::new("s");

    let first = runtime
        .execute(&session, [ticket("1", json!({ "subject": "broken" }))])
        .await;
    let first = only(&first);
    assert_eq!(first.error_kind(), None);
    assert!(!first.replayed());
    assert_eq!(first.attempts(), 1);

    // The result is in Redis, done.
    let keys = idempotency_keys(&mut observer).await;
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert!(
        keys[0].starts_with("tools:idem:s:create_ticket:"),
        "{keys:?}"
    );
    let stored = entry(&mut observer, &keys[0]).await.expect("kept");
    assert_eq!(stored["state"], "done", "{stored}");

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

    // Other arguments are another call.
    let other_call = other
        .execute(&session, [ticket("3", json!({ "subject": "on fire" }))])
        .await;
    assert!(!only(&other_call).replayed());
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 2);
    assert_eq!(idempotency_keys(&mut observer).await.len(), 2);
}

#[tokio::test]
async fn a_failure_is_not_kept_in_redis() {
    let server = RedisServer::start();
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, connect(&server).await, |builder| builder);
    let mut observer = observer(&server).await;
    let session = Session::new("s");
    let call = |id: &str| [ticket(id, json!({ "subject": "x" }))];
    desk.failures_left.store(1, Ordering::SeqCst);

    let failed = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&failed), [Some("execution_failed")]);
    // Its claim was released: nothing is left in Redis.
    assert_eq!(idempotency_keys(&mut observer).await, Vec::<String>::new());

    let retried = runtime.execute(&session, call("2")).await;
    assert_eq!(kinds(&retried), [None]);
    assert!(!only(&retried).replayed(), "the failure was not replayed");
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 2);

    let replayed = runtime.execute(&session, call("3")).await;
    assert!(only(&replayed).replayed());
    assert_eq!(only(&replayed).content(), only(&retried).content());
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn the_window_counts_from_the_first_call() {
    const TTL: Duration = Duration::from_secs(2);
    let server = RedisServer::start();
    let desk = Arc::new(Desk::default());
    // The call can run 800 ms at most, less than the window: the window decides.
    let runtime = build(&desk, connect(&server).await, |builder| {
        builder
            .idempotency_ttl(TTL)
            .retry(RetryPolicy::none())
            .default_timeout(Some(Duration::from_millis(800)))
    });
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
    // later) or from the replay, this call would still be answered from Redis.
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

#[tokio::test]
async fn sessions_are_kept_apart_unless_a_scope_joins_them() {
    let server = RedisServer::start();
    let mut observer = observer(&server).await;
    let call = || [ticket("1", json!({ "subject": "x" }))];

    // By default the scope is the session: each session runs the call.
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, connect(&server).await, |builder| builder);
    for session in ["a", "b"] {
        let report = runtime.execute(&Session::new(session), call()).await;
        assert!(!only(&report).replayed());
    }
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 2);
    let keys = idempotency_keys(&mut observer).await;
    assert_eq!(keys.len(), 2);
    assert!(
        keys[0].starts_with("tools:idem:a:create_ticket:"),
        "{keys:?}"
    );
    assert!(
        keys[1].starts_with("tools:idem:b:create_ticket:"),
        "{keys:?}"
    );

    // A tenant scope joins the sessions, across instances.
    let desk = Arc::new(Desk::default());
    let tenant = |builder: RuntimeBuilder<Desk>| builder.idempotency_scope(|_| "t-1".to_owned());
    let one = build(&desk, connect(&server).await, tenant);
    let two = build(&desk, connect(&server).await, tenant);
    let first = one.execute(&Session::new("a"), call()).await;
    let second = two.execute(&Session::new("b"), call()).await;
    assert!(!only(&first).replayed());
    assert!(only(&second).replayed());
    assert_eq!(only(&second).content(), only(&first).content());
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);
    // Another tenant is another scope.
    let other = build(&desk, connect(&server).await, |builder| {
        builder.idempotency_scope(|_| "t-2".to_owned())
    });
    assert!(
        !only(&other.execute(&Session::new("a"), call()).await).replayed(),
        "another tenant"
    );
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn an_explicit_key_reused_with_other_arguments_is_refused() {
    let server = RedisServer::start();
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, connect(&server).await, |builder| builder);
    let other = build(&desk, connect(&server).await, |builder| builder);
    let session = Session::new("s");

    let first = runtime
        .execute(
            &session,
            [ticket("1", json!({ "subject": "x" })).with_idempotency_key("req-42")],
        )
        .await;
    assert_eq!(kinds(&first), [None]);
    // The other instance reads the first call's arguments digest from Redis.
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
    assert!(report.observations()[0].replayed());
    assert!(!report.observations()[1].replayed());
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);
    // The tool read the key, to forward it downstream.
    let keys = desk
        .keys
        .lock()
        .map(|keys| keys.clone())
        .unwrap_or_default();
    assert_eq!(keys, [Some("req-42".to_owned())]);
}

/// One `idempotent_worker` process, started and `ready`.
struct Worker {
    child: std::process::Child,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Worker {
    fn start(url: &str, prefix: &str, others: usize, call_id: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_idempotent_worker"))
            .args([url, prefix, &others.to_string(), call_id])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("the worker starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the worker writes");
        assert_eq!(line.trim(), "ready", "the worker did not get ready");
        Self { child, stdout }
    }

    fn go(&mut self) {
        let mut stdin = self.child.stdin.take().expect("piped");
        stdin.write_all(b"go\n").expect("the worker reads");
    }

    /// The worker's observation, once it has exited.
    fn observation(mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).expect("the worker writes");
        let status = self.child.wait().expect("the worker exits");
        assert!(status.success(), "the worker failed: {status}");
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line:?}"))
    }
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
        .map(|index| Worker::start(&server.url(), "race", WORKERS - 1, &format!("c-{index}")))
        .collect();
    for worker in &mut workers {
        worker.go();
    }
    let observations: Vec<Value> = workers.into_iter().map(Worker::observation).collect();

    let mut counter = async |name: &str| -> Option<u64> {
        redis::cmd("GET")
            .arg(format!("race:{name}"))
            .query_async(&mut observer)
            .await
            .expect("GET answers")
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

/// Log lines, for the test that reads them.
#[derive(Clone, Default)]
struct Log(Arc<Mutex<Vec<u8>>>);

impl Write for Log {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut log) = self.0.lock() {
            log.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Log {
    fn text(&self) -> String {
        self.0
            .lock()
            .map(|log| String::from_utf8_lossy(&log).into_owned())
            .unwrap_or_default()
    }
}

#[tokio::test]
async fn a_server_killed_mid_call_keeps_the_result_and_runs_no_repeat() {
    // The subscriber is this thread's: the test's runtime and its tasks run here.
    let log = Log::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let log = log.clone();
            move || log.clone()
        })
        .with_ansi(false)
        .with_max_level(tracing::Level::WARN)
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

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
    let short = build(&desk, connect(&server).await, |builder| {
        builder
            .idempotency_ttl(Duration::from_millis(300))
            .default_timeout(None)
    });
    let long = build(&desk, connect(&server).await, |builder| {
        builder
            .idempotency_ttl(Duration::from_secs(60))
            .concurrent_duplicates(ConcurrentDuplicates::Refuse)
    });
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
async fn a_replay_runs_neither_retry_nor_timeout() {
    let server = RedisServer::start();
    let mut observer = observer(&server).await;
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, connect(&server).await, |builder| {
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
    // fail again). The replay runs nothing: no attempt, no timeout, one round trip.
    desk.ledger_slow.store(true, Ordering::SeqCst);
    let before = command_calls(&mut observer).await;
    let replay = runtime.execute(&session, call("2")).await;
    let hit = delta(&before, &command_calls(&mut observer).await);
    let replay = only(&replay);
    assert_eq!(replay.error_kind(), None, "{replay:?}");
    assert!(replay.replayed());
    assert_eq!(replay.attempts(), 0);
    assert_eq!(replay.content(), only(&first).content());
    assert_eq!(desk.ledger_runs.load(Ordering::SeqCst), 2);
    assert_eq!(hit.get("evalsha"), Some(&1), "{hit:?}");
}

#[tokio::test]
async fn a_repeat_of_a_write_stopped_mid_flight_is_told_at_once() {
    const WAIT: Duration = Duration::from_secs(10);
    let server = RedisServer::start();
    let mut observer = observer(&server).await;
    let desk = Arc::new(Desk::default());
    let runtime = build(&desk, connect(&server).await, |builder| {
        builder.retry(RetryPolicy::none()).idempotency_wait(WAIT)
    });
    let session = Session::new("s");
    let call = |id: &str| [ToolCall::new(id, "slow_write", json!({ "order": "A-1" }))];

    let first = runtime.execute(&session, call("1")).await;
    assert_eq!(
        kinds(&first),
        [Some("timeout")],
        "{:?}",
        first.observations()
    );
    assert_eq!(desk.slow_runs.load(Ordering::SeqCst), 1);

    // Nothing runs the first call any more, and it may have done its work: a repeat under
    // another call id is told so after one look, without waiting for an end that never comes.
    let before = command_calls(&mut observer).await;
    let started = Instant::now();
    let repeat = runtime.execute(&session, call("2")).await;
    let took = started.elapsed();
    let looks = delta(&before, &command_calls(&mut observer).await);
    let repeat = only(&repeat);
    assert_eq!(repeat.error_kind(), Some("outcome_unknown"), "{repeat:?}");
    assert_eq!(looks.get("evalsha"), Some(&1), "one round trip: {looks:?}");
    assert!(took < WAIT / 5, "answered after {took:?}");
    let left = repeat
        .error()
        .and_then(ToolError::details)
        .and_then(|details| details["expires_in_ms"].as_u64())
        .expect("the time left");
    assert!((1..=600_000).contains(&left), "{left}");
    // The same call again, under its own id: not taken over either.
    let resumed = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&resumed), [Some("outcome_unknown")]);
    assert_eq!(desk.slow_runs.load(Ordering::SeqCst), 1, "never run again");
}

#[tokio::test]
async fn a_claim_the_server_applied_after_the_runtime_gave_up_does_not_hold_the_key() {
    let server = RedisServer::start();
    let mut observer = observer(&server).await;
    let desk = Arc::new(Desk::default());
    let store = RedisStore::connect_with_timeout(&server.url(), Duration::from_millis(200))
        .await
        .expect("the store connects");
    let runtime = build(&desk, store, |builder| {
        builder.idempotency_wait(Duration::from_secs(5))
    });
    let session = Session::new("s");
    let call = |id: &str| [ticket(id, json!({ "subject": "late" }))];

    // Redis holds every write for a second: the claim is answered unavailable after 200 ms,
    // and Redis applies it when the pause ends.
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(1_000)
        .arg("WRITE")
        .query_async(&mut observer)
        .await
        .expect("CLIENT PAUSE answers");
    let first = runtime.execute(&session, call("1")).await;
    assert_eq!(kinds(&first), [Some("idempotency_unavailable")]);
    // A write of a plain connection of its own returns when the pause has ended.
    tests::redis_server::command(&format!("127.0.0.1:{}", server.port()), &["INCR", "probe"])
        .expect("INCR answers after the pause");

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
