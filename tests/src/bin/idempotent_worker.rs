//! One process of the cross-process idempotency race (`tests/tests/exactly_once/redis_layer.rs`).
//!
//! `idempotent_worker <redis-url> <prefix> <others> <call-id>` builds a runtime whose
//! idempotency store is a `RedisStore` on `<redis-url>`, with one stateful tool, `open_ticket`,
//! and executes one call of it, `<call-id>`, with fixed arguments in session `race`. Everything it counts, it counts in Redis
//! itself, over plain connections of its own:
//!
//! - `<prefix>:executions`: `INCR`ed by each execution of `open_ticket`;
//! - `<prefix>:pending`: `INCR`ed each time a claim finds the key held by another execution
//!   (the store is the `RedisStore`, wrapped only to count that answer).
//!
//! To make the race certain rather than likely, an execution holds its claim until
//! `<others>` claims have found it pending (or 5 s have passed), then takes 50 ms more.
//!
//! The worker prints `ready` once connected, waits for a line `go` on its standard input (the
//! test starts every worker's call at the same moment), and prints its observation as one JSON
//! line: `{"kind": <error kind or null>, "replayed": <bool>, "content": <text or null>}`.
//! A failure to set up exits with status 2 and a message on standard error; a worker still
//! alive after 30 s exits with status 3.

use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tests::redis_server::command;
use tool_runtime::idempotency::{
    Claim, Idempotency, IdempotencyKey, IdempotencyStore, Lookup, RedisStore, SharedFailure,
    StoreError, StoredResult,
};
use tool_runtime::{BoxFuture, RunContext, Runtime, Session, ToolCall, ToolError, tool, tools};

/// How long the other workers wait for the execution holding the key: far longer than it
/// holds it.
const WAIT: Duration = Duration::from_secs(15);

/// The longest an execution waits for the others to find its claim pending.
const HOLD: Duration = Duration::from_secs(5);

/// The longest a worker lives.
const LIFETIME: Duration = Duration::from_secs(30);

/// Where the worker counts, and how many other workers race it.
pub struct Race {
    /// `host:port` of the Redis server.
    address: String,
    /// The prefix of the counters.
    prefix: String,
    /// How many claims should find an execution's claim pending.
    others: i64,
}

/// Opens a ticket (once, however many processes ask at the same time).
#[tool(stateful)]
async fn open_ticket(
    ctx: RunContext<Race>,
    /// What is wrong.
    subject: String,
) -> Result<Value, ToolError> {
    let race = ctx.deps();
    let failed = |error: std::io::Error| ToolError::failed(format!("redis: {error}"));
    let execution = command(&race.address, &["INCR", &race.key("executions")]).map_err(failed)?;
    let deadline = Instant::now() + HOLD;
    while command(&race.address, &["GET", &race.key("pending")]).map_err(failed)? < race.others
        && Instant::now() < deadline
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    Ok(json!({ "ticket": execution, "subject": subject, "pid": std::process::id() }))
}

impl Race {
    fn key(&self, name: &str) -> String {
        format!("{}:{name}", self.prefix)
    }
}

/// The `RedisStore`, counting the claims that find the key held.
struct Counting {
    inner: RedisStore,
    address: String,
    pending_key: String,
}

impl IdempotencyStore for Counting {
    fn claim(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        Box::pin(async move {
            let lookup = self.inner.claim(key, ttl).await?;
            if lookup == Lookup::Pending {
                command(&self.address, &["INCR", &self.pending_key])
                    .map_err(|error| StoreError::new(format!("cannot count: {error}")))?;
            }
            Ok(lookup)
        })
    }

    fn wait(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
        wait: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        self.inner.wait(key, ttl, wait)
    }

    fn complete(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        result: StoredResult,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.inner.complete(key, claim, result)
    }

    fn release(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        failure: SharedFailure,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.inner.release(key, claim, failure)
    }
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "idempotent_worker: {message}");
    ExitCode::from(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    std::thread::spawn(|| {
        std::thread::sleep(LIFETIME);
        let _ = writeln!(
            std::io::stderr(),
            "idempotent_worker: still alive after {LIFETIME:?}"
        );
        std::process::exit(3);
    });
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [url, prefix, others, call_id] = arguments.as_slice() else {
        return fail("usage: idempotent_worker <redis-url> <prefix> <others> <call-id>");
    };
    let Some(address) = url
        .strip_prefix("redis://")
        .map(|rest| rest.trim_end_matches('/').to_owned())
    else {
        return fail(&format!("not a redis:// url: {url}"));
    };
    let Ok(others) = others.parse() else {
        return fail(&format!("not a number: {others}"));
    };
    let store = match RedisStore::connect(url).await {
        Ok(store) => store,
        Err(error) => return fail(&error.to_string()),
    };
    let race = Race {
        address: address.clone(),
        prefix: prefix.clone(),
        others,
    };
    let store = Counting {
        inner: store,
        address,
        pending_key: race.key("pending"),
    };
    let runtime = match Runtime::builder(race)
        .inventory(false)
        .tools(tools![open_ticket])
        .idempotency(Idempotency::new(store).wait(WAIT))
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

    let call = ToolCall::new(
        call_id.as_str(),
        "open_ticket",
        json!({ "subject": "the printer is on fire" }),
    );
    let report = runtime.execute(&Session::new("race"), [call]).await;
    let Some(observation) = report.observations().first() else {
        return fail("the report has no observation");
    };
    let line = json!({
        "kind": observation.error_kind(),
        "replayed": observation.replayed(),
        "content": observation.content(),
    });
    if writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return fail("cannot write to stdout");
    }
    ExitCode::SUCCESS
}
