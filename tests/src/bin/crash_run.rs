//! One process of the crash test (`tests/tests/crash.rs`): a run over Redis, killed between
//! its write and the next round, then started again in a new process.
//!
//! `crash_run <redis-url> <prefix> <session> <run-id> <hold|finish>` builds a runtime whose
//! idempotency store is a `RedisStore` on `<redis-url>` with prefix `<prefix>`, and an agent
//! whose run store and router's decision store are `RedisStore`s too (same server, same
//! prefix). The model is scripted: round 1 calls `refund_order` for `A-1`, round 2 answers
//! `A-1 is refunded.`. The router has one rule (`refund` in the text: intent `refund`), which
//! counts each time it is asked in `<prefix>:routed`; `refund_order` counts each execution in
//! `<prefix>:executions` (both `INCR`, over plain connections of the process's own).
//!
//! With `hold`, the process writes `wrote` on standard error once the round's write has run
//! and its result is kept (when the run is about to record what the round's calls got), and
//! sleeps there, for the test to kill it: the record holds the model's answer, not the
//! write's. With `finish` it runs to the end and prints the report as one JSON line on
//! standard output: `{"end": <RunEnd>, "answer": <text or null>, "rounds": <count>,
//! "resumed": <bool>, "route": <intent or null>, "write": {"content": <text or null>,
//! "replayed": <bool>, "ran_here": <bool>}}` (`write`: round 1's one call). A failure exits
//! with status 2 and a message on standard error; a process still alive after 30 s exits with
//! status 3.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use tests::redis_server::command;
use tool_runtime::idempotency::{Idempotency, RedisStore};
use tool_runtime::model::{Message, ModelResponse, ScriptedModel};
use tool_runtime::routing::{Router, Rule, RuleMatch};
use tool_runtime::run::{Agent, RunEvent, RunKey, RunRequest, RunStore};
use tool_runtime::{BoxFuture, RunContext, Runtime, Session, ToolCall, ToolError, intents};
use tool_runtime::{tool, tools};

/// The longest a process lives.
const LIFETIME: Duration = Duration::from_secs(30);

/// Where the process counts.
pub struct Counters {
    /// `host:port` of the Redis server.
    address: String,
    /// The prefix of the counters.
    prefix: String,
}

impl Counters {
    fn count(&self, name: &str) -> Result<i64, std::io::Error> {
        command(&self.address, &["INCR", &format!("{}:{name}", self.prefix)])
    }
}

/// Refunds an order.
#[tool(stateful)]
fn refund_order(
    ctx: RunContext<Counters>,
    /// The order.
    order_id: String,
) -> Result<Value, ToolError> {
    let execution = ctx
        .deps()
        .count("executions")
        .map_err(|error| ToolError::failed(format!("redis: {error}")))?;
    Ok(json!({ "refund": format!("RF-{order_id}"), "order_id": order_id, "execution": execution }))
}

intents! {
    enum CrashIntent {
        Refund = "refund" => [refund_order],
    }
}

/// The `RedisStore`, which (with `hold`) stops the process where the round's write has run
/// and its answer is not recorded yet.
struct Holding {
    inner: RedisStore,
    hold: bool,
}

impl RunStore for Holding {
    fn load<'a>(&'a self, key: &'a RunKey) -> BoxFuture<'a, std::io::Result<Vec<RunEvent>>> {
        self.inner.load(key)
    }

    fn append<'a>(
        &'a self,
        key: &'a RunKey,
        position: usize,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, std::io::Result<()>> {
        Box::pin(async move {
            if self.hold && matches!(event, RunEvent::Observed { .. }) {
                let mut stderr = std::io::stderr();
                writeln!(stderr, "wrote")?;
                stderr.flush()?;
                // The test kills the process here.
                tokio::time::sleep(LIFETIME).await;
            }
            self.inner.append(key, position, event).await
        })
    }
}

fn fail(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "crash_run: {message}");
    ExitCode::from(2)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    std::thread::spawn(|| {
        std::thread::sleep(LIFETIME);
        let _ = writeln!(
            std::io::stderr(),
            "crash_run: still alive after {LIFETIME:?}"
        );
        std::process::exit(3);
    });
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let [url, prefix, session, run, mode] = arguments.as_slice() else {
        return fail("usage: crash_run <redis-url> <prefix> <session> <run-id> <hold|finish>");
    };
    let hold = match mode.as_str() {
        "hold" => true,
        "finish" => false,
        other => return fail(&format!("not a mode: {other}")),
    };
    let Some(address) = url
        .strip_prefix("redis://")
        .map(|rest| rest.trim_end_matches('/').to_owned())
    else {
        return fail(&format!("not a redis:// url: {url}"));
    };
    let store = match RedisStore::connect(url).await {
        Ok(store) => store.with_prefix(prefix.as_str()),
        Err(error) => return fail(&error.to_string()),
    };
    let counters = Counters {
        address: address.clone(),
        prefix: prefix.clone(),
    };
    let runtime = match Runtime::builder(counters)
        .inventory(false)
        .tools(tools![refund_order])
        .idempotency(Idempotency::new(store.clone()))
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(&error.to_string()),
    };
    let routed = Counters {
        address,
        prefix: prefix.clone(),
    };
    let router = Router::new::<CrashIntent>()
        .rule(Rule::when(move |text| {
            // Counted in Redis: the test reads how often any process decided.
            let _ = routed.count("routed");
            text.contains("refund")
                .then(|| RuleMatch::new(CrashIntent::Refund, 0.9))
        }))
        .store(store.clone());
    let model = ScriptedModel::new([
        ModelResponse::calls([ToolCall::new("c1", "refund_order", r#"{"order_id":"A-1"}"#)]),
        ModelResponse::text("A-1 is refunded."),
    ]);
    let agent = Agent::new(runtime, model)
        .router(router)
        .store(Holding { inner: store, hold });

    let request = RunRequest::new(run.as_str(), Session::new(session.as_str()), "refund A-1");
    let report = match agent.run(request).await {
        Ok(report) => report,
        Err(error) => return fail(&error.to_string()),
    };
    let write = report
        .rounds
        .first()
        .map(|round| {
            let observation = round
                .report
                .as_ref()
                .and_then(|report| report.observations().first());
            let content = round.results.first().and_then(|result| match result {
                Message::Tool { content, .. } => Some(content.clone()),
                _ => None,
            });
            json!({
                "content": content,
                "replayed": observation.is_some_and(|observation| observation.replayed()),
                "ran_here": observation.is_some(),
            })
        })
        .unwrap_or(Value::Null);
    let line = json!({
        "end": report.end,
        "answer": report.answer(),
        "rounds": report.rounds.len(),
        "resumed": report.resumed,
        "route": report.route.as_ref().and_then(|route| route.intent.clone()),
        "write": write,
    });
    let mut stdout = std::io::stdout();
    if writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return fail("cannot write to stdout");
    }
    ExitCode::SUCCESS
}
