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

#[cfg(test)]
mod stage_tests;

use std::time::Duration;

pub(crate) use retry::Retry;
pub use retry::RetryPolicy;

/// What the shells need to know of a call.
pub(crate) struct CallShells<'a> {
    pub(crate) retry: &'a RetryPolicy,
    /// Whether the tool may run again after a transient failure: it is read-only or declares
    /// `idempotent`.
    pub(crate) repeatable: bool,
    pub(crate) timeout: Option<Duration>,
}
