//! Every idempotency store scenario of `tests::conformance::idempotency`, against the memory
//! store (tokio's clock paused) and `RedisStore` (a `redis-server` per test, real time). What
//! one store alone does is tested in `redis_store.rs`, `idempotency.rs` and the memory store's
//! own unit tests.

mod memory {
    tests::idempotency_store_scenarios!(
        #[tokio::test(start_paused = true)]
        tests::conformance::idempotency::Stores::memory()
    );
}

mod redis {
    tests::idempotency_store_scenarios!(
        #[tokio::test]
        tests::conformance::idempotency::Stores::redis()
    );
}
