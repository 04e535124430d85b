//! One process of the cross-process resume race (`tests/tests/gates/redis_resume.rs`).
//!
//! `resume_worker <redis-url> <prefix> <racers> <secret-byte> <decision>` builds a runtime
//! whose approval store is a `RedisStore` on `<redis-url>` (the default prefix, shared with
//! every other process), whose decision keys are `k1` with the secret `<secret-byte>` repeated
//! 32 times, with one destructive tool, `close_account`, and resumes `<decision>` (a
//! `SignedDecision`'s text) in session `s-1` of principal `ada`. Its approver denies every
//! call it is asked about: a call can only run here because the signed decision approved it.
//!
//! `close_account` opts out of the idempotency layer: nothing but the decision's consumption
//! stands between two workers and two executions. Everything the worker counts, it counts in
//! Redis itself, over plain connections of its own:
//!
//! - `<prefix>:executions`: `INCR`ed by each execution of `close_account`;
//! - `<prefix>:takes`: `INCR`ed each time the runtime asks the store to consume a pending
//!   request (the store is the `RedisStore`, wrapped only to count and hold that call).
//!
//! To make the race on the consumption certain rather than likely, a `take` waits until
//! `<racers>` takes have been counted (or 5 s have passed) before it reaches Redis: every
//! racer has verified the decision and found its call pending by then, and all of them ask
//! Redis to consume it at once.
//!
//! The worker prints `ready` once connected, waits for a line `go` on its standard input (the
//! test starts every worker's resume at the same moment), and prints the report's one
//! observation as one JSON line: `{"kind": <error kind or null>, "call_id": <text>,
//! "content": <text or null>, "message": <error message or null>}`. A failure to set up, a
//! closed standard input or a report without exactly one observation exits with status 2 and
//! a message on standard error; a worker still alive after 30 s exits with status 3.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tests::redis_server::command;
use tool_runtime::approvals::{
    Approval, ApprovalRequest, ApprovalStore, Approver, DecisionKeys, PendingApproval,
    SignedDecision,
};
use tool_runtime::idempotency::RedisStore;
use tool_runtime::{BoxFuture, Principal, RunContext, Runtime, Session, ToolError, tool, tools};

/// The longest a `take` waits for the other racers' takes.
const HOLD: Duration = Duration::from_secs(5);

/// The longest a worker lives.
const LIFETIME: Duration = Duration::from_secs(30);

/// Where the worker counts.
pub struct Counters {
    /// `host:port` of the Redis server.
    address: String,
    /// The prefix of the counters.
    prefix: String,
}

impl Counters {
    fn key(&self, name: &str) -> String {
        format!("{}:{name}", self.prefix)
    }
}

/// Closes an account (once, however many processes resume the approval at the same time).
#[tool(destructive, idempotency = "off")]
async fn close_account(
    ctx: RunContext<Counters>,
    /// The account.
    account: String,
) -> Result<Value, ToolError> {
    let counters = ctx.deps();
    let execution = command(&counters.address, &["INCR", &counters.key("executions")])
        .map_err(|error| ToolError::failed(format!("redis: {error}")))?;
    Ok(json!({ "execution": execution, "account": account, "pid": std::process::id() }))
}

/// The `RedisStore`, counting each `take` and holding it until every racer has come to its
/// own.
struct Gathering {
    inner: RedisStore,
    address: String,
    takes_key: String,
    racers: i64,
}

impl ApprovalStore for Gathering {
    fn put(&self, pending: PendingApproval) -> BoxFuture<'_, std::io::Result<()>> {
        self.inner.put(pending)
    }

    fn pending<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, std::io::Result<Vec<PendingApproval>>> {
        self.inner.pending(session)
    }

    fn take<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
    ) -> BoxFuture<'a, std::io::Result<Option<PendingApproval>>> {
        Box::pin(async move {
            command(&self.address, &["INCR", &self.takes_key])?;
            let deadline = Instant::now() + HOLD;
            while command(&self.address, &["GET", &self.takes_key])? < self.racers
                && Instant::now() < deadline
            {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
            self.inner.take(session, request_id).await
        })
    }
}

/// Denies every call it is asked about.
struct NoOne;

impl Approver for NoOne {
    fn decide<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async { Approval::Deny("the worker asks no one".into()) })
    }
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "resume_worker: {message}");
    ExitCode::from(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    std::thread::spawn(|| {
        std::thread::sleep(LIFETIME);
        let _ = writeln!(
            std::io::stderr(),
            "resume_worker: still alive after {LIFETIME:?}"
        );
        std::process::exit(3);
    });
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [url, prefix, racers, secret, decision] = arguments.as_slice() else {
        return fail("usage: resume_worker <redis-url> <prefix> <racers> <secret-byte> <decision>");
    };
    let Some(address) = url
        .strip_prefix("redis://")
        .map(|rest| rest.trim_end_matches('/').to_owned())
    else {
        return fail(&format!("not a redis:// url: {url}"));
    };
    let Ok(racers) = racers.parse() else {
        return fail(&format!("not a number: {racers}"));
    };
    let Ok(secret) = secret.parse::<u8>() else {
        return fail(&format!("not a byte: {secret}"));
    };
    let keys = match DecisionKeys::try_new("k1", [secret; 32]) {
        Ok(keys) => keys,
        Err(error) => return fail(&error.to_string()),
    };
    let store = match RedisStore::connect(url).await {
        Ok(store) => store,
        Err(error) => return fail(&error.to_string()),
    };
    let counters = Counters {
        address: address.clone(),
        prefix: prefix.clone(),
    };
    let store = Gathering {
        inner: store,
        address,
        takes_key: counters.key("takes"),
        racers,
    };
    let runtime = match Runtime::builder(counters)
        .inventory(false)
        .tools(tools![close_account])
        .approver(NoOne)
        .approval_store(Arc::new(store))
        .decision_keys(keys)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(&error.to_string()),
    };

    let mut stdout = std::io::stdout();
    if writeln!(stdout, "ready")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return fail("cannot write to stdout");
    }
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(_) if line.trim() == "go" => {}
        other => return fail(&format!("expected `go` on stdin, read {other:?} {line:?}")),
    }

    let session = Session::new("s-1").with_principal(Principal::new("ada"));
    let report = runtime
        .resume(&session, [SignedDecision::from(decision.clone())])
        .await;
    let [observation] = report.observations() else {
        return fail(&format!(
            "expected one observation, got {:?}",
            report.observations()
        ));
    };
    let line = json!({
        "kind": observation.error_kind(),
        "call_id": observation.call_id(),
        "content": observation.content(),
        "message": observation.error().map(ToolError::message),
    });
    if writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return fail("cannot write to stdout");
    }
    ExitCode::SUCCESS
}
