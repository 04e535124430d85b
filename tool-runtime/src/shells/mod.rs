//! The shells a call runs through once it is cleared to run, outermost first (DESIGN.md
//! decision 9):
//!
//! ```text
//! retry -> timeout -> contain -> the tool
//! ```
//!
//! - [`retry`](RetryPolicy) runs the call again, with exponential backoff and jitter, only
//!   when repeating it is safe: the failure is transient and the tool is read-only or declares
//!   `idempotent`, or the tool marked the failure [safe to
//!   repeat](tool_core::ToolError::safe_to_repeat) (nothing was done). An automatic conversion
//!   (an I/O error) never makes a write retryable;
//! - `timeout` gives each attempt its own time, counted from that attempt's start, and drops
//!   the attempt's future when it is up;
//! - `contain` turns a panic in the tool (while it is polled, or dropped) into a `panicked`
//!   error.
//!
//! A shell with nothing to do costs nothing: an attempt that finishes on its first poll never
//! starts a timer, and a call that succeeds never touches the retry state.

pub(crate) mod contain;
pub(crate) mod retry;
pub(crate) mod timeout;

use std::time::Duration;

use tokio::time::Instant;
use tool_core::{ToolError, ToolFuture, ToolOutput};

pub use retry::RetryPolicy;

/// What the shells need to know of a call.
pub(crate) struct CallShells<'a> {
    pub(crate) retry: &'a RetryPolicy,
    /// Whether the tool may run again after a transient failure: it is read-only or declares
    /// `idempotent`.
    pub(crate) repeatable: bool,
    pub(crate) timeout: Option<Duration>,
}

/// Runs a call through retry, timeout and contain, in that order (outermost first).
///
/// `first` is the first attempt, started at `started`; `again()` prepares a fresh attempt.
/// Returns the last attempt's result and how many attempts ran.
pub(crate) async fn run<F>(
    shells: &CallShells<'_>,
    first: ToolFuture,
    started: Instant,
    again: F,
) -> (Result<ToolOutput, ToolError>, u32)
where
    F: FnMut() -> ToolFuture,
{
    let mut first = Some((first, started));
    let mut again = again;
    retry::run(shells.retry, shells.repeatable, || {
        let (future, started) = match first.take() {
            Some(first) => first,
            None => (again(), Instant::now()),
        };
        timeout::run(shells.timeout, started, contain::Contained::new(future))
    })
    .await
}
