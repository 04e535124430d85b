//! Shared helpers for the integration tests.

pub mod approver;
pub mod redis_server;
