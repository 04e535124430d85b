//! The idempotency layer: a memory store's hit on its own, its first run (claim and complete)
//! on an empty store and on a full one (10,000 keys, each new key evicting the oldest result),
//! and per call in a turn of 64 repeated writes answered from it, next to 64 read-only calls
//! (which skip the layer) and the same hand-written baseline as the other benchmarks.

use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use tool_runtime::idempotency::{
    IdempotencyKey, IdempotencyStore, Lookup, MemoryIdempotency, StoredResult,
};
use tool_runtime::{Runtime, Session, ToolCall, tool, tools};

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
            let result = StoredResult {
                arguments_digest: key.arguments_digest.clone(),
                output: r#"{"order_id":"A-1024","ok":true}"#.into(),
                page: None,
                content_blocks: false,
            };
            let _ = store.complete(key.clone(), claim, result).await;
        }
    });
    group.bench_function("memory store: a hit", |b| {
        b.iter(|| black_box(executor.block_on(store.claim(key.clone(), ttl)).is_ok()));
    });

    // A first run: claim a key never seen, complete it. Its key and result are made outside
    // the measurement, on both rows alike.
    let first_run = |store: &MemoryIdempotency,
                     (key, result): &mut (IdempotencyKey, StoredResult)| {
        executor.block_on(async {
            if let Ok(Lookup::Claimed(claim)) = store.claim(key.clone(), ttl).await {
                let _ = store.complete(key.clone(), claim, result.clone()).await;
            }
        });
    };
    let mut seen = 0_u64;
    let mut fresh = move || {
        seen += 1;
        let key = IdempotencyKey {
            digest: format!("{seen:064x}"),
            ..key.clone()
        };
        let result = StoredResult {
            arguments_digest: key.arguments_digest.clone(),
            output: r#"{"order_id":"A-1024","ok":true}"#.into(),
            page: None,
            content_blocks: false,
        };
        (key, result)
    };
    // Empty, but not new: a key kept a microsecond and expired, so that the measured run
    // does not pay for the first allocation of the store's tables.
    let empty = |fresh: &mut dyn FnMut() -> (IdempotencyKey, StoredResult)| {
        let store = MemoryIdempotency::default();
        let (key, result) = fresh();
        executor.block_on(async {
            if let Ok(Lookup::Claimed(claim)) =
                store.claim(key.clone(), Duration::from_micros(1)).await
            {
                let _ = store.complete(key, claim, result).await;
            }
        });
        while !store.is_empty() {
            std::hint::spin_loop();
        }
        store
    };
    group.bench_function("first run (claim and complete) on an empty store", |b| {
        b.iter_batched_ref(
            || (empty(&mut fresh), fresh()),
            |(store, run)| first_run(store, run),
            BatchSize::SmallInput,
        );
    });
    let full = MemoryIdempotency::default();
    for _ in 0..10_000 {
        first_run(&full, &mut fresh());
    }
    assert_eq!(full.len(), 10_000);
    group.bench_function("first run on a full store (10,000 keys)", |b| {
        b.iter_batched_ref(
            &mut fresh,
            |run| first_run(&full, run),
            BatchSize::SmallInput,
        );
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
