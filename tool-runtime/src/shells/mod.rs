//! The shells a call runs through, outermost first (DESIGN.md decision 9):
//!
//! ```text
//! approval -> idempotency -> retry -> timeout -> contain -> the tool
//! ```
//!
//! - [`retry`] runs the call again, with exponential backoff and jitter, only when the tool
//!   marked its failure transient;
//! - [`timeout`] gives each attempt its time and drops the attempt's future when it is up;
//! - [`contain`] turns a panic in the tool into a `panicked` error.
//!
//! Approval and idempotency wrap these from the outside, so a denied call never reaches the
//! idempotency cache and a cached success is never retried. [`run`] stacks the shells in this
//! order; each shell is its own module with its own error and docs.

pub mod contain;
pub mod retry;
pub mod timeout;

use std::future::Future;
use std::time::Duration;

use tool_core::{ToolError, ToolOutput};

pub use retry::RetryPolicy;

/// What came out of the shells: the result and how many attempts it took.
#[derive(Debug)]
pub struct ShellResult {
    /// The last attempt's result.
    pub result: Result<ToolOutput, ToolError>,
    /// How many attempts ran.
    pub attempts: u32,
}

/// Runs `attempt` through retry, timeout and contain, in that order (outermost first).
///
/// `attempt(n)` starts attempt `n` (1-based): it prepares a fresh future of the tool.
pub async fn run<F, Fut>(
    policy: &RetryPolicy,
    limit: Option<Duration>,
    mut attempt: F,
) -> ShellResult
where
    F: FnMut(u32) -> Fut,
    Fut: Future<Output = Result<ToolOutput, ToolError>>,
{
    retry::run(policy, |number| {
        let future = attempt(number);
        timeout::run(limit, contain::run(future))
    })
    .await
}
