//! Every approval store scenario of `tests::conformance::approval`, against the memory store
//! and `RedisStore` (a `redis-server` per test), on two worker threads so that racing takes
//! race. What one store alone does (Redis's keys and expiry, the memory store's capacity) is
//! tested in `exactly_once/redis_store.rs` and the memory store's own unit tests.

mod memory {
    tests::approval_store_scenarios!(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        tests::conformance::approval::Stores::memory()
    );
}

mod redis {
    tests::approval_store_scenarios!(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        tests::conformance::approval::Stores::redis()
    );
}
