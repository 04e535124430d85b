//! The timeout shell: an attempt that does not finish in time is dropped and answered with a
//! `timeout` error that says after how long.

use std::future::Future;
use std::time::Duration;

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

/// Runs `future` for at most `limit`; `None` means no limit.
///
/// When the limit passes, the future is dropped: the tool stops at its next await point.
pub async fn run<Fut>(limit: Option<Duration>, future: Fut) -> Result<ToolOutput, ToolError>
where
    Fut: Future<Output = Result<ToolOutput, ToolError>>,
{
    match limit {
        None => future.await,
        Some(limit) => match tokio::time::timeout(limit, future).await {
            Ok(result) => result,
            Err(_) => Err(Elapsed { limit }.into()),
        },
    }
}
