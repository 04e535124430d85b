//! The run loop's own cost: a run whose scripted model answers at once with 8 read-only no-op
//! calls a round, per round, next to the runtime's turn of the same 8 calls alone, in the same
//! bench run. The difference is what the loop adds around a turn: asking the model (a script
//! here), the run record in memory (two appends a round), the budget's meter at the gate,
//! rendering the observations as messages, and the catalog lowered once per run.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde::Serialize;
use tool_runtime::model::{ModelResponse, ScriptedModel, Usage};
use tool_runtime::run::{Agent, Budget, RunEnd, RunRequest};
use tool_runtime::{Runtime, Session, ToolCall, tool, tools};

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
async fn run_noop(
    /// The order id.
    order_id: String,
) -> Echo {
    Echo { order_id, ok: true }
}

/// Calls per round.
const CALLS: usize = 8;

/// Rounds of calls per run (the answer after them is one more round).
const ROUNDS: usize = 4;

fn runtime() -> Runtime<Desk> {
    match Runtime::builder(Desk)
        .inventory(false)
        .tools(tools![run_noop])
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("the bench runtime builds: {error}"),
    }
}

/// Round `round`'s calls: each one new (another order id), so no duplicate is refused and
/// every round makes progress.
fn round_calls(round: usize) -> Vec<ToolCall> {
    (0..CALLS)
        .map(|call| {
            ToolCall::new(
                format!("c{round}-{call}"),
                "run_noop",
                format!(r#"{{"order_id":"A-{round}{call:03}"}}"#),
            )
        })
        .collect()
}

/// The script: `ROUNDS` rounds of calls, then the answer. The model reports its usage, so the
/// loop counts no tokens itself.
fn script() -> Vec<ModelResponse> {
    let usage = Usage::new(100, 10);
    (0..ROUNDS)
        .map(|round| ModelResponse::calls(round_calls(round)).with_usage(usage))
        .chain(std::iter::once(
            ModelResponse::text("done").with_usage(usage),
        ))
        .collect()
}

fn executor() -> tokio::runtime::Runtime {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(executor) => executor,
        Err(error) => panic!("the bench executor builds: {error}"),
    }
}

fn loop_cost(c: &mut Criterion) {
    let executor = executor();
    let runtime = runtime();
    let session = Session::new("s-bench");
    let mut group = c.benchmark_group("run_loop");
    // Per round of 8 calls.
    group.throughput(Throughput::Elements(1));

    let calls = round_calls(0);
    group.bench_function("runtime turn alone, 8 calls", |b| {
        b.iter(|| black_box(executor.block_on(runtime.execute(&session, &calls))));
    });

    // A run of ROUNDS rounds of calls and one answer, timed whole and divided by its rounds of
    // calls: each iteration is a new agent (its own record in memory) and a new run.
    let budget = Budget::default()
        .max_tool_calls(1_000)
        .max_wall_time(Duration::from_secs(3600));
    group.bench_function("run loop, per round of 8 calls", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let agent = Agent::new(runtime.clone(), ScriptedModel::new(script()))
                    .budget(budget.clone());
                let request = RunRequest::new("r-bench", session.clone(), "go");
                let started = Instant::now();
                let report = executor.block_on(agent.run(request));
                let elapsed = started.elapsed();
                match report {
                    Ok(report) if report.end == RunEnd::Answered => {}
                    other => panic!("the bench run answers: {other:?}"),
                }
                total += elapsed / u32::try_from(ROUNDS).unwrap_or(1);
            }
            total
        });
    });
    group.finish();
}

criterion_group!(benches, loop_cost);
criterion_main!(benches);
