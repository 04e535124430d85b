//! The governed path: a whole turn through the runtime (plan, schedule, shells, output
//! policy), for one call and per call in a batch of 64 read-only no-op calls (with and without
//! a `RunContext` to inject, with arguments as JSON text and as a parsed `Value`, answering at
//! once and awaiting once; and with every gate set: scope, principal, a policy with an argument
//! rule, an audit sink), against the same hand-written baseline as the dispatch benchmark;
//! and the wall time, with the default settings, of 64 calls that each sleep 10 ms, read-only
//! (concurrent) against writes (serial).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use tool_runtime::audit::MemoryAudit;
use tool_runtime::gates::{Action, Compare, Policy};
use tool_runtime::{Principal, RunContext, Runtime, Scope, Session, ToolCall, tool, tools};

/// Deps of the benchmark.
pub struct Desk;

/// What the no-op tool returns.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Echo {
    order_id: String,
    ok: bool,
}

/// Does nothing but echo.
#[tool(read_only)]
async fn noop(
    /// The order id.
    order_id: String,
) -> Echo {
    Echo { order_id, ok: true }
}

/// Does nothing but echo, reading the session's deps.
#[tool(read_only)]
async fn noop_with_context(
    ctx: RunContext<Desk>,
    /// The order id.
    order_id: String,
) -> Echo {
    let Desk = ctx.deps();
    Echo { order_id, ok: true }
}

/// Echoes after yielding once to the executor, as a tool awaiting I/O that is ready does.
#[tool(read_only)]
async fn noop_awaiting_once(
    /// The order id.
    order_id: String,
) -> Echo {
    tokio::task::yield_now().await;
    Echo { order_id, ok: true }
}

/// Sleeps 10 ms, reading.
#[tool(read_only)]
async fn sleep_read() -> u32 {
    tokio::time::sleep(Duration::from_millis(10)).await;
    1
}

/// Sleeps 10 ms, writing.
#[tool(mutates_workspace)]
async fn sleep_write() -> u32 {
    tokio::time::sleep(Duration::from_millis(10)).await;
    1
}

#[derive(Deserialize)]
struct BaselineArgs {
    order_id: String,
}

const ARGS: &str = r#"{"order_id":"A-1024"}"#;

fn calls(count: usize, name: &str, args: &str) -> Vec<ToolCall> {
    (0..count)
        .map(|n| ToolCall::new(format!("call_{n}"), name, args))
        .collect()
}

/// A runtime with the default settings.
fn runtime() -> Runtime<Desk> {
    match Runtime::builder(Desk)
        .inventory(false)
        .tools(tools![
            noop,
            noop_with_context,
            noop_awaiting_once,
            sleep_read,
            sleep_write
        ])
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

/// A runtime with every gate set as an application sets them: a policy with one rule over an
/// argument, and an audit sink.
fn gated_runtime() -> Runtime<Desk> {
    let policy = Policy::new().rule_field(
        "noop",
        "order_id",
        Compare::Eq,
        "A-0000",
        Action::Deny,
        "that order is closed",
    );
    match Runtime::builder(Desk)
        .inventory(false)
        .tools(tools![noop, sleep_write])
        .policy(policy)
        .audit(MemoryAudit::new())
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

/// A session as a gated application has one: a principal and a scope.
fn gated_session() -> Session {
    Session::new("bench")
        .with_principal(Principal::new("ada").with_role("agent"))
        .with_scope(Scope::of(tools![noop]))
}

fn executor() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(executor) => executor,
        Err(error) => panic!("executor: {error}"),
    }
}

fn governed(c: &mut Criterion) {
    let executor = executor();
    let runtime = runtime();
    let session = Session::new("bench");

    let mut group = c.benchmark_group("governed");
    group.throughput(Throughput::Elements(1));
    group.bench_function("baseline: from_str + direct call + to_string", |b| {
        b.iter(|| {
            let args: BaselineArgs =
                serde_json::from_str(black_box(ARGS)).unwrap_or_else(|_| unreachable!());
            let echo = Echo {
                order_id: args.order_id,
                ok: true,
            };
            black_box(serde_json::to_string(&echo).unwrap_or_default())
        });
    });
    // The calls are what the model sent: made once, outside the timing, and borrowed. The
    // report is dropped inside the timing, as the baseline's output is.
    let one = calls(1, "noop", ARGS);
    group.bench_function("one call, whole turn", |b| {
        b.iter(|| black_box(executor.block_on(runtime.execute(&session, &one))));
    });
    // An agent calls `execute` from async code it is already running: the executor is entered
    // once for all the turns timed, not once per turn.
    group.bench_function("one call, whole turn, inside the executor", |b| {
        b.iter_custom(|turns| {
            executor.block_on(async {
                let start = std::time::Instant::now();
                for _ in 0..turns {
                    black_box(runtime.execute(&session, &one).await);
                }
                start.elapsed()
            })
        });
    });
    group.throughput(Throughput::Elements(64));
    let many = calls(64, "noop", ARGS);
    group.bench_function("64 read-only calls, one turn", |b| {
        b.iter(|| black_box(executor.block_on(runtime.execute(&session, &many))));
    });
    let many = calls(64, "noop_with_context", ARGS);
    group.bench_function("64 read-only calls taking their context, one turn", |b| {
        b.iter(|| black_box(executor.block_on(runtime.execute(&session, &many))));
    });
    let many: Vec<ToolCall> = (0..64)
        .map(|n| {
            ToolCall::new(
                format!("call_{n}"),
                "noop",
                serde_json::json!({"order_id": "A-1024"}),
            )
        })
        .collect();
    group.bench_function("64 read-only calls, arguments as a Value, one turn", |b| {
        b.iter(|| black_box(executor.block_on(runtime.execute(&session, &many))));
    });
    let many = calls(64, "noop_awaiting_once", ARGS);
    group.bench_function("64 read-only calls awaiting once, one turn", |b| {
        b.iter(|| black_box(executor.block_on(runtime.execute(&session, &many))));
    });
    // Every gate set: scope, principal, a policy with one argument rule, an audit sink.
    let gated = gated_runtime();
    let gated_session = gated_session();
    let many = calls(64, "noop", ARGS);
    group.bench_function("64 read-only calls, gated, one turn", |b| {
        b.iter(|| black_box(executor.block_on(gated.execute(&gated_session, &many))));
    });
    group.throughput(Throughput::Elements(1));
    group.bench_function("one call, gated, whole turn", |b| {
        b.iter(|| black_box(executor.block_on(gated.execute(&gated_session, &one))));
    });
    group.finish();
}

fn sleeping(c: &mut Criterion) {
    let executor = executor();
    let runtime = runtime();
    let session = Session::new("bench");

    let mut group = c.benchmark_group("sleeping_64");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(8));
    group.bench_function("one 10 ms call", |b| {
        b.iter(|| executor.block_on(runtime.execute(&session, calls(1, "sleep_read", "{}"))));
    });
    group.bench_function("64 read-only 10 ms calls", |b| {
        b.iter(|| executor.block_on(runtime.execute(&session, calls(64, "sleep_read", "{}"))));
    });
    group.bench_function("64 write 10 ms calls", |b| {
        b.iter(|| executor.block_on(runtime.execute(&session, calls(64, "sleep_write", "{}"))));
    });
    group.finish();
}

criterion_group!(benches, governed, sleeping);
criterion_main!(benches);
