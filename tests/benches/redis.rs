//! The Redis store on loopback, against a real `redis-server` started for the run: a claim
//! that finds a kept result (a hit: one round trip) and a first run (claim, confirmation and
//! completion: three), next to a bare `PING` on the same kind of connection, so the store's
//! cost reads as round trips.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tests::redis_server::RedisServer;
use tool_runtime::idempotency::{
    IdempotencyKey, IdempotencyStore, Lookup, RedisStore, StoredResult,
};

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

criterion_group!(benches, redis);
criterion_main!(benches);
