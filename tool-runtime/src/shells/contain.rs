//! The contain shell: a panic in a tool becomes a `panicked` error for that call only; the
//! other calls of the batch and the runtime go on. A tool is contained while it is prepared,
//! while it is polled and while it is dropped (a timeout or a cancellation drops it).

use std::any::Any;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::task::{Context, Poll};

use tool_core::{ErrorKind, ToolError, ToolFuture, ToolOutput};

/// The `panicked` error for a panic payload. The payload is dropped here, contained too: a
/// payload whose own `Drop` panics is leaked rather than allowed to unwind further.
pub(crate) fn panicked(payload: Box<dyn Any + Send>) -> ToolError {
    let message = payload
        .downcast_ref::<&str>()
        .map(|message| (*message).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".to_owned());
    drop_contained(payload);
    ToolError::new(ErrorKind::Panicked, format!("the tool panicked: {message}"))
        .with_hint("this is a bug in the tool; do not retry the same call")
}

/// Drops `value`, catching a panic in its `Drop`. The payload of such a panic is leaked: its
/// own `Drop` could panic again.
fn drop_contained<T>(value: T) {
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(value))) {
        std::mem::forget(payload);
    }
}

/// A tool's future, polled and dropped with panics caught.
///
/// The tool's state is dropped after a panic and never observed again, so asserting unwind
/// safety is sound here.
pub(crate) struct Contained {
    future: Option<ToolFuture>,
}

impl Contained {
    pub(crate) fn new(future: ToolFuture) -> Self {
        Self {
            future: Some(future),
        }
    }
}

impl Future for Contained {
    type Output = Result<ToolOutput, ToolError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(future) = self.future.as_mut() else {
            return Poll::Ready(Err(ToolError::new(
                ErrorKind::Internal,
                "the tool was polled after it finished",
            )));
        };
        let poll = catch_unwind(AssertUnwindSafe(|| future.as_mut().poll(cx)));
        match poll {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(result)) => {
                self.drop_future();
                Poll::Ready(result)
            }
            Err(payload) => {
                self.drop_future();
                Poll::Ready(Err(panicked(payload)))
            }
        }
    }
}

impl Contained {
    /// Drops the tool's future now (a timeout or a cancellation stops it), contained.
    pub(crate) fn stop(&mut self) {
        self.drop_future();
    }

    fn drop_future(&mut self) {
        if let Some(future) = self.future.take() {
            drop_contained(future);
        }
    }
}

impl Drop for Contained {
    fn drop(&mut self) {
        self.drop_future();
    }
}

/// Calls `prepare`, turning a panic (in a parameter's `Deserialize`, say) into an error.
pub(crate) fn prepare<T>(prepare: impl FnOnce() -> Result<T, ToolError>) -> Result<T, ToolError> {
    catch_unwind(AssertUnwindSafe(prepare)).unwrap_or_else(|payload| Err(panicked(payload)))
}
