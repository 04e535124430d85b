//! Shared helpers for the integration tests: approvers, reports, deferred decisions, stores
//! that remember what they were asked, a throwaway `redis-server` and a look at what a store
//! wrote there, captured logs, worker processes, and the conformance suites every store of a
//! kind runs.
//!
//! Nothing here defines a `#[tool]` nor names the `examples` or `tool_library` crates: what a
//! test binary links decides what its inventory holds, and some tests assert exactly that.

pub mod approver;
pub mod conformance;
pub mod decisions;
pub mod log;
pub mod redis_server;
pub mod redis_view;
pub mod report;
pub mod stores;
pub mod worker;

/// Compiles only when `T` is `Send`: a test that calls it proves a public future can be
/// spawned.
pub fn assert_send<T: Send>(_: &T) {}
