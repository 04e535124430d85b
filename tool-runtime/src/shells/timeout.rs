//! The timeout shell: an attempt that does not finish in time is dropped and answered with a
//! `timeout` error that says after how long.

use std::future::Future;
use std::task::Poll;

use std::time::Duration;
use tokio::time::Instant;

use tool_core::{ErrorKind, ToolError, ToolOutput};

/// An attempt ran out of time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the tool did not finish within {limit:?}; it was stopped")]
pub struct Elapsed {
    /// The timeout that fired.
    pub limit: Duration,
}

impl From<Elapsed> for ToolError {
    fn from(elapsed: Elapsed) -> Self {
        let millis = u64::try_from(elapsed.limit.as_millis()).unwrap_or(u64::MAX);
        ToolError::new(ErrorKind::Timeout, elapsed.to_string())
            .with_hint("try again with a narrower request, or use another tool")
            .with_details(serde_json::json!({ "timeout_ms": millis }))
    }
}

/// Runs `future` until `deadline` (the instant, and the limit it came from for the message);
/// `None` means no limit.
///
/// When the deadline passes, the future is dropped: the tool stops at its next await point.
/// A future that finishes on its first poll never starts a timer.
pub async fn run_until<Fut>(
    deadline: Option<(Instant, Duration)>,
    future: Fut,
) -> Result<ToolOutput, ToolError>
where
    Fut: Future<Output = Result<ToolOutput, ToolError>>,
{
    let Some((deadline, limit)) = deadline else {
        return future.await;
    };
    let mut future = std::pin::pin!(future);
    if let Poll::Ready(result) = futures::poll!(future.as_mut()) {
        return result;
    }
    // Boxed: the timer is large, and only calls that wait need it.
    match Box::pin(tokio::time::timeout_at(deadline, future)).await {
        Ok(result) => result,
        Err(_) => Err(Elapsed { limit }.into()),
    }
}
