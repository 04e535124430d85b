//! What `RedisStore` alone does, against a real `redis-server` (started per test on a free
//! loopback port): the key layout, and a window counted in the key's own expiry; round trips
//! as Redis counts them (`INFO commandstats`), an abandoned claim answered in one; a dead or
//! hung server answered within the bound; a claim the server applies after the store gave up
//! on it lapses with its short lease; what connecting says about the server's persistence;
//! pending approvals kept under their keys for a day, then expired.
//!
//! What every idempotency or approval store does, `RedisStore` included, is the conformance
//! suites' (`stores.rs`, `gates/approval_stores.rs`).

use std::io;
use std::time::{Duration, Instant};

use serde_json::json;
use tests::conformance::approval::pending;
use tests::conformance::idempotency::{claimed, failure, key, own, result};
use tests::log::Log;
use tests::redis_server::RedisServer;
use tests::redis_view::{
    after_the_pause, calls, command_calls, connect, delta, exists, get, observer, pause_writes,
    pttl,
};
use tool_runtime::approvals::{ApprovalStore, PendingApproval};
use tool_runtime::idempotency::{IdempotencyStore, Lookup, RedisStore, StoreError};

/// The bound the tests give the store where they measure it.
const BOUND: Duration = Duration::from_millis(500);

/// Slack for a loaded CI machine on top of a bound.
const SLACK: Duration = Duration::from_millis(700);

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
}

#[tokio::test]
async fn prefixes_keep_applications_apart_and_separators_are_escaped_in_keys() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let ttl = Duration::from_secs(60);

    let base = key("s-1", "refund", "d1");
    let claim = claimed(&store, &base, ttl).await;
    store
        .complete(base.clone(), claim, result("1"))
        .await
        .expect("kept");
    // Another prefix is another application.
    claimed(&store.clone().with_prefix("agent"), &base, ttl).await;

    // Separators inside a scope or a tool are escaped: two keys cannot meet.
    let split_one = key("a:b", "c", "d1");
    let split_two = key("a", "b:c", "d1");
    assert_ne!(
        store.idempotency_key(&split_one),
        store.idempotency_key(&split_two)
    );
    assert_eq!(store.idempotency_key(&split_one), "tools:idem:a%3Ab:c:d1");
    assert_eq!(store.idempotency_key(&split_two), "tools:idem:a:b%3Ac:d1");
    assert_eq!(
        store.idempotency_key(&key("a%3Ab", "c", "d1")),
        "tools:idem:a%253Ab:c:d1"
    );
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
        assert!(matches!(answer, Err(StoreError { .. })), "{answer:?}");
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

#[tokio::test]
async fn approvals_are_kept_under_their_keys_for_a_day() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    for (session, id) in [("s-1", "r-b"), ("s-1", "r-a")] {
        store.put(pending(session, id)).await.expect("kept");
    }

    // Where they are, for how long.
    let request_key = "tools:approval:s-1:r-a";
    assert_eq!(store.approval_key("s-1", "r-a"), request_key);
    assert_eq!(
        store.approval_key("s:1", "r:a"),
        "tools:approval:s%3A1:r%3Aa"
    );
    assert_eq!(store.approval_index_key("s-1"), "tools:approvals:s-1");
    assert!(exists(&mut observer, "tools:approvals:s-1").await);
    let kept: PendingApproval =
        serde_json::from_str(&get(&mut observer, request_key).await.expect("written"))
            .expect("a PendingApproval");
    assert_eq!(kept, pending("s-1", "r-a"));
    let ttl = pttl(&mut observer, request_key).await;
    assert!((86_000_000..=86_400_000).contains(&ttl), "PTTL {ttl}");

    // Taken, it is gone from Redis.
    assert_eq!(
        store.take("s-1", "r-a").await.expect("answers"),
        Some(pending("s-1", "r-a"))
    );
    assert_eq!(get(&mut observer, request_key).await, None);
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
    assert!(
        !exists(&mut observer, &store.approval_index_key("s-1")).await,
        "the index expires with its newest request"
    );
}

#[tokio::test]
async fn an_abandoned_claim_is_answered_from_its_expiry_in_one_round_trip_and_left_as_it_was() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    let ttl = Duration::from_secs(60);
    let own = |token: &str| {
        own(
            key("s-1", "refund", "d2"),
            token,
            Duration::from_millis(200),
        )
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
    assert!(matches!(answer, Err(StoreError { .. })), "{answer:?}");
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

/// What connecting to a server started with `settings` logs, from `DEBUG` up.
async fn connect_logs(settings: &[&str]) -> Log {
    let server = RedisServer::start_with(settings);
    let (log, _guard) = Log::capture(tracing::Level::DEBUG);
    connect(&server).await;
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
    let own = |token: &str| own(key("s-1", "refund", "d3"), token, Duration::from_millis(50));
    let redis_key = store.idempotency_key(&own("call-1"));

    // The claim is applied after the store gave up: pending, never confirmed.
    pause_writes(&mut observer, 1_200).await;
    let answer = store.claim(own("call-1"), window).await;
    assert!(matches!(answer, Err(StoreError { .. })), "{answer:?}");
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
