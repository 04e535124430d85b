//! The timeout shell: an attempt that does not finish in time is dropped and answered with a
//! `timeout` error that says after how long. Each attempt's time counts from its own start.

use std::future::Future;
use std::panic::catch_unwind;
use std::task::Poll;
use std::time::Duration;

use tokio::time::Instant;
use tool_core::{ErrorKind, ToolError, ToolOutput};

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

/// Runs `future`, started at `started`, for at most `limit`; `None` means no limit.
///
/// When the time is up, the future is dropped: the tool stops at its next await point. A
/// future that finishes on its first poll never starts a timer.
pub(crate) async fn run<Fut>(
    limit: Option<Duration>,
    started: Instant,
    future: Fut,
) -> Result<ToolOutput, ToolError>
where
    Fut: Future<Output = Result<ToolOutput, ToolError>>,
{
    let Some(limit) = limit else {
        return future.await;
    };
    let mut future = std::pin::pin!(future);
    if let Poll::Ready(result) = futures::poll!(future.as_mut()) {
        return result;
    }
    let deadline = started.checked_add(limit);
    let mut timer = match deadline.map(timer).transpose() {
        Ok(timer) => timer,
        Err(error) => return Err(error),
    };
    match &mut timer {
        None => future.await,
        Some(timer) => {
            tokio::select! {
                biased;
                result = future => result,
                () = timer => Err(elapsed(limit)),
            }
        }
    }
}

/// A timer for `deadline`, or the error that says what the runtime needs when this executor
/// has no tokio timer: a clear answer for the call instead of a panic.
pub(crate) fn timer(
    deadline: Instant,
) -> Result<std::pin::Pin<Box<tokio::time::Sleep>>, ToolError> {
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
