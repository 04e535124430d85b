//! The contain shell: a panic in a tool becomes a `panicked` error for that call only; the
//! other calls of the batch and the runtime go on.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use tool_core::{ErrorKind, ToolError, ToolOutput};

/// A tool panicked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the tool panicked: {message}")]
pub struct Panicked {
    /// The panic's message, when it had one.
    pub message: String,
}

impl Panicked {
    /// Reads the message out of a panic payload.
    pub fn from_payload(payload: &(dyn Any + Send)) -> Self {
        let message = payload
            .downcast_ref::<&str>()
            .map(|message| (*message).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "no message".to_owned());
        Self { message }
    }
}

impl From<Panicked> for ToolError {
    fn from(panicked: Panicked) -> Self {
        ToolError::new(ErrorKind::Panicked, panicked.to_string())
            .with_hint("this is a bug in the tool; do not retry the same call")
    }
}

/// Polls `future`, turning a panic into a `panicked` error.
///
/// The tool's state is dropped after a panic and never observed again, so asserting unwind
/// safety is sound here.
pub async fn run<Fut>(future: Fut) -> Result<ToolOutput, ToolError>
where
    Fut: Future<Output = Result<ToolOutput, ToolError>>,
{
    match AssertUnwindSafe(future).catch_unwind().await {
        Ok(result) => result,
        Err(payload) => Err(Panicked::from_payload(payload.as_ref()).into()),
    }
}

/// Polls `future` once, turning a panic into a `panicked` error.
pub fn poll_once(
    future: &mut tool_core::ToolFuture,
    cx: &mut std::task::Context<'_>,
) -> std::task::Poll<Result<ToolOutput, ToolError>> {
    std::panic::catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx))).unwrap_or_else(
        |payload| std::task::Poll::Ready(Err(Panicked::from_payload(payload.as_ref()).into())),
    )
}

/// Calls `prepare`, turning a panic (in a parameter's `Deserialize`, say) into an error.
pub fn prepare<T>(prepare: impl FnOnce() -> Result<T, ToolError>) -> Result<T, ToolError> {
    std::panic::catch_unwind(AssertUnwindSafe(prepare))
        .unwrap_or_else(|payload| Err(Panicked::from_payload(payload.as_ref()).into()))
}
