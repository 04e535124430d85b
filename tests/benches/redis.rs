//! The Redis store on loopback, against a real `redis-server` started for the run: a claim
//! that finds a kept result (a hit: one round trip) and a first run (claim, confirmation and
//! completion: three), next to a bare `PING` on the same kind of connection, so the store's
//! cost reads as round trips; and what a run's record costs per round (`run_store_per_round`:
//! the model's answer and its calls' answers appended, in memory and in Redis: two round
//! trips).

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tests::redis_server::RedisServer;
use tool_runtime::ToolCall;
use tool_runtime::idempotency::{
    IdempotencyKey, IdempotencyStore, Lookup, RedisStore, StoredResult,
};
use tool_runtime::model::{Message, ModelResponse, Usage};
use tool_runtime::run::{MemoryRunStore, RunEvent, RunKey, RunStore, Spent};

fn key(digest: String) -> IdempotencyKey {
    IdempotencyKey {
        scope: "bench".into(),
        tool: "create_ticket".into(),
        digest,
        arguments_digest: "0".repeat(64),
        holder: None,
    }
}

fn result() -> StoredResult {
    StoredResult {
        arguments_digest: "0".repeat(64),
        output: r#"{"ticket":"T-1","subject":"A-1008 is late"}"#.into(),
        page: None,
        content_blocks: false,
    }
}

fn redis(c: &mut Criterion) {
    let server = RedisServer::start();
    let executor = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(executor) => executor,
        Err(error) => panic!("executor: {error}"),
    };
    let store = match executor.block_on(RedisStore::connect(&server.url())) {
        Ok(store) => store,
        Err(error) => panic!("{error}"),
    };
    let ping = match executor.block_on(async {
        redis::Client::open(server.url())?
            .get_multiplexed_async_connection()
            .await
    }) {
        Ok(connection) => connection,
        Err(error) => panic!("{error}"),
    };
    let ttl = Duration::from_secs(600);
    let kept = key("kept".into());
    executor.block_on(async {
        if let Ok(Lookup::Claimed(claim)) = store.claim(kept.clone(), ttl).await {
            let _ = store.complete(kept.clone(), claim, result()).await;
        }
    });

    let mut group = c.benchmark_group("redis_store");
    group.bench_function("PING (one round trip)", |b| {
        b.iter(|| {
            let mut connection = ping.clone();
            let pong: redis::RedisResult<String> =
                executor.block_on(redis::cmd("PING").query_async(&mut connection));
            black_box(pong.is_ok())
        });
    });
    group.bench_function("hit: a claim finds the kept result", |b| {
        b.iter(|| black_box(executor.block_on(store.claim(kept.clone(), ttl)).is_ok()));
    });
    let mut next = 0_u64;
    group.bench_function("miss: claim, then complete", |b| {
        b.iter(|| {
            next += 1;
            let fresh = key(format!("fresh-{next}"));
            executor.block_on(async {
                if let Ok(Lookup::Claimed(claim)) = store.claim(fresh.clone(), ttl).await {
                    black_box(store.complete(fresh, claim, result()).await.is_ok());
                }
            });
        });
    });
    group.finish();
}

/// What the run loop appends for one round: the model's answer (one call), then what the
/// call got.
fn round_events(round: u32) -> [RunEvent; 2] {
    let mut response = ModelResponse::calls([ToolCall::new(
        "c1",
        "create_ticket",
        r#"{"subject":"A-1008 is late","priority":"high"}"#,
    )]);
    response.usage = Some(Usage::new(850, 40));
    let mut spent = Spent::default();
    spent.rounds = round;
    spent.calls = round;
    spent.usage = Usage::new(850 * u64::from(round), 40 * u64::from(round));
    [
        RunEvent::Answered { round, response },
        RunEvent::Observed {
            round,
            results: vec![Message::Tool {
                call_id: "c1".to_owned(),
                tool: "create_ticket".to_owned(),
                content: r#"{"ticket":"T-1","subject":"A-1008 is late"}"#.to_owned(),
                is_error: false,
            }],
            spent,
        },
    ]
}

/// Rounds per run: a new run (a new record) starts after this many.
const ROUNDS_PER_RUN: u64 = 50;

/// Appends round number `round` (from 0, over all runs) to `store`: its two events, at the
/// record's next positions. A run gets a new id every [`ROUNDS_PER_RUN`] rounds, so records
/// stay the size of a real run's.
async fn append_round(store: &dyn RunStore, round: u64) {
    let run = RunKey::new("bench", format!("run-{}", round / ROUNDS_PER_RUN));
    let in_run = round % ROUNDS_PER_RUN;
    let position = usize::try_from(in_run * 2).unwrap_or(usize::MAX);
    let number = u32::try_from(in_run + 1).unwrap_or(u32::MAX);
    for (offset, event) in round_events(number).iter().enumerate() {
        let appended = store.append(&run, position + offset, event).await;
        if let Err(error) = appended {
            panic!("round {round}: {error}");
        }
    }
}

fn run_store(c: &mut Criterion) {
    let server = RedisServer::start();
    let executor = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(executor) => executor,
        Err(error) => panic!("executor: {error}"),
    };
    let redis = match executor.block_on(RedisStore::connect(&server.url())) {
        Ok(store) => store,
        Err(error) => panic!("{error}"),
    };
    // Two round trips per round on Redis: each append is one script (`EVALSHA`).
    let mut group = c.benchmark_group("run_store_per_round");
    let mut memory = MemoryRunStore::default();
    let mut round = 0_u64;
    group.bench_function("memory: Answered + Observed", |b| {
        b.iter(|| {
            // A new store with each run: the memory one keeps every record otherwise.
            if round.is_multiple_of(ROUNDS_PER_RUN) {
                memory = MemoryRunStore::default();
            }
            executor.block_on(append_round(&memory, round));
            round += 1;
        });
    });
    let mut round = 0_u64;
    group.bench_function("redis: Answered + Observed (2 round trips)", |b| {
        b.iter(|| {
            executor.block_on(append_round(&redis, round));
            round += 1;
        });
    });
    group.finish();
}

criterion_group!(benches, redis, run_store);
criterion_main!(benches);
