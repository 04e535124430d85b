//! `RedisStore` as a run store and a decision store, on a real Redis (a `redis-server` started
//! per test on a free loopback port): every kind of event comes back as it was appended; an
//! append at a taken position appends nothing, and of two processes' stores racing one
//! position exactly one wins; keys of different sessions and runs never meet; the first
//! route decision recorded wins across stores; a run one agent began over Redis, a second
//! agent (other connections, another runtime) continues without asking the model again for
//! the rounds answered and without running the write again; an append is one round trip.

use std::collections::BTreeMap;
use std::io::ErrorKind;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tests::redis_server::RedisServer;
use tests::redis_view::{calls, command_calls, connect, delta, keys, observer, pttl};
use tool_runtime::idempotency::{Idempotency, RedisStore};
use tool_runtime::model::{self, Message, ModelError, ModelErrorKind, ModelResponse, Usage};
use tool_runtime::routing::{
    DecisionKey, DecisionStore, RouteDecision, RouteSource, Router, Rule, RuleMatch, Signal,
};
use tool_runtime::run::{
    Agent, RunEnd, RunError, RunEvent, RunKey, RunRequest, RunStore, Spent, StopReason,
};
use tool_runtime::{RunContext, Runtime, Session, ToolCall, intents, tool, tools};

/// The seven days a record and a decision are kept by default, in milliseconds.
const WEEK_MILLIS: i64 = 7 * 24 * 60 * 60 * 1000;

/// What the tools did.
#[derive(Default)]
pub struct Ledger {
    /// Executions of `runs_refund`.
    refunds: AtomicU32,
}

/// Refunds an order.
#[tool(stateful)]
fn runs_refund(
    ctx: RunContext<Ledger>,
    /// The order.
    order_id: String,
) -> Value {
    let number = ctx.deps().refunds.fetch_add(1, Ordering::SeqCst) + 1;
    json!({ "refund": number, "order_id": order_id })
}

intents! {
    enum RefundIntent {
        Refund = "refund" => [runs_refund],
    }
}

fn key(session: &str, run: &str) -> RunKey {
    RunKey::new(session, run)
}

fn started(input: &str) -> RunEvent {
    RunEvent::Started {
        input: input.to_owned(),
        history: Vec::new(),
    }
}

fn decision(intent: &str) -> RouteDecision {
    let mut decision = RouteDecision::unknown(RouteSource::Rule, Vec::new(), "route:intent:v1");
    decision.intent = Some(intent.to_owned());
    decision.confidence = 0.9;
    decision
        .entities
        .insert("order_id".to_owned(), "A-1".to_owned());
    decision
}

/// One event of each kind, with every optional part filled in.
fn every_kind() -> Vec<RunEvent> {
    let mut spent = Spent::default();
    spent.rounds = 1;
    spent.calls = 1;
    spent.per_tool = BTreeMap::from([("runs_refund".to_owned(), 1)]);
    spent.usage = Usage::new(120, 30);
    spent.elapsed_ms = 42;
    let mut stopped = spent.clone();
    stopped.rounds = 2;
    let mut unknown = RouteDecision::unknown(
        RouteSource::Fallback,
        vec![Signal::WeakRule, Signal::EntityUnverified],
        "route:intent:v1",
    );
    unknown.reason = Some("no rule matched".to_owned());
    unknown.clarify = Some("Which order?".to_owned());
    let mut answered =
        ModelResponse::calls([ToolCall::new("c1", "runs_refund", r#"{"order_id":"A-1"}"#)]);
    answered.text = Some("Refunding.".to_owned());
    answered.usage = Some(Usage::new(120, 30));
    vec![
        RunEvent::Started {
            input: "Refund A-1".to_owned(),
            history: vec![Message::user("hello"), Message::system("be brief")],
        },
        RunEvent::Routed {
            decision: decision("refund"),
        },
        RunEvent::Routed { decision: unknown },
        RunEvent::Answered {
            round: 1,
            response: answered,
        },
        RunEvent::Observed {
            round: 1,
            results: vec![Message::Tool {
                call_id: "c1".to_owned(),
                tool: "runs_refund".to_owned(),
                content: r#"{"refund":1}"#.to_owned(),
                is_error: true,
            }],
            spent: spent.clone(),
        },
        RunEvent::Ended {
            end: RunEnd::Clarify {
                question: "Which order?".to_owned(),
            },
            spent: spent.clone(),
        },
        RunEvent::Ended {
            end: RunEnd::Stopped {
                reason: StopReason::MaxRounds,
            },
            spent: stopped,
        },
        RunEvent::Ended {
            end: RunEnd::Answered,
            spent,
        },
    ]
}

async fn append_all(store: &RedisStore, key: &RunKey, events: &[RunEvent]) {
    for (position, event) in events.iter().enumerate() {
        store
            .append(key, position, event)
            .await
            .unwrap_or_else(|error| panic!("event {position} appended: {error}"));
    }
}

#[tokio::test]
async fn every_kind_of_event_comes_back_as_appended() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    let run = key("s-1", "r-1");
    assert!(
        store.load(&run).await.expect("loads").is_empty(),
        "no such run"
    );
    let events = every_kind();
    append_all(&store, &run, &events).await;
    assert_eq!(store.load(&run).await.expect("loads"), events);

    // A list at the documented key, kept for the run ttl (7 days by default).
    assert_eq!(store.run_key(&run), "tools:run:s-1:r-1");
    assert_eq!(
        keys(&mut observer, "tools:run:*").await,
        ["tools:run:s-1:r-1"]
    );
    let left = pttl(&mut observer, "tools:run:s-1:r-1").await;
    assert!(left > WEEK_MILLIS - 60_000 && left <= WEEK_MILLIS, "{left}");
}

#[tokio::test]
async fn each_append_gives_the_record_its_ttl_again() {
    let server = RedisServer::start();
    let store = connect(&server)
        .await
        .with_run_ttl(Duration::from_millis(800));
    assert_eq!(store.run_ttl(), Duration::from_millis(800));
    let mut observer = observer(&server).await;
    let run = key("s-1", "r-ttl");
    let redis_key = store.run_key(&run);
    store
        .append(&run, 0, &started("go"))
        .await
        .expect("appended");
    tokio::time::sleep(Duration::from_millis(450)).await;
    let before = pttl(&mut observer, &redis_key).await;
    assert!(before > 0 && before <= 350, "{before}");
    store
        .append(
            &run,
            1,
            &RunEvent::Routed {
                decision: decision("refund"),
            },
        )
        .await
        .expect("appended");
    let left = pttl(&mut observer, &redis_key).await;
    assert!(left > 400, "refreshed by the append: {left}");
    // A decision is kept as long, from when it was recorded.
    let route = DecisionKey::new("s-1", "r-ttl", "route:intent:v1");
    store
        .record(&route, &decision("refund"))
        .await
        .expect("recorded");
    let kept = pttl(&mut observer, &store.decision_key(&route)).await;
    assert!(kept > 400 && kept <= 800, "{kept}");
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert_eq!(store.get(&route).await.expect("answers"), None, "expired");
    assert!(store.load(&run).await.expect("loads").is_empty(), "expired");
}

#[tokio::test]
async fn an_append_at_a_taken_position_appends_nothing() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let run = key("s-1", "r-taken");
    store
        .append(&run, 0, &started("go"))
        .await
        .expect("appended");
    for position in [0, 2, 7] {
        let error = store
            .append(&run, position, &started("other"))
            .await
            .expect_err("taken");
        assert_eq!(error.kind(), ErrorKind::AlreadyExists, "{error}");
        assert!(error.to_string().contains("holds 1 events"), "{error}");
    }
    // A first append must be at position 0.
    let error = store
        .append(&key("s-1", "r-new"), 1, &started("go"))
        .await
        .expect_err("not at 0");
    assert_eq!(error.kind(), ErrorKind::AlreadyExists, "{error}");
    assert_eq!(store.load(&run).await.expect("loads"), [started("go")]);
    assert!(
        store
            .load(&key("s-1", "r-new"))
            .await
            .expect("loads")
            .is_empty()
    );
}

#[tokio::test]
async fn of_two_stores_racing_one_position_exactly_one_wins() {
    let server = RedisServer::start();
    let (one, two) = (connect(&server).await, connect(&server).await);
    for attempt in 0..20 {
        let run = key("s-race", &format!("r-{attempt}"));
        let (first, second) = (started("from one"), started("from two"));
        let (a, b) = tokio::join!(one.append(&run, 0, &first), two.append(&run, 0, &second));
        let loaded = one.load(&run).await.expect("loads");
        match (a, b) {
            (Ok(()), Err(error)) => {
                assert_eq!(error.kind(), ErrorKind::AlreadyExists, "{error}");
                assert_eq!(loaded, [first]);
            }
            (Err(error), Ok(())) => {
                assert_eq!(error.kind(), ErrorKind::AlreadyExists, "{error}");
                assert_eq!(loaded, [second]);
            }
            other => panic!("exactly one append wins: {other:?}"),
        }
    }
}

#[tokio::test]
async fn keys_of_different_sessions_and_runs_never_meet() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    let (joined, split) = (key("a:b", "c"), key("a", "b:c"));
    store
        .append(&joined, 0, &started("one"))
        .await
        .expect("appended");
    store
        .append(&split, 0, &started("two"))
        .await
        .expect("appended");
    assert_eq!(store.load(&joined).await.expect("loads"), [started("one")]);
    assert_eq!(store.load(&split).await.expect("loads"), [started("two")]);
    assert_eq!(store.run_key(&joined), "tools:run:a%3Ab:c");
    assert_eq!(store.run_key(&split), "tools:run:a:b%3Ac");
    assert_eq!(store.run_key(&key("50%", "x")), "tools:run:50%25:x");

    let (joined, split) = (
        DecisionKey::new("a:b", "c", "route:intent:v1"),
        DecisionKey::new("a", "b:c", "route:intent:v1"),
    );
    store
        .record(&joined, &decision("one"))
        .await
        .expect("recorded");
    assert_eq!(store.get(&split).await.expect("answers"), None);
    assert_eq!(
        store.decision_key(&joined),
        "tools:route:a%3Ab:c:route%3Aintent%3Av1"
    );
    assert_eq!(
        keys(&mut observer, "tools:route:*").await,
        ["tools:route:a%3Ab:c:route%3Aintent%3Av1"]
    );
    // Another prefix, other keys.
    let other = connect(&server).await.with_prefix("desk");
    assert!(
        other
            .load(&key("a:b", "c"))
            .await
            .expect("loads")
            .is_empty()
    );
}

#[tokio::test]
async fn the_first_decision_recorded_wins_across_stores() {
    let server = RedisServer::start();
    let (one, two) = (connect(&server).await, connect(&server).await);
    let mut observer = observer(&server).await;
    let key = DecisionKey::new("s-1", "r-1", "route:intent:v1");
    assert_eq!(one.get(&key).await.expect("answers"), None);
    let first = decision("refund");
    assert_eq!(one.record(&key, &first).await.expect("recorded"), first);
    let later = decision("complaint");
    assert_eq!(
        two.record(&key, &later)
            .await
            .expect("answers the kept one"),
        first
    );
    assert_eq!(two.get(&key).await.expect("answers"), Some(first.clone()));
    let left = pttl(&mut observer, &one.decision_key(&key)).await;
    assert!(left > WEEK_MILLIS - 60_000 && left <= WEEK_MILLIS, "{left}");

    // Racing: both go on with the same decision.
    for attempt in 0..10 {
        let key = DecisionKey::new("s-1", format!("r-race-{attempt}"), "route:intent:v1");
        let (a, b) = (decision("refund"), decision("complaint"));
        let (kept_a, kept_b) = tokio::join!(one.record(&key, &a), two.record(&key, &b));
        let (kept_a, kept_b) = (kept_a.expect("answers"), kept_b.expect("answers"));
        assert_eq!(kept_a, kept_b);
        assert!(kept_a == a || kept_a == b);
    }
}

#[tokio::test]
async fn an_unreadable_record_is_invalid_data_naming_its_key() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    let run = key("s-1", "r-bad");
    store
        .append(&run, 0, &started("go"))
        .await
        .expect("appended");
    let _: i64 = redis::cmd("RPUSH")
        .arg(store.run_key(&run))
        .arg("{not json")
        .query_async(&mut observer)
        .await
        .expect("pushed");
    let error = store.load(&run).await.expect_err("unreadable");
    assert_eq!(error.kind(), ErrorKind::InvalidData, "{error}");
    assert!(error.to_string().contains("tools:run:s-1:r-bad"), "{error}");

    let key = DecisionKey::new("s-1", "r-bad", "route:intent:v1");
    let _: () = redis::cmd("SET")
        .arg(store.decision_key(&key))
        .arg("[]")
        .query_async(&mut observer)
        .await
        .expect("set");
    let error = store.get(&key).await.expect_err("unreadable");
    assert_eq!(error.kind(), ErrorKind::InvalidData, "{error}");
    let error = store
        .record(&key, &decision("refund"))
        .await
        .expect_err("unreadable");
    assert_eq!(error.kind(), ErrorKind::InvalidData, "{error}");
}

#[tokio::test]
async fn a_silent_server_is_a_timeout() {
    let server = RedisServer::start();
    let store = RedisStore::connect_with_timeout(&server.url(), Duration::from_millis(200))
        .await
        .expect("connects");
    server.pause();
    let run = key("s-1", "r-silent");
    let appended = store.append(&run, 0, &started("go")).await;
    let loaded = store.load(&run).await;
    let recorded = store
        .record(
            &DecisionKey::new("s-1", "r-silent", "route:intent:v1"),
            &decision("refund"),
        )
        .await;
    server.resume();
    assert_eq!(appended.expect_err("no answer").kind(), ErrorKind::TimedOut);
    assert_eq!(loaded.expect_err("no answer").kind(), ErrorKind::TimedOut);
    assert_eq!(recorded.expect_err("no answer").kind(), ErrorKind::TimedOut);
}

#[tokio::test]
async fn an_append_is_one_round_trip() {
    let server = RedisServer::start();
    let store = connect(&server).await;
    let mut observer = observer(&server).await;
    let run = key("s-1", "r-trips");
    let before = command_calls(&mut observer).await;
    store
        .append(&run, 0, &started("go"))
        .await
        .expect("appended");
    assert_eq!(
        delta(&before, &command_calls(&mut observer).await),
        calls(&[("evalsha", 1), ("llen", 1), ("pexpire", 1), ("rpush", 1)])
    );
    // Refused: the script reads the length only.
    let before = command_calls(&mut observer).await;
    let _ = store.append(&run, 0, &started("go")).await;
    assert_eq!(
        delta(&before, &command_calls(&mut observer).await),
        calls(&[("evalsha", 1), ("llen", 1)])
    );
    let before = command_calls(&mut observer).await;
    store.load(&run).await.expect("loads");
    assert_eq!(
        delta(&before, &command_calls(&mut observer).await),
        calls(&[("lrange", 1)])
    );
    let key = DecisionKey::new("s-1", "r-trips", "route:intent:v1");
    let before = command_calls(&mut observer).await;
    store.get(&key).await.expect("answers");
    assert_eq!(
        delta(&before, &command_calls(&mut observer).await),
        calls(&[("get", 1)])
    );
    let before = command_calls(&mut observer).await;
    store
        .record(&key, &decision("refund"))
        .await
        .expect("recorded");
    assert_eq!(
        delta(&before, &command_calls(&mut observer).await),
        calls(&[("evalsha", 1), ("get", 1), ("set", 1)])
    );
}

/// A runtime over `ledger` whose idempotency store is a `RedisStore` on `server`.
async fn runtime(server: &RedisServer, ledger: &Arc<Ledger>) -> Runtime<Ledger> {
    Runtime::builder_shared(Arc::clone(ledger))
        .inventory(false)
        .tools(tools![runs_refund])
        .idempotency(Idempotency::new(connect(server).await))
        .build()
        .expect("the runtime builds")
}

fn router(store: RedisStore, routed: Arc<AtomicU32>) -> Router {
    Router::new::<RefundIntent>()
        .rule(Rule::when(move |text| {
            routed.fetch_add(1, Ordering::SeqCst);
            text.contains("refund")
                .then(|| RuleMatch::new(RefundIntent::Refund, 0.9))
        }))
        .store(store)
}

/// How many answers the model gave in `messages`.
fn answered(messages: &[Message]) -> usize {
    messages
        .iter()
        .filter(|message| matches!(message, Message::Assistant { .. }))
        .count()
}

#[tokio::test]
async fn a_run_begun_over_redis_is_continued_by_another_agent() {
    let server = RedisServer::start();
    let ledger = Arc::new(Ledger::default());
    let routed = Arc::new(AtomicU32::new(0));
    let request = || RunRequest::new("r-agent", Session::new("s-agent"), "refund A-1 please");

    // The first agent: round 1 calls the refund; the model fails at round 2.
    let asked_first = Arc::new(AtomicU32::new(0));
    let asked = Arc::clone(&asked_first);
    let failing = model::from_fn(move |messages, _tools| {
        asked.fetch_add(1, Ordering::SeqCst);
        match answered(messages) {
            0 => Ok(ModelResponse::calls([ToolCall::new(
                "c1",
                "runs_refund",
                r#"{"order_id":"A-1"}"#,
            )])),
            _ => Err(ModelError::new(
                ModelErrorKind::Server,
                "the endpoint failed",
            )),
        }
    });
    let first = Agent::new(runtime(&server, &ledger).await, failing)
        .store(connect(&server).await)
        .router(router(connect(&server).await, Arc::clone(&routed)));
    let failed = first.run(request()).await;
    assert!(matches!(failed, Err(RunError::Model { .. })), "{failed:?}");
    assert_eq!(asked_first.load(Ordering::SeqCst), 2);
    assert_eq!(ledger.refunds.load(Ordering::SeqCst), 1);

    // The second agent: its own runtime, stores and connections, the same server.
    let asked_second = Arc::new(AtomicU32::new(0));
    let asked = Arc::clone(&asked_second);
    let answering = model::from_fn(move |messages, _tools| {
        asked.fetch_add(1, Ordering::SeqCst);
        assert_eq!(answered(messages), 1, "round 1 comes from the record");
        Ok(ModelResponse::text("A-1 is refunded."))
    });
    let second = Agent::new(runtime(&server, &ledger).await, answering)
        .store(connect(&server).await)
        .router(router(connect(&server).await, Arc::clone(&routed)));
    let report = second.run(request()).await.expect("the run goes on");
    assert!(report.resumed);
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(report.answer(), Some("A-1 is refunded."));
    assert_eq!(
        asked_second.load(Ordering::SeqCst),
        1,
        "asked for round 2 only"
    );
    assert_eq!(
        ledger.refunds.load(Ordering::SeqCst),
        1,
        "the write ran once"
    );
    assert_eq!(routed.load(Ordering::SeqCst), 1, "routed once");
    assert_eq!(report.rounds.len(), 2);
    assert!(report.rounds[0].report.is_none(), "round 1 from the record");
    assert!(matches!(
        &report.rounds[0].results[..],
        [Message::Tool { content, .. }] if content.contains(r#""refund":1"#)
    ));
    assert_eq!(
        report
            .route
            .as_ref()
            .and_then(|route| route.intent.as_deref()),
        Some("refund")
    );

    // The record in Redis ends the run: a third agent answers from it, asking no model.
    let store = connect(&server).await;
    let events = store
        .load(&RunKey::new("s-agent", "r-agent"))
        .await
        .expect("loads");
    assert!(matches!(events.first(), Some(RunEvent::Started { .. })));
    assert!(matches!(events.get(1), Some(RunEvent::Routed { .. })));
    assert!(matches!(
        events.last(),
        Some(RunEvent::Ended {
            end: RunEnd::Answered,
            ..
        })
    ));
    let silent = model::from_fn(|_messages, _tools| -> Result<ModelResponse, ModelError> {
        panic!("a run that ended asks no model")
    });
    let third = Agent::new(runtime(&server, &ledger).await, silent).store(store);
    let again = third
        .run(request())
        .await
        .expect("answered from the record");
    assert!(again.resumed);
    assert_eq!(again.answer(), Some("A-1 is refunded."));
}
