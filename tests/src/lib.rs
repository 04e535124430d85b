//! Shared helpers for the integration tests.

pub mod redis_server;
