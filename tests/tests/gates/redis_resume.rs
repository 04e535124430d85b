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

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::Arc;

use redis::aio::MultiplexedConnection;
use serde_json::{Value, json};
use tests::redis_server::RedisServer;
use tool_runtime::{
    Approval, ApprovalRequest, Approver, BoxFuture, DecisionKeys, PendingApproval, Principal,
    RedisStore, RunContext, Runtime, Session, SignedDecision, ToolCall, ToolError, tool, tools,
};

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

/// Decides later, for every call.
struct Later;

impl Approver for Later {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Pending })
    }
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
    Runtime::builder(counters)
        .inventory(false)
        .tools(tools![close_account])
        .approver(Later)
        .approval_store(Arc::new(store))
        .decision_keys(keys)
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
    let report = runtime.execute(&session(), [call]).await;
    let [observation] = report.observations() else {
        panic!("one observation: {:?}", report.observations());
    };
    assert_eq!(
        observation.error_kind(),
        Some("approval_pending"),
        "{observation:?}"
    );
    let request_id = observation
        .error()
        .and_then(ToolError::details)
        .and_then(|details| details["request_id"].as_str())
        .expect("the request id")
        .to_owned();
    let pending = runtime
        .pending_approvals(&session())
        .await
        .expect("the store answers");
    let Some(pending) = pending
        .into_iter()
        .find(|pending| pending.request_id == request_id)
    else {
        panic!("request {request_id} is not listed");
    };
    assert_eq!(pending.call_id, call_id);
    pending
}

async fn observer(server: &RedisServer) -> MultiplexedConnection {
    redis::Client::open(server.url())
        .expect("a valid url")
        .get_multiplexed_async_connection()
        .await
        .expect("the observer connects")
}

/// A worker's counter (0 when it never counted).
async fn counter(observer: &mut MultiplexedConnection, prefix: &str, name: &str) -> i64 {
    let value: Option<i64> = redis::cmd("GET")
        .arg(format!("{prefix}:{name}"))
        .query_async(observer)
        .await
        .expect("GET answers");
    value.unwrap_or(0)
}

/// The approval keys left in Redis, sorted.
async fn approval_keys(observer: &mut MultiplexedConnection) -> Vec<String> {
    let mut keys: Vec<String> = redis::cmd("KEYS")
        .arg("tools:approval:*")
        .query_async(observer)
        .await
        .expect("KEYS answers");
    keys.sort();
    keys
}

/// One `resume_worker` process, started and `ready`.
struct Worker {
    child: Child,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    fn start(
        server: &RedisServer,
        prefix: &str,
        racers: usize,
        secret: u8,
        decision: &SignedDecision,
    ) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_resume_worker"))
            .args([
                &server.url(),
                prefix,
                &racers.to_string(),
                &secret.to_string(),
                decision.as_str(),
            ])
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

    /// Starts one worker alone and answers its observation.
    fn resume_alone(
        server: &RedisServer,
        prefix: &str,
        secret: u8,
        decision: &SignedDecision,
    ) -> Value {
        let mut worker = Self::start(server, prefix, 1, secret, decision);
        worker.go();
        worker.observation()
    }
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
        .map(|_| Worker::start(&server, "race", WORKERS, SECRET, &decision))
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
    let observation = Worker::resume_alone(&server, "foreign", SECRET, &forged);
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
    let observation = Worker::resume_alone(&server, "foreign", SECRET, &genuine);
    assert_eq!(observation["kind"], Value::Null, "{observation:#}");
    assert_eq!(observation["call_id"], "c-1", "{observation:#}");
    assert_eq!(counter(&mut observer, "foreign", "executions").await, 1);
    let left = runtime
        .pending_approvals(&session())
        .await
        .expect("the store answers");
    assert_eq!(left, [], "consumed");
}
