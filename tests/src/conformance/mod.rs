//! Conformance suites: the scenarios every store of a kind must pass, written once and run
//! against each implementation of the workspace.
//!
//! A suite is a module of scenarios (`async fn`s taking the stores under test) and a macro
//! that expands to one test per scenario for a store; a test binary invokes the macro once per
//! store, so a scenario added here runs against every store. What one store alone promises
//! (its layout in Redis, its eviction in memory) stays in that store's own tests.
//!
//! Time: the memory stores read tokio's clock, so their tests run with it paused (the
//! scenarios' sleeps pass at once, exactly); `RedisStore` reads the server's clock, so its
//! tests run in real time, and the scenarios' durations leave it room.

pub mod approval;
pub mod idempotency;
