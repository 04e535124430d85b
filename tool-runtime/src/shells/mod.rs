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

use std::time::Duration;

use tokio::time::Instant;
use tool_core::{ToolError, ToolFuture, ToolOutput};

pub use retry::RetryPolicy;

/// What came out of the shells: the result and how many attempts it took.
#[derive(Debug)]
pub struct ShellResult {
    /// The last attempt's result.
    pub result: Result<ToolOutput, ToolError>,
    /// How many attempts ran.
    pub attempts: u32,
}

/// Where the first attempt stands when the shells take it over. The runtime polls a tool
/// once before building the shells, because most tools answer on their first poll and need
/// no timer, no retry and no allocation for either.
pub enum FirstAttempt {
    /// Not started yet.
    Fresh(ToolFuture),
    /// Started at `started` and still running.
    Running {
        /// The attempt's future, already polled.
        future: ToolFuture,
        /// When it started: its timeout counts from then.
        started: Instant,
    },
    /// Finished (with a failure worth retrying, or the shells would not be needed).
    Finished(Result<ToolOutput, ToolError>),
}

impl std::fmt::Debug for FirstAttempt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FirstAttempt::Fresh(_) => f.write_str("Fresh"),
            FirstAttempt::Running { started, .. } => f
                .debug_struct("Running")
                .field("started", started)
                .finish_non_exhaustive(),
            FirstAttempt::Finished(result) => f.debug_tuple("Finished").field(result).finish(),
        }
    }
}

/// Runs a call through retry, timeout and contain, in that order (outermost first).
///
/// `first` is the first attempt; `again(n)` prepares a fresh attempt `n` (2, 3, ...).
pub async fn run<F>(
    policy: &RetryPolicy,
    limit: Option<Duration>,
    first: FirstAttempt,
    mut again: F,
) -> ShellResult
where
    F: FnMut(u32) -> ToolFuture,
{
    let mut first = Some(first);
    retry::run(policy, |number| {
        let attempt = first
            .take()
            .unwrap_or_else(|| FirstAttempt::Fresh(again(number)));
        async move {
            // An attempt's time counts from when it started.
            let (future, started) = match attempt {
                FirstAttempt::Fresh(future) => (future, Instant::now()),
                FirstAttempt::Running { future, started } => (future, started),
                FirstAttempt::Finished(result) => return result,
            };
            let deadline = limit.map(|limit| (started + limit, limit));
            timeout::run_until(deadline, contain::run(future)).await
        }
    })
    .await
}
