//! Where a run's trace goes: the [`TraceSink`] trait, and [`MemoryTrace`].

use std::io;
use std::sync::{Arc, Mutex, PoisonError};

use tool_core::BoxFuture;

use super::TraceEvent;

/// Receives a run's trace, one event per step, in order.
///
/// [`record`](TraceSink::record) is called inline, on the run's task, as each step happens:
/// it must not block (no disk, no network). A sink that writes somewhere hands the event to
/// another thread or task, as [`JsonlTrace`](super::JsonlTrace) does, and reports what it could
/// not write from [`flush`](TraceSink::flush). A sink that panics is logged and the run goes
/// on.
pub trait TraceSink: Send + Sync + 'static {
    /// Takes one event.
    fn record(&self, event: &TraceEvent);

    /// Waits until every event recorded so far is written, and reports an event that could
    /// not be. The default answers at once: a sink that keeps events in memory has nothing to
    /// wait for.
    fn flush(&self) -> BoxFuture<'_, io::Result<()>> {
        Box::pin(std::future::ready(Ok(())))
    }
}

impl<S: TraceSink + ?Sized> TraceSink for Arc<S> {
    fn record(&self, event: &TraceEvent) {
        (**self).record(event);
    }

    fn flush(&self) -> BoxFuture<'_, io::Result<()>> {
        (**self).flush()
    }
}

/// Keeps a trace's events in memory, for tests and for reading a run back in-process. Share
/// it with the agent through an [`Arc`].
///
/// ```
/// use std::sync::Arc;
/// use tool_runtime::trace::{MemoryTrace, TraceEvent, TraceSink};
///
/// let trace = Arc::new(MemoryTrace::default());
/// let sink: Arc<MemoryTrace> = Arc::clone(&trace);
/// sink.record(&serde_json::from_str::<TraceEvent>(
///     r#"{"event":"budget_stopped","run":"r","session":"s","at_ms":0,"reason":"max_rounds"}"#,
/// )?);
/// assert_eq!(trace.events().len(), 1);
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Default)]
pub struct MemoryTrace {
    events: Mutex<Vec<TraceEvent>>,
}

impl MemoryTrace {
    /// The events recorded so far, in order.
    pub fn events(&self) -> Vec<TraceEvent> {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Forgets the events recorded so far.
    pub fn clear(&self) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

impl TraceSink for MemoryTrace {
    fn record(&self, event: &TraceEvent) {
        self.events
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(event.clone());
    }
}
