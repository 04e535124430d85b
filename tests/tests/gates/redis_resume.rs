//! Deferred approvals resumed across processes on a real Redis (`RedisStore` as the approval
//! store, a `redis-server` started per test on a free loopback port): a decision is consumed
//! once across instances. Several `resume_worker` processes resume the same signed decision
//! at the same moment: one runs the call, once; the others are refused. A decision signed by
//! other keys is refused by a worker, runs nothing and consumes nothing.
//!
//! The call waits in this process: its runtime's approver answers `Pending`, and the decision
//! is signed here. Each worker builds its own runtime (the same keys, a `RedisStore` on the
//! same server, the same tool) and counts in Redis what it did (`<prefix>:executions`, and
//! `<prefix>:takes`: how many times its runtime asked the store to consume the request).

use std::sync::Arc;

use redis::aio::MultiplexedConnection;
use serde_json::{Value, json};
use tests::decisions::{deferring, pend};
use tests::redis_server::RedisServer;
use tests::redis_view::{get, keys, observer};
use tests::worker::Worker;
use tool_runtime::approvals::{Approval, DecisionKeys, PendingApproval, SignedDecision};
use tool_runtime::idempotency::RedisStore;
use tool_runtime::{Principal, RunContext, Runtime, Session, ToolCall, ToolError, tool, tools};

/// The secret (repeated 32 times) of the keys every runtime here shares.
const SECRET: u8 = 7;

/// The secret of someone else's keys, under the same key id.
const OTHER_SECRET: u8 = 9;

/// Where this process's `close_account` would count: it never runs here (its calls wait).
pub struct Counters {
    /// `host:port` of the Redis server.
    address: String,
    /// The prefix of the counters.
    prefix: String,
}

/// Closes an account: the workers' tool, by the same name, arguments and risk.
#[tool(destructive, idempotency = "off")]
async fn close_account(
    ctx: RunContext<Counters>,
    /// The account.
    account: String,
) -> Result<Value, ToolError> {
    let counters = ctx.deps();
    let mut connection = redis::Client::open(format!("redis://{}/", counters.address))
        .and_then(|client| client.get_connection())
        .map_err(|error| ToolError::failed(format!("redis: {error}")))?;
    let execution: i64 = redis::cmd("INCR")
        .arg(format!("{}:executions", counters.prefix))
        .query(&mut connection)
        .map_err(|error| ToolError::failed(format!("redis: {error}")))?;
    Ok(json!({ "execution": execution, "account": account, "pid": std::process::id() }))
}

fn session() -> Session {
    Session::new("s-1").with_principal(Principal::new("ada"))
}

/// This process's runtime: the shared keys and a `RedisStore` on `server`, an approver that
/// answers `Pending`.
async fn runtime(server: &RedisServer, prefix: &str) -> Runtime<Counters> {
    let store = RedisStore::connect(&server.url())
        .await
        .expect("the store connects");
    let keys = DecisionKeys::try_new("k1", [SECRET; 32]).expect("valid keys");
    let counters = Counters {
        address: format!("127.0.0.1:{}", server.port()),
        prefix: prefix.to_owned(),
    };
    let builder = Runtime::builder(counters)
        .inventory(false)
        .tools(tools![close_account]);
    deferring(builder, Arc::new(store), keys)
        .build()
        .expect("the runtime builds")
}

/// Executes one `close_account` call, which waits for a person, and answers its pending
/// request as the store lists it.
async fn wait_for_a_person(
    runtime: &Runtime<Counters>,
    call_id: &str,
    account: &str,
) -> PendingApproval {
    let call = ToolCall::new(call_id, "close_account", json!({ "account": account }));
    pend(runtime, &session(), call).await
}

/// A worker's counter (0 when it never counted).
async fn counter(observer: &mut MultiplexedConnection, prefix: &str, name: &str) -> i64 {
    get(observer, &format!("{prefix}:{name}"))
        .await
        .map_or(0, |count| count.parse().expect("a count"))
}

/// The approval keys left in Redis, sorted.
async fn approval_keys(observer: &mut MultiplexedConnection) -> Vec<String> {
    keys(observer, "tools:approval:*").await
}

/// One `resume_worker` process, started and `ready`: it resumes `decision`, verified with
/// the keys of `secret`, racing `racers` workers in all.
fn worker(
    server: &RedisServer,
    prefix: &str,
    racers: usize,
    secret: u8,
    decision: &SignedDecision,
) -> Worker {
    Worker::start(
        env!("CARGO_BIN_EXE_resume_worker"),
        &[
            &server.url(),
            prefix,
            &racers.to_string(),
            &secret.to_string(),
            decision.as_str(),
        ],
    )
}

/// Starts one worker alone and answers its observation.
fn resume_alone(
    server: &RedisServer,
    prefix: &str,
    secret: u8,
    decision: &SignedDecision,
) -> Value {
    let mut worker = worker(server, prefix, 1, secret, decision);
    worker.go();
    worker.observation()
}

#[tokio::test]
async fn processes_resuming_one_decision_at_once_run_the_call_once() {
    const WORKERS: usize = 4;
    let server = RedisServer::start();
    let mut observer = observer(&server).await;
    let runtime = runtime(&server, "race").await;
    let pending = wait_for_a_person(&runtime, "c-1", "acme").await;
    let decision = runtime
        .sign_decision(&pending, Approval::Approve)
        .expect("signed");

    // Every worker connects first; then all of them resume the decision at once. Each
    // verifies it, finds its call pending, and holds its `take` until every worker has come
    // to its own, so all of them ask Redis to consume the request at the same moment.
    let mut workers: Vec<Worker> = (0..WORKERS)
        .map(|_| worker(&server, "race", WORKERS, SECRET, &decision))
        .collect();
    for worker in &mut workers {
        worker.go();
    }
    let observations: Vec<Value> = workers.into_iter().map(Worker::observation).collect();

    assert_eq!(
        counter(&mut observer, "race", "takes").await,
        i64::try_from(WORKERS).expect("small"),
        "every worker verified the decision and raced to consume it: {observations:#?}"
    );
    let (ran, refused): (Vec<&Value>, Vec<&Value>) = observations
        .iter()
        .partition(|observation| observation["kind"].is_null());
    assert_eq!(ran.len(), 1, "one worker runs the call: {observations:#?}");
    assert_eq!(refused.len(), WORKERS - 1, "{observations:#?}");
    for observation in &observations {
        assert_eq!(observation["call_id"], "c-1", "{observations:#?}");
    }
    for observation in &refused {
        assert_eq!(observation["kind"], "invalid_decision", "{observations:#?}");
    }
    let content: Value = ran[0]["content"]
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .expect("the result is JSON text");
    assert_eq!(content["execution"], 1, "{content}");
    assert_eq!(content["account"], "acme", "{content}");
    assert_eq!(
        counter(&mut observer, "race", "executions").await,
        1,
        "the call ran once in all: {observations:#?}"
    );

    // Nothing waits any more, in any process.
    let left = runtime
        .pending_approvals(&session())
        .await
        .expect("the store answers");
    assert_eq!(left, [], "consumed");
    assert_eq!(approval_keys(&mut observer).await, Vec::<String>::new());
}

#[tokio::test]
async fn a_decision_signed_by_other_keys_is_refused_and_consumes_nothing() {
    let server = RedisServer::start();
    let mut observer = observer(&server).await;
    let runtime = runtime(&server, "foreign").await;
    let pending = wait_for_a_person(&runtime, "c-1", "acme").await;

    // Someone else's keys, under the same key id: the signature does not verify.
    let other = Runtime::builder(Counters {
        address: String::new(),
        prefix: String::new(),
    })
    .inventory(false)
    .tools(tools![close_account])
    .decision_keys(DecisionKeys::try_new("k1", [OTHER_SECRET; 32]).expect("valid keys"))
    .build()
    .expect("the runtime builds");
    let forged = other
        .sign_decision(&pending, Approval::Approve)
        .expect("signed");
    let observation = resume_alone(&server, "foreign", SECRET, &forged);
    assert_eq!(observation["kind"], "invalid_decision", "{observation:#}");
    // A decision the worker's keys cannot verify names nothing it can trust.
    assert_eq!(observation["call_id"], "decision-0", "{observation:#}");
    assert_eq!(counter(&mut observer, "foreign", "executions").await, 0);
    assert_eq!(
        counter(&mut observer, "foreign", "takes").await,
        0,
        "nothing was consumed"
    );
    let still = runtime
        .pending_approvals(&session())
        .await
        .expect("the store answers");
    assert_eq!(
        still,
        std::slice::from_ref(&pending),
        "the call still waits"
    );

    // The genuine decision still resumes it, in a worker, once.
    let genuine = runtime
        .sign_decision(&pending, Approval::Approve)
        .expect("signed");
    let observation = resume_alone(&server, "foreign", SECRET, &genuine);
    assert_eq!(observation["kind"], Value::Null, "{observation:#}");
    assert_eq!(observation["call_id"], "c-1", "{observation:#}");
    assert_eq!(counter(&mut observer, "foreign", "executions").await, 1);
    let left = runtime
        .pending_approvals(&session())
        .await
        .expect("the store answers");
    assert_eq!(left, [], "consumed");
}
