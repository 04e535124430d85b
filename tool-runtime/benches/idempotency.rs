//! The idempotency layer: a memory store's hit on its own, and per call in a turn of 64
//! repeated writes answered from it, next to 64 read-only calls (which skip the layer) and the
//! same hand-written baseline as the other benchmarks.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use tool_runtime::{
    IdempotencyKey, IdempotencyStore, Lookup, MemoryIdempotency, Runtime, Session, ToolCall, tool,
    tools,
};

/// Deps of the benchmark.
pub struct Desk;

/// What the tools return.
#[derive(Serialize, schemars::JsonSchema)]
pub struct Echo {
    order_id: String,
    ok: bool,
}

/// A read that echoes.
#[tool(read_only)]
async fn noop(
    /// The order id.
    order_id: String,
) -> Echo {
    Echo { order_id, ok: true }
}

/// A write that echoes: the layer applies.
#[tool(stateful)]
async fn write(
    /// The order id.
    order_id: String,
) -> Echo {
    Echo { order_id, ok: true }
}

#[derive(Deserialize)]
struct BaselineArgs {
    order_id: String,
}

const ARGS: &str = r#"{"order_id":"A-1024"}"#;

fn calls(count: usize, name: &str) -> Vec<ToolCall> {
    (0..count)
        .map(|n| ToolCall::new(format!("call_{n}"), name, ARGS))
        .collect()
}

fn idempotency(c: &mut Criterion) {
    let executor = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(executor) => executor,
        Err(error) => panic!("executor: {error}"),
    };
    let runtime = match Runtime::builder(Desk)
        .inventory(false)
        .tools(tools![noop, write])
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let session = Session::new("bench");

    let mut group = c.benchmark_group("idempotency");
    group.throughput(Throughput::Elements(1));
    group.bench_function("baseline: from_str + direct call + to_string", |b| {
        b.iter(|| {
            let args: BaselineArgs = match serde_json::from_str(black_box(ARGS)) {
                Ok(args) => args,
                Err(error) => panic!("{error}"),
            };
            let echo = Echo {
                order_id: args.order_id,
                ok: true,
            };
            black_box(serde_json::to_string(&echo).map(|json| json.len()))
        });
    });
    let store = MemoryIdempotency::default();
    let key = IdempotencyKey {
        scope: "bench".into(),
        tool: "write".into(),
        digest: "0".repeat(64),
        arguments_digest: "0".repeat(64),
        holder: None,
    };
    let ttl = Duration::from_secs(600);
    executor.block_on(async {
        if let Ok(Lookup::Claimed(claim)) = store.claim(key.clone(), ttl).await {
            let result = tool_runtime::StoredResult {
                arguments_digest: key.arguments_digest.clone(),
                output: r#"{"order_id":"A-1024","ok":true}"#.into(),
                page: None,
            };
            let _ = store.complete(key.clone(), claim, result).await;
        }
    });
    group.bench_function("memory store: a hit", |b| {
        b.iter(|| black_box(executor.block_on(store.claim(key.clone(), ttl)).is_ok()));
    });

    group.throughput(Throughput::Elements(64));
    let reads = calls(64, "noop");
    group.bench_function("64 read-only calls, one turn", |b| {
        b.iter(|| black_box(executor.block_on(runtime.execute(&session, &reads))));
    });
    let writes = calls(64, "write");
    executor.block_on(runtime.execute(&session, &writes));
    group.bench_function(
        "64 repeated writes answered from the store, one turn",
        |b| {
            b.iter(|| black_box(executor.block_on(runtime.execute(&session, &writes))));
        },
    );
    group.finish();
}

criterion_group!(benches, idempotency);
criterion_main!(benches);
