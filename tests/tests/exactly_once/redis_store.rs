//! `RedisStore` against a real `redis-server` (started per test on a free loopback port):
//! idempotency claims, results, releases and their window; the key layout; round trips as
//! Redis counts them (`INFO commandstats`); a dead or hung server answered within the bound; a
//! claim the server applies after the store gave up on it lapses with its short lease; a claim
//! left abandoned is answered at once; what connecting says about the server's persistence;
//! pending approvals kept, listed oldest first and taken once.

use std::collections::BTreeMap;
use std::io;
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use serde_json::json;
use tests::redis_server::RedisServer;
use tool_runtime::{
    ApprovalStore, Claim, Holder, IdempotencyKey, IdempotencyStore, Lookup, PendingApproval,
    Preview, RedisStore, RiskLevel, SharedFailure, StoreError, StoredResult,
};

/// The bound the tests give the store where they measure it.
const BOUND: Duration = Duration::from_millis(500);

/// Slack for a loaded CI machine on top of a bound.
const SLACK: Duration = Duration::from_millis(700);

fn key(scope: &str, tool: &str, digest: &str) -> IdempotencyKey {
    IdempotencyKey {
        scope: scope.into(),
        tool: tool.into(),
        digest: digest.into(),
        arguments_digest: format!("args-{digest}"),
        holder: None,
    }
}

fn result(output: &str) -> StoredResult {
    StoredResult {
        arguments_digest: "args".into(),
        output: output.into(),
        page: Some(r#"{"next":"2"}"#.into()),
    }
}

fn failure() -> SharedFailure {
    SharedFailure {
        kind: "execution_failed".into(),
        message: "the upstream refused".into(),
    }
}

async fn connect(server: &RedisServer) -> RedisStore {
    RedisStore::connect(&server.url())
        .await
        .expect("the store connects")
}

/// A connection of its own, to look at what the store wrote.
async fn observer(server: &RedisServer) -> MultiplexedConnection {
    redis::Client::open(server.url())
        .expect("a valid url")
        .get_multiplexed_async_connection()
        .await
        .expect("the observer connects")
}

async fn claimed(store: &RedisStore, key: &IdempotencyKey, ttl: Duration) -> Claim {
    match store.claim(key.clone(), ttl).await.expect("claim answers") {
        Lookup::Claimed(claim) => claim,
        other => panic!("expected a claim, found {other:?}"),
    }
}

async fn pttl(connection: &mut MultiplexedConnection, key: &str) -> i64 {
    redis::cmd("PTTL")
        .arg(key)
        .query_async(connection)
        .await
        .expect("PTTL answers")
}

async fn get(connection: &mut MultiplexedConnection, key: &str) -> Option<String> {
    redis::cmd("GET")
        .arg(key)
        .query_async(connection)
        .await
        .expect("GET answers")
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

fn calls(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
    pairs
        .iter()
        .map(|(name, calls)| ((*name).to_owned(), *calls))
        .collect()
}

#[tokio::test]
async fn claim_complete_then_replay() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let key = key("s-1", "refund", "d1");
    let ttl = Duration::from_secs(60);

    let claim = claimed(&store, &key, ttl).await;
    assert_eq!(claim.holder.len(), 32, "128 random bits, hex");
    assert_eq!(
        store.claim(key.clone(), ttl).await.expect("answers"),
        Lookup::Pending,
        "held by the first claim"
    );
    store
        .complete(key.clone(), claim, result("\"refunded\""))
        .await
        .expect("kept");
    for _ in 0..2 {
        assert_eq!(
            store.claim(key.clone(), ttl).await.expect("answers"),
            Lookup::Done(result("\"refunded\"")),
            "replayed"
        );
    }

    // Another process (another connection) sees the same result.
    let other = connect(&server).await;
    assert_eq!(
        other.claim(key.clone(), ttl).await.expect("answers"),
        Lookup::Done(result("\"refunded\""))
    );
}

#[tokio::test]
async fn values_follow_the_documented_layout() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    let key = key("s-1", "refund", "d1");
    let redis_key = "tools:idem:s-1:refund:d1";
    assert_eq!(store.idempotency_key(&key), redis_key);

    let claim = claimed(&store, &key, Duration::from_secs(60)).await;
    let mut pending: serde_json::Value =
        serde_json::from_str(&get(&mut observer, redis_key).await.expect("written")).expect("JSON");
    // The claim is stamped with the server's time, in milliseconds.
    let since = pending
        .as_object_mut()
        .and_then(|fields| fields.remove("since"))
        .and_then(|since| since.as_u64())
        .expect("a pending value carries when it was claimed");
    assert!(since > 1_700_000_000_000, "{since}");
    let holder = pending
        .as_object_mut()
        .and_then(|fields| fields.remove("holder"))
        .and_then(|holder| holder.as_str().map(str::to_owned))
        .expect("a pending value carries its holder's token");
    assert_eq!(
        holder.len(),
        32,
        "a random token for a call without its own"
    );
    assert_eq!(
        pending,
        json!({
            "state": "pending", "lease": claim.holder, "arguments_digest": "args-d1",
            "confirmed": true
        }),
        "a claim answered is confirmed before it is handed out"
    );

    store
        .complete(key.clone(), claim, result("[1,2]"))
        .await
        .expect("kept");
    let done: serde_json::Value =
        serde_json::from_str(&get(&mut observer, redis_key).await.expect("written")).expect("JSON");
    assert_eq!(
        done,
        json!({"state": "done", "result": {
            "arguments_digest": "args", "output": "[1,2]", "page": "{\"next\":\"2\"}"
        }})
    );

    let prefixed = connect(&server).await.with_prefix("agent");
    assert_eq!(prefixed.prefix(), "agent");
    claimed(&prefixed, &key, Duration::from_secs(60)).await;
    assert!(
        get(&mut observer, "agent:idem:s-1:refund:d1")
            .await
            .is_some()
    );
}

#[tokio::test]
async fn release_frees_the_key() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let key = key("s-1", "refund", "d1");
    let ttl = Duration::from_secs(60);

    let first = claimed(&store, &key, ttl).await;
    store
        .release(key.clone(), first.clone(), failure())
        .await
        .expect("released");
    let second = claimed(&store, &key, ttl).await;
    assert_ne!(first.holder, second.holder);

    // Releasing twice, or with a stale claim, changes nothing.
    store
        .release(key.clone(), first.clone(), failure())
        .await
        .expect("answers");
    assert_eq!(
        store.claim(key.clone(), ttl).await.expect("answers"),
        Lookup::Pending
    );
    // A completed key is never released.
    store
        .complete(key.clone(), second.clone(), result("1"))
        .await
        .expect("kept");
    store
        .release(key.clone(), second, failure())
        .await
        .expect("answers");
    assert_eq!(
        store.claim(key.clone(), ttl).await.expect("answers"),
        Lookup::Done(result("1"))
    );
}

#[tokio::test]
async fn a_late_holder_never_touches_the_next_claim() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let key = key("s-1", "refund", "d1");

    // The first execution outlives its window; a second one claims the key.
    let old = claimed(&store, &key, Duration::from_millis(100)).await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let new = claimed(&store, &key, Duration::from_secs(60)).await;

    // The old holder's release and completion arrive late: both are no-ops.
    store
        .release(key.clone(), old.clone(), failure())
        .await
        .expect("answers");
    assert_eq!(
        store
            .claim(key.clone(), Duration::from_secs(60))
            .await
            .expect("answers"),
        Lookup::Pending,
        "the new claim survives the late release"
    );
    store
        .complete(key.clone(), old, result("\"stale\""))
        .await
        .expect("answers");
    assert_eq!(
        store
            .claim(key.clone(), Duration::from_secs(60))
            .await
            .expect("answers"),
        Lookup::Pending,
        "a late completion keeps nothing"
    );

    store
        .complete(key.clone(), new, result("\"fresh\""))
        .await
        .expect("kept");
    assert_eq!(
        store
            .claim(key.clone(), Duration::from_secs(60))
            .await
            .expect("answers"),
        Lookup::Done(result("\"fresh\""))
    );
}

#[tokio::test]
async fn the_window_counts_from_the_first_claim() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;

    // Completing keeps the remaining time (PTTL), it does not start the window again.
    let long = key("s-1", "refund", "long");
    let claim = claimed(&store, &long, Duration::from_secs(10)).await;
    let at_claim = pttl(&mut observer, &store.idempotency_key(&long)).await;
    assert!((9_000..=10_000).contains(&at_claim), "PTTL {at_claim}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    store
        .complete(long.clone(), claim, result("1"))
        .await
        .expect("kept");
    let at_complete = pttl(&mut observer, &store.idempotency_key(&long)).await;
    assert!(
        (1..=at_claim - 250).contains(&at_complete),
        "PTTL {at_complete} after completing, {at_claim} at the claim"
    );

    // A result expires with the first claim's window, however late it was completed.
    let short = key("s-1", "refund", "short");
    let claim = claimed(&store, &short, Duration::from_millis(600)).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    store
        .complete(short.clone(), claim, result("2"))
        .await
        .expect("kept");
    assert_eq!(
        store
            .claim(short.clone(), Duration::from_millis(600))
            .await
            .expect("answers"),
        Lookup::Done(result("2"))
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    claimed(&store, &short, Duration::from_millis(600)).await;
}

#[tokio::test]
async fn scopes_tools_and_prefixes_are_kept_apart() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let ttl = Duration::from_secs(60);

    let base = key("s-1", "refund", "d1");
    let claim = claimed(&store, &base, ttl).await;
    store
        .complete(base.clone(), claim, result("1"))
        .await
        .expect("kept");

    // Same digest, another scope, another tool, another digest: each is free.
    for other in [
        key("s-2", "refund", "d1"),
        key("s-1", "cancel", "d1"),
        key("s-1", "refund", "d2"),
    ] {
        claimed(&store, &other, ttl).await;
    }
    // Another prefix is another application.
    claimed(&store.clone().with_prefix("agent"), &base, ttl).await;

    // Separators inside a scope or a tool cannot make two keys meet.
    let split_one = key("a:b", "c", "d1");
    let split_two = key("a", "b:c", "d1");
    assert_ne!(
        store.idempotency_key(&split_one),
        store.idempotency_key(&split_two)
    );
    assert_eq!(store.idempotency_key(&split_one), "tools:idem:a%3Ab:c:d1");
    let claim = claimed(&store, &split_one, ttl).await;
    store
        .complete(split_one.clone(), claim, result("3"))
        .await
        .expect("kept");
    claimed(&store, &split_two, ttl).await;
    claimed(&store, &key("a%3Ab", "c", "d1"), ttl).await;
}

#[tokio::test]
async fn round_trips_as_redis_counts_them() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    let ttl = Duration::from_secs(60);
    let key = key("s-1", "refund", "d1");

    // A claim that wins: the claim (TIME, SET NX with the lease), then its confirmation
    // (GET, TIME, SET PX with the window). Two EVALSHA.
    let before = command_calls(&mut observer).await;
    let claim = claimed(&store, &key, ttl).await;
    let won = delta(&before, &command_calls(&mut observer).await);
    assert_eq!(
        won,
        calls(&[("evalsha", 2), ("get", 1), ("set", 2), ("time", 2)])
    );
    // A first run that succeeds: that, then the completion (GET, SET KEEPTTL). Three EVALSHA.
    store
        .complete(key.clone(), claim, result("1"))
        .await
        .expect("kept");
    let miss = delta(&before, &command_calls(&mut observer).await);
    assert_eq!(
        miss,
        calls(&[("evalsha", 3), ("get", 2), ("set", 3), ("time", 2)])
    );

    // A hit: one EVALSHA (its TIME, its SET NX fails, its GET reads the result).
    let before = command_calls(&mut observer).await;
    assert_eq!(
        store.claim(key.clone(), ttl).await.expect("answers"),
        Lookup::Done(result("1"))
    );
    let hit = delta(&before, &command_calls(&mut observer).await);
    assert_eq!(
        hit,
        calls(&[("evalsha", 1), ("get", 1), ("set", 1), ("time", 1)])
    );

    // A first run that fails: the claim, its confirmation, then the release.
    let other = self::key("s-1", "refund", "d2");
    let before = command_calls(&mut observer).await;
    let claim = claimed(&store, &other, ttl).await;
    store
        .release(other.clone(), claim, failure())
        .await
        .expect("released");
    let failed = delta(&before, &command_calls(&mut observer).await);
    assert_eq!(
        failed,
        calls(&[
            ("del", 1),
            ("evalsha", 3),
            ("get", 2),
            ("set", 2),
            ("time", 2)
        ])
    );

    // Approvals: one EVALSHA each.
    let before = command_calls(&mut observer).await;
    store.put(pending("s-1", "r-1")).await.expect("kept");
    assert_eq!(
        delta(&before, &command_calls(&mut observer).await)["evalsha"],
        1
    );
    let before = command_calls(&mut observer).await;
    assert_eq!(store.pending("s-1").await.expect("listed").len(), 1);
    assert_eq!(
        delta(&before, &command_calls(&mut observer).await)["evalsha"],
        1
    );
    let before = command_calls(&mut observer).await;
    assert!(store.take("s-1", "r-1").await.expect("taken").is_some());
    assert_eq!(
        delta(&before, &command_calls(&mut observer).await)["evalsha"],
        1
    );
}

#[tokio::test]
async fn a_flushed_script_cache_costs_one_reload() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    let _: () = redis::cmd("SCRIPT")
        .arg("FLUSH")
        .query_async(&mut observer)
        .await
        .expect("flushed");

    let key = key("s-1", "refund", "d1");
    claimed(&store, &key, Duration::from_secs(60)).await;
    assert_eq!(
        store
            .claim(key.clone(), Duration::from_secs(60))
            .await
            .expect("answers"),
        Lookup::Pending
    );
}

#[tokio::test]
async fn wait_sees_the_end_of_the_holding_execution() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let ttl = Duration::from_secs(60);

    // The holder completes: the waiter gets the result.
    let done = key("s-1", "refund", "done");
    let claim = claimed(&store, &done, ttl).await;
    let completer = {
        let (store, done) = (store.clone(), done.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            store.complete(done, claim, result("1")).await
        })
    };
    let started = Instant::now();
    assert_eq!(
        store
            .wait(done.clone(), ttl, Duration::from_secs(5))
            .await
            .expect("answers"),
        Lookup::Done(result("1"))
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    completer.await.expect("joined").expect("kept");

    // The holder fails: the waiter claims the key.
    let failed = key("s-1", "refund", "failed");
    let claim = claimed(&store, &failed, ttl).await;
    let releaser = {
        let (store, failed) = (store.clone(), failed.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            store.release(failed, claim, failure()).await
        })
    };
    assert!(matches!(
        store
            .wait(failed.clone(), ttl, Duration::from_secs(5))
            .await
            .expect("answers"),
        Lookup::Claimed(_)
    ));
    releaser.await.expect("joined").expect("released");

    // The holder goes on: the waiter gives up after `wait`.
    let held = key("s-1", "refund", "held");
    claimed(&store, &held, ttl).await;
    let started = Instant::now();
    assert_eq!(
        store
            .wait(held.clone(), ttl, Duration::from_millis(300))
            .await
            .expect("answers"),
        Lookup::Pending
    );
    let waited = started.elapsed();
    assert!(
        (Duration::from_millis(300)..Duration::from_millis(300) + SLACK).contains(&waited),
        "{waited:?}"
    );
}

fn assert_prompt_error<T: std::fmt::Debug>(
    what: &str,
    started: Instant,
    answer: Result<T, impl std::fmt::Display>,
) {
    let took = started.elapsed();
    match answer {
        Err(error) => assert!(took < BOUND + SLACK, "{what}: {error} after {took:?}"),
        Ok(value) => panic!("{what}: expected an error, got {value:?}"),
    }
}

#[tokio::test]
async fn a_dead_server_is_an_error_within_the_bound() {
    let mut server = RedisServer::start();
    let store = RedisStore::connect_with_timeout(&server.url(), BOUND)
        .await
        .expect("connects");
    assert_eq!(store.command_timeout(), BOUND);
    let key = key("s-1", "refund", "d1");
    let claim = claimed(&store, &key, Duration::from_secs(60)).await;
    server.kill();

    // Each operation, in turn, while the connection manager tries to reconnect.
    for _ in 0..2 {
        let started = Instant::now();
        let answer = store.claim(key.clone(), Duration::from_secs(60)).await;
        assert!(matches!(answer, Err(StoreError(_))), "{answer:?}");
        assert_prompt_error("claim", started, answer);
        let started = Instant::now();
        let answer = store
            .wait(
                key.clone(),
                Duration::from_secs(60),
                Duration::from_millis(50),
            )
            .await;
        assert_prompt_error("wait", started, answer);
        let started = Instant::now();
        let answer = store
            .complete(key.clone(), claim.clone(), result("1"))
            .await;
        assert_prompt_error("complete", started, answer);
        let started = Instant::now();
        let answer = store.release(key.clone(), claim.clone(), failure()).await;
        assert_prompt_error("release", started, answer);
        let started = Instant::now();
        let answer = store.put(pending("s-1", "r-1")).await;
        assert_prompt_error("put", started, answer);
        let started = Instant::now();
        let answer = store.pending("s-1").await;
        assert_prompt_error("pending", started, answer);
        let started = Instant::now();
        let answer = store.take("s-1", "r-1").await;
        assert_prompt_error("take", started, answer);
    }

    // Connecting to a port where nothing listens fails promptly too.
    let started = Instant::now();
    let answer = RedisStore::connect_with_timeout(&server.url(), BOUND).await;
    assert_prompt_error("connect", started, answer);
    assert!(RedisStore::connect("not a url").await.is_err());
}

#[tokio::test]
async fn a_hung_server_is_an_error_within_the_bound_and_a_resumed_one_answers() {
    let server = RedisServer::start();
    let store = RedisStore::connect_with_timeout(&server.url(), BOUND)
        .await
        .expect("connects");
    let key = key("s-1", "refund", "d1");
    server.pause();
    let started = Instant::now();
    let answer = store.claim(key.clone(), Duration::from_secs(60)).await;
    assert_prompt_error("claim", started, answer);
    let started = Instant::now();
    let answer = store.take("s-1", "r-1").await;
    let error = answer.as_ref().err().map(io::Error::kind);
    assert_prompt_error("take", started, answer);
    assert_eq!(error, Some(io::ErrorKind::TimedOut));

    server.resume();
    // The connection comes back (the manager reconnects if the timeout dropped it).
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match store.claim(key.clone(), Duration::from_secs(60)).await {
            Ok(Lookup::Claimed(_) | Lookup::Pending) => break,
            other if Instant::now() >= deadline => panic!("never answered again: {other:?}"),
            _ => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
}

fn pending(session: &str, request_id: &str) -> PendingApproval {
    PendingApproval {
        request_id: request_id.into(),
        session: session.into(),
        principal: Some("ada".into()),
        call_id: format!("call-{request_id}"),
        tool: "refund".into(),
        version: Some("2".into()),
        arguments: json!({"order": "A-1024", "amount": 20}),
        sealed_arguments: "v1.sealed".to_owned().into(),
        arguments_digest: "digest".into(),
        reason: "refunds need a person".into(),
        risk: RiskLevel::Write,
        preview: Some(Preview::new("Refund 20 on A-1024")),
        idempotency_key: Some("req-42".into()),
    }
}

fn ids(requests: &[PendingApproval]) -> Vec<&str> {
    requests
        .iter()
        .map(|request| request.request_id.as_str())
        .collect()
}

#[tokio::test]
async fn approvals_are_listed_oldest_first_and_taken_once() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;

    // Arrival order differs from the ids' order.
    for (session, id) in [
        ("s-1", "r-b"),
        ("s-2", "r-x"),
        ("s-1", "r-a"),
        ("s-1", "r:c"),
    ] {
        store.put(pending(session, id)).await.expect("kept");
    }
    assert_eq!(
        ids(&store.pending("s-1").await.expect("listed")),
        ["r-b", "r-a", "r:c"]
    );
    assert_eq!(ids(&store.pending("s-2").await.expect("listed")), ["r-x"]);
    assert!(store.pending("s-3").await.expect("listed").is_empty());

    let duplicate = store.put(pending("s-1", "r-a")).await.expect_err("refused");
    assert_eq!(duplicate.kind(), io::ErrorKind::AlreadyExists);
    store
        .put(pending("s-2", "r-a"))
        .await
        .expect("another session");

    // Where they are, for how long.
    let request_key = "tools:approval:s-1:r-a";
    assert_eq!(store.approval_key("s-1", "r-a"), request_key);
    assert_eq!(store.approval_index_key("s-1"), "tools:approvals:s-1");
    let kept: PendingApproval =
        serde_json::from_str(&get(&mut observer, request_key).await.expect("written"))
            .expect("a PendingApproval");
    assert_eq!(kept, pending("s-1", "r-a"));
    let ttl = pttl(&mut observer, request_key).await;
    assert!((86_000_000..=86_400_000).contains(&ttl), "PTTL {ttl}");

    assert_eq!(store.take("s-2", "r-b").await.expect("answers"), None);
    assert_eq!(
        store.take("s-1", "r-a").await.expect("answers"),
        Some(pending("s-1", "r-a"))
    );
    assert_eq!(
        store.take("s-1", "r-a").await.expect("answers"),
        None,
        "consumed once"
    );
    assert_eq!(get(&mut observer, request_key).await, None);
    assert_eq!(
        ids(&store.pending("s-1").await.expect("listed")),
        ["r-b", "r:c"]
    );
    // Taken, the id can be pending again (a new request), and it is the newest.
    store.put(pending("s-1", "r-a")).await.expect("kept");
    assert_eq!(
        ids(&store.pending("s-1").await.expect("listed")),
        ["r-b", "r:c", "r-a"]
    );
}

#[tokio::test]
async fn approvals_expire() {
    let server = RedisServer::start();
    let store = connect(&server)
        .await
        .with_approval_ttl(Duration::from_millis(200));
    let mut observer = observer(&server).await;
    store.put(pending("s-1", "r-1")).await.expect("kept");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(store.pending("s-1").await.expect("listed").is_empty());
    assert_eq!(store.take("s-1", "r-1").await.expect("answers"), None);
    let index: i64 = redis::cmd("EXISTS")
        .arg(store.approval_index_key("s-1"))
        .query_async(&mut observer)
        .await
        .expect("EXISTS answers");
    assert_eq!(index, 0, "the index expires with its newest request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_takes_give_a_request_to_exactly_one() {
    let server = RedisServer::start();
    // Two processes: two stores, two connections.
    let first = connect(&server).await;
    let second = connect(&server).await;
    for index in 0..50 {
        let id = format!("r-{index}");
        first.put(pending("s-1", &id)).await.expect("kept");
        let (a, b) = {
            let (first, second) = (first.clone(), second.clone());
            let (id_a, id_b) = (id.clone(), id.clone());
            let a = tokio::spawn(async move { first.take("s-1", &id_a).await });
            let b = tokio::spawn(async move { second.take("s-1", &id_b).await });
            (a, b)
        };
        let a = a.await.expect("joined").expect("answers");
        let b = b.await.expect("joined").expect("answers");
        assert!(
            a.is_some() != b.is_some(),
            "{id}: exactly one take gets it ({a:?}, {b:?})"
        );
        assert_eq!(a.or(b), Some(pending("s-1", &id)));
    }
    assert!(first.pending("s-1").await.expect("listed").is_empty());
}

#[tokio::test]
async fn a_call_takes_over_its_own_claim_only_once_it_is_abandoned() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let ttl = Duration::from_secs(60);
    let own = |token: &str| {
        let mut key = key("s-1", "refund", "d1");
        key.holder = Some(Holder {
            token: token.into(),
            stale_after: Duration::from_millis(300),
        });
        key
    };
    let first = claimed(&store, &own("call-1"), ttl).await;
    // The same call at once (it could still be running), and another call: both wait.
    for key in [own("call-1"), own("call-2")] {
        assert_eq!(
            store.claim(key, ttl).await.expect("answers"),
            Lookup::Pending
        );
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    // Abandoned: another call still waits; the call itself takes its claim over, once.
    assert_eq!(
        store.claim(own("call-2"), ttl).await.expect("answers"),
        Lookup::Pending
    );
    let taken = claimed(&store, &own("call-1"), ttl).await;
    assert_ne!(
        taken.holder, first.holder,
        "a takeover is a claim of its own"
    );
    assert_eq!(
        store.claim(own("call-1"), ttl).await.expect("answers"),
        Lookup::Pending,
        "a takeover restarts the clock: a second resume at once waits"
    );
    // The first run was only paused: coming back, it can neither free nor complete the claim
    // taken over from it.
    store
        .release(own("call-1"), first.clone(), failure())
        .await
        .expect("answers");
    store
        .complete(own("call-1"), first, result("stale"))
        .await
        .expect("answers");
    assert_eq!(
        store.claim(own("call-2"), ttl).await.expect("answers"),
        Lookup::Pending
    );
    store
        .complete(own("call-1"), taken, result("1"))
        .await
        .expect("kept");
    assert_eq!(
        store.claim(own("call-2"), ttl).await.expect("answers"),
        Lookup::Done(result("1"))
    );
}

#[tokio::test]
async fn a_claim_taken_over_lasts_as_long_as_the_call_can_run_again() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let own = |token: &str| {
        let mut key = key("s-1", "refund", "d1");
        key.holder = Some(Holder {
            token: token.into(),
            stale_after: Duration::from_millis(1_500),
        });
        key
    };
    let window = Duration::from_millis(2_000);
    claimed(&store, &own("call-1"), window).await;
    tokio::time::sleep(Duration::from_millis(1_700)).await;
    claimed(&store, &own("call-1"), window).await;
    // Past the window from the first claim, the run taken over may still be going.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(
        store.claim(own("call-2"), window).await.expect("answers"),
        Lookup::Pending
    );
}

#[tokio::test]
async fn an_abandoned_claim_is_answered_at_once_and_never_taken_over() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    let ttl = Duration::from_secs(60);
    let own = |token: &str| {
        let mut key = key("s-1", "refund", "d2");
        key.holder = Some(Holder {
            token: token.into(),
            stale_after: Duration::from_millis(200),
        });
        key
    };
    let claim = claimed(&store, &own("call-1"), ttl).await;
    store
        .abandon(own("call-1"), claim)
        .await
        .expect("abandoned");
    let redis_key = store.idempotency_key(&own("call-1"));
    let value = get(&mut observer, &redis_key).await.expect("kept");
    tokio::time::sleep(Duration::from_millis(300)).await;

    // Another call, and the call itself past its bound: told at once, with the time left.
    for token in ["call-2", "call-1"] {
        let before = command_calls(&mut observer).await;
        let answer = store.claim(own(token), ttl).await.expect("answers");
        let left = pttl(&mut observer, &redis_key).await;
        match answer {
            Lookup::Abandoned {
                expires_in: Some(expires_in),
            } => {
                let expires_in = u64::try_from(expires_in.as_millis()).expect("fits");
                assert!(
                    (u64::try_from(left).expect("an expiry")..=60_000).contains(&expires_in),
                    "{token}: expires in {expires_in} ms, PTTL {left} after"
                );
            }
            other => panic!("{token}: expected the claim abandoned, found {other:?}"),
        }
        assert_eq!(
            delta(&before, &command_calls(&mut observer).await)["evalsha"],
            1,
            "{token}: one round trip"
        );
    }
    // A wait does not wait: one look, the same answer.
    let before = command_calls(&mut observer).await;
    let answer = store
        .wait(own("call-2"), ttl, Duration::from_secs(5))
        .await
        .expect("answers");
    assert!(
        matches!(
            answer,
            Lookup::Abandoned {
                expires_in: Some(_)
            }
        ),
        "{answer:?}"
    );
    assert_eq!(
        delta(&before, &command_calls(&mut observer).await)["evalsha"],
        1,
        "the wait looked once"
    );
    // The value was left as it was: pending, marked abandoned.
    assert_eq!(get(&mut observer, &redis_key).await, Some(value.clone()));
    let value: serde_json::Value = serde_json::from_str(&value).expect("JSON");
    assert_eq!(value["state"], "pending", "{value}");
    assert_eq!(value["abandoned"], true, "{value}");
}

/// Pauses every client's writes for `millis` (`CLIENT PAUSE .. WRITE`): what they send is
/// applied when the pause ends.
async fn pause_writes(connection: &mut MultiplexedConnection, millis: u64) {
    let _: () = redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(millis)
        .arg("WRITE")
        .query_async(connection)
        .await
        .expect("CLIENT PAUSE answers");
}

/// Returns once a pause of writes (shorter than 2 s) has ended: a write of a plain connection
/// of its own is held until then.
fn after_the_pause(server: &RedisServer) {
    tests::redis_server::command(&format!("127.0.0.1:{}", server.port()), &["INCR", "probe"])
        .expect("INCR answers after the pause");
}

#[tokio::test]
async fn a_claim_the_server_applies_after_the_store_gave_up_lapses_within_a_lease() {
    const TIMEOUT: Duration = Duration::from_millis(200);
    let server = RedisServer::start();
    let store = RedisStore::connect_with_timeout(&server.url(), TIMEOUT)
        .await
        .expect("connects");
    let mut observer = observer(&server).await;
    let window = Duration::from_secs(600);
    let first = key("s-1", "refund", "d1");
    let redis_key = store.idempotency_key(&first);

    // The server holds the claim past the timeout: the store answers an error...
    pause_writes(&mut observer, 1_000).await;
    let answer = store.claim(first.clone(), window).await;
    assert!(matches!(answer, Err(StoreError(_))), "{answer:?}");
    // ... and the server applies the claim when the pause ends. Nothing runs it: it must not
    // hold the key for the window, only for a short lease (twice the command timeout).
    after_the_pause(&server);
    if let Some(text) = get(&mut observer, &redis_key).await {
        let left = pttl(&mut observer, &redis_key).await;
        assert!(
            left <= 2 * i64::try_from(TIMEOUT.as_millis()).expect("fits"),
            "a claim nobody confirmed holds the key for {left} ms: {text}"
        );
        let value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(value["confirmed"], false, "{value}");
    }
    // Another holder waits no longer than the lease, and gets the key.
    let answer = store
        .wait(first.clone(), window, Duration::from_secs(3))
        .await
        .expect("answers");
    let Lookup::Claimed(claim) = answer else {
        panic!("the key was still held after the lease: {answer:?}");
    };
    // Claimed and confirmed: the key holds for the window from then on.
    let left = pttl(&mut observer, &redis_key).await;
    assert!((599_000..=600_000).contains(&left), "PTTL {left}");
    let value: serde_json::Value =
        serde_json::from_str(&get(&mut observer, &redis_key).await.expect("kept")).expect("JSON");
    assert_eq!(value["confirmed"], true, "{value}");
    assert_eq!(value["lease"], claim.holder.as_str(), "{value}");
}

/// Log lines, for the tests that read them.
#[derive(Clone, Default)]
struct Log(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Ok(mut log) = self.0.lock() {
            log.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
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

    /// The lines at `level` (`WARN`, `INFO`, ...).
    fn lines_at(&self, level: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter(|line| line.split_whitespace().nth(1) == Some(level))
            .map(str::to_owned)
            .collect()
    }
}

/// What connecting to a server started with `settings` logs, from `DEBUG` up.
async fn connect_logs(settings: &[&str]) -> Log {
    let log = Log::default();
    let subscriber = tracing_subscriber::fmt()
        .with_writer({
            let log = log.clone();
            move || log.clone()
        })
        .with_ansi(false)
        .with_max_level(tracing::Level::DEBUG)
        .finish();
    let server = RedisServer::start_with(settings);
    // The subscriber is this thread's: the test's runtime runs here.
    let _guard = tracing::subscriber::set_default(subscriber);
    RedisStore::connect(&server.url())
        .await
        .expect("the store connects");
    log
}

#[tokio::test]
async fn connect_warns_when_a_restart_would_forget_claims() {
    // No AOF, no snapshots: a restart forgets everything.
    let log = connect_logs(&["--appendonly", "no", "--save", ""]).await;
    let warnings = log.lines_at("WARN");
    assert!(
        warnings
            .iter()
            .any(|line| line.contains("appendonly no") && line.contains("runs the write again")),
        "{}",
        log.text()
    );

    // Snapshots only: a restart forgets what came after the last one.
    let log = connect_logs(&["--appendonly", "no", "--save", "3600 1"]).await;
    let warnings = log.lines_at("WARN");
    assert!(
        warnings
            .iter()
            .any(|line| line.contains("appendonly no") && line.contains("last snapshot")),
        "{}",
        log.text()
    );
}

#[tokio::test]
async fn connect_does_not_warn_when_the_server_keeps_an_append_only_file() {
    let log = connect_logs(&["--appendonly", "yes", "--appendfsync", "everysec"]).await;
    assert_eq!(log.lines_at("WARN"), Vec::<String>::new(), "{}", log.text());
    // What everysec still risks is said, once, less loudly.
    let infos = log.lines_at("INFO");
    assert!(
        infos
            .iter()
            .any(|line| line.contains("appendfsync everysec") && line.contains("second")),
        "{}",
        log.text()
    );

    let log = connect_logs(&["--appendonly", "yes", "--appendfsync", "always"]).await;
    assert_eq!(log.lines_at("WARN"), Vec::<String>::new(), "{}", log.text());
    assert_eq!(log.lines_at("INFO"), Vec::<String>::new(), "{}", log.text());
}

#[tokio::test]
async fn a_server_that_refuses_config_is_connected_to_and_said_so() {
    // As a managed service does: CONFIG is not available.
    let log = connect_logs(&["--rename-command", "CONFIG", ""]).await;
    assert_eq!(log.lines_at("WARN"), Vec::<String>::new(), "{}", log.text());
    let infos = log.lines_at("INFO");
    assert!(
        infos
            .iter()
            .any(|line| line.contains("persistence") && line.contains("appendonly yes")),
        "{}",
        log.text()
    );
}

#[tokio::test]
async fn a_call_claims_its_own_unconfirmed_claim_again_once_it_could_be_abandoned() {
    const TIMEOUT: Duration = Duration::from_millis(500);
    let server = RedisServer::start();
    let store = RedisStore::connect_with_timeout(&server.url(), TIMEOUT)
        .await
        .expect("connects");
    let mut observer = observer(&server).await;
    let window = Duration::from_secs(600);
    let own = |token: &str| {
        let mut key = key("s-1", "refund", "d3");
        key.holder = Some(Holder {
            token: token.into(),
            stale_after: Duration::from_millis(50),
        });
        key
    };
    let redis_key = store.idempotency_key(&own("call-1"));

    // The claim is applied after the store gave up: pending, never confirmed.
    pause_writes(&mut observer, 1_200).await;
    let answer = store.claim(own("call-1"), window).await;
    assert!(matches!(answer, Err(StoreError(_))), "{answer:?}");
    after_the_pause(&server);
    let value: serde_json::Value =
        serde_json::from_str(&get(&mut observer, &redis_key).await.expect("applied"))
            .expect("JSON");
    assert_eq!(value["confirmed"], false, "{value}");

    // Another call waits for it; the call itself claims it afresh (nothing ran under it).
    assert_eq!(
        store.claim(own("call-2"), window).await.expect("answers"),
        Lookup::Pending
    );
    tokio::time::sleep(Duration::from_millis(60)).await;
    let claim = claimed(&store, &own("call-1"), window).await;
    let value: serde_json::Value =
        serde_json::from_str(&get(&mut observer, &redis_key).await.expect("claimed"))
            .expect("JSON");
    assert_eq!(value["lease"], claim.holder.as_str(), "{value}");
    assert_eq!(value["confirmed"], true, "{value}");
    let left = pttl(&mut observer, &redis_key).await;
    assert!((599_000..=600_000).contains(&left), "PTTL {left}");
}
