//! Exactly once: the idempotency layer through the runtime, the memory store and `RedisStore`
//! (against a real `redis-server` each test starts), what rests in a store (redacted), and
//! runs' records and route decisions in `RedisStore` (`redis_runs`). `stores` (each store
//! alone) and `layer` (through the runtime) run the same scenarios against every store; the
//! other modules hold what one store alone does.
//!
//! One binary for several files. Every runtime here names its tools (`.inventory(false)`), so
//! the `#[tool]`s of one module never reach another's runtime.

pub mod idempotency;
pub mod idempotency_memory;
pub mod layer;
pub mod redis_layer;
pub mod redis_runs;
pub mod redis_store;
pub mod secrets_at_rest;
pub mod stores;
