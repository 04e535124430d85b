//! The timeout shell: an attempt that does not finish in time is dropped and answered with a
//! `timeout` error that says after how long. Each attempt's time counts from its own start.

use std::future::Future;
use std::panic::catch_unwind;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::{Instant, Sleep};
use tool_core::{ErrorKind, ToolError, ToolFuture, ToolOutput};

use super::contain::Contained;

/// The error of an attempt that ran out of time.
fn elapsed(limit: Duration) -> ToolError {
    let millis = u64::try_from(limit.as_millis()).unwrap_or(u64::MAX);
    ToolError::new(
        ErrorKind::Timeout,
        format!("the tool did not finish within {limit:?}; it was stopped"),
    )
    .with_hint("try again with a narrower request, or use another tool")
    .with_details(serde_json::json!({ "timeout_ms": millis }))
}

/// One attempt, started at `started`, given at most `limit`; `None` means no limit.
///
/// When the time is up, the attempt's future is dropped: the tool stops at its next await
/// point. An attempt that finishes on its first poll never starts a timer.
pub(crate) struct Timeout {
    attempt: Contained,
    limit: Option<Duration>,
    started: Instant,
    // Boxed: the timer is large, and only attempts that wait need it.
    timer: Option<Pin<Box<Sleep>>>,
}

impl Timeout {
    pub(crate) fn new(attempt: ToolFuture, started: Instant, limit: Option<Duration>) -> Self {
        Self {
            attempt: Contained::new(attempt),
            limit,
            started,
            timer: None,
        }
    }

    /// Stops the attempt: drops its future (contained).
    pub(crate) fn stop(&mut self) {
        self.attempt.stop();
        self.timer = None;
    }
}

impl Future for Timeout {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        // The attempt first: one that is ready when its time is up still counts.
        if let Poll::Ready(result) = Pin::new(&mut this.attempt).poll(cx) {
            this.timer = None;
            return Poll::Ready(result);
        }
        let Some(limit) = this.limit else {
            return Poll::Pending;
        };
        let timer = match &mut this.timer {
            Some(timer) => timer,
            None => {
                // A deadline past what the clock can represent is no deadline.
                let Some(deadline) = this.started.checked_add(limit) else {
                    return Poll::Pending;
                };
                match timer(deadline) {
                    Ok(timer) => this.timer.insert(timer),
                    Err(error) => {
                        this.stop();
                        return Poll::Ready(Err(error));
                    }
                }
            }
        };
        if timer.as_mut().poll(cx).is_ready() {
            this.stop();
            return Poll::Ready(Err(elapsed(limit)));
        }
        Poll::Pending
    }
}

/// A timer for `deadline`, or the error that says what the runtime needs when this executor
/// has no tokio timer: a clear answer for the call instead of a panic.
pub(crate) fn timer(deadline: Instant) -> Result<Pin<Box<Sleep>>, ToolError> {
    if tokio::runtime::Handle::try_current().is_err() {
        return Err(no_timer("it is not running inside a tokio runtime"));
    }
    catch_unwind(|| Box::pin(tokio::time::sleep_until(deadline)))
        .map_err(|_| no_timer("its tokio runtime has timers disabled"))
}

fn no_timer(why: &str) -> ToolError {
    ToolError::new(
        ErrorKind::Internal,
        format!(
            "the call needed a timer (for its timeout or a retry's backoff), but {why}; run the runtime's futures on a tokio runtime with timers enabled (`enable_time()` or `enable_all()` on the runtime builder, as `#[tokio::main]` does)"
        ),
    )
}
