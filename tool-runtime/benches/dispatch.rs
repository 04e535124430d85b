//! Dispatch of a `#[tool]` function, JSON string in and JSON string out, against a
//! hand-written baseline doing the same work directly: `serde_json::from_str` into a struct,
//! a direct call, `serde_json::to_string`. All run in the same process and the same harness;
//! compare the ratio, not the absolute times.
//!
//! Two baselines: the tool's body called with borrowed deps, and the `#[tool]` function itself
//! called directly, which needs the owned `RunContext` its signature asks for (one reference
//! count taken and dropped, as in dispatch).
//!
//! Timed for the tool: handing it a context (a clone of one made once, as the runtime makes
//! one per call while planning), parsing, injecting the context, boxing and polling the
//! tool's future, serializing the result, dropping it all.

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tool_runtime::core::{CallContext, ToolArgs};
use tool_runtime::{RunContext, tool};

/// Deps of the benchmark.
pub struct Desk {
    region: &'static str,
}

/// What the tool returns.
#[derive(Serialize, JsonSchema)]
pub struct Status {
    order_id: String,
    status: &'static str,
    region: &'static str,
    items: Option<Vec<u32>>,
}

fn status(desk: &Desk, order_id: String, include_items: Option<bool>) -> Status {
    Status {
        order_id,
        status: "shipped",
        region: desk.region,
        items: include_items.unwrap_or(false).then(|| vec![1, 2, 3]),
    }
}

/// Look up one order.
#[tool(read_only)]
async fn get_status(
    ctx: RunContext<Desk>,
    /// The order id.
    order_id: String,
    /// Include the items.
    include_items: Option<bool>,
) -> Status {
    status(ctx.deps(), order_id, include_items)
}

/// Look up one order, without a context.
#[tool(read_only)]
async fn get_status_plain(
    /// The order id.
    order_id: String,
    /// Include the items.
    include_items: Option<bool>,
) -> Status {
    status(&Desk { region: "eu-north" }, order_id, include_items)
}

/// The baseline's arguments, written by hand.
#[derive(Deserialize)]
struct BaselineArgs {
    order_id: String,
    include_items: Option<bool>,
}

/// Polls a future that completes without waiting.
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(output) = future.as_mut().poll(&mut context) {
            return output;
        }
    }
}

const ARGS: &str = r#"{"order_id":"A-1024","include_items":true}"#;

fn dispatch(c: &mut Criterion) {
    let desk = Arc::new(Desk { region: "eu-north" });
    let call = CallContext::new(Arc::clone(&desk), "session", "call-1", "get_status");
    let tool = get_status::tool();

    let mut group = c.benchmark_group("dispatch");
    group.bench_function("baseline: from_str + direct call + to_string", |b| {
        b.iter(|| {
            let args: BaselineArgs =
                serde_json::from_str(black_box(ARGS)).unwrap_or_else(|_| unreachable!());
            let result = ready(async { status(&desk, args.order_id, args.include_items) });
            black_box(serde_json::to_string(&result).unwrap_or_default())
        });
    });
    // The same, calling the `#[tool]` function itself: its signature asks for an owned
    // context, which a direct call has to hand it as well.
    group.bench_function(
        "baseline: from_str + direct call of the tool function + to_string",
        |b| {
            b.iter(|| {
                let args: BaselineArgs =
                    serde_json::from_str(black_box(ARGS)).unwrap_or_else(|_| unreachable!());
                let Ok(ctx) = RunContext::<Desk>::from_call(&call) else {
                    unreachable!()
                };
                let result = ready(get_status(ctx, args.order_id, args.include_items));
                black_box(serde_json::to_string(&result).unwrap_or_default())
            });
        },
    );
    group.bench_function("#[tool] via Tool::prepare", |b| {
        b.iter(|| {
            let output = tool
                .prepare(ToolArgs::Json(black_box(ARGS)), &call)
                .map(ready);
            black_box(output.map(|output| output.map(tool_runtime::ToolOutput::into_json)))
        });
    });
    let plain = get_status_plain::tool();
    group.bench_function("#[tool] without a context", |b| {
        b.iter(|| {
            let output = plain
                .prepare(ToolArgs::Json(black_box(ARGS)), &call)
                .map(ready);
            black_box(output.map(|output| output.map(tool_runtime::ToolOutput::into_json)))
        });
    });
    group.finish();
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
