//! The path every planned call takes, top-level or nested, first attempt or retry:
//!
//! ```text
//! span -> cancellation check -> [gates] -> shells (retry -> timeout -> contain -> tool)
//!      -> output policy -> observation
//! ```
//!
//! The gates that later decide whether a call may run at all (scope, policy and approval,
//! idempotency) stand where `run_call` marks them: after the call is planned and before the
//! tool's first poll, each able to answer the call without running it.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tool_core::{ErrorKind, ToolError, ToolFuture, ToolOutput};

use crate::observation::{Observation, Outcome};
use crate::output::{self, redact::Redactor};
use crate::plan::Planned;
use crate::runtime::Shared;
use crate::shells::{self, CallShells};

/// How a call ended, before the output policy.
pub(crate) struct Ended {
    pub(crate) result: Result<ToolOutput, ToolError>,
    pub(crate) attempts: u32,
    pub(crate) elapsed: Duration,
}

impl<D: Any + Send + Sync> Shared<D> {
    /// Runs one planned call from its first poll to its end: every call takes this path.
    ///
    /// A call whose turn was cancelled before it started does not start.
    pub(crate) async fn run_call(
        &self,
        planned: &Planned<'_>,
        first: ToolFuture,
        cancel: Option<&CancellationToken>,
    ) -> Ended {
        let started = Instant::now();
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            return Ended {
                result: Err(cancelled_error()),
                attempts: 0,
                elapsed: Duration::ZERO,
            };
        }
        // The gates (scope, policy and approval, idempotency) go here.
        let shells = CallShells {
            retry: &self.retry,
            repeatable: planned.repeatable(),
            timeout: planned.timeout(&self.limits),
        };
        let attempts = AtomicU32::new(1);
        let run = shells::run(&shells, first, started, || {
            attempts.fetch_add(1, Ordering::Relaxed);
            planned.prepare_again()
        });
        let result = match cancel {
            // The call first: a call that finishes at once never registers with the token.
            Some(cancel) => tokio::select! {
                biased;
                (result, _) = run => result,
                () = cancel.cancelled() => Err(cancelled_error()),
            },
            None => run.await.0,
        };
        Ended {
            result,
            attempts: attempts.load(Ordering::Relaxed),
            elapsed: started.elapsed(),
        }
    }

    /// The observation of a call that ran: the output policy applied to what it returned.
    pub(crate) fn observe(
        &self,
        planned: &Planned<'_>,
        ended: Ended,
        batch: Option<usize>,
    ) -> Observation {
        let (outcome, truncated, redactions, artifact, page) = match ended.result {
            Ok(output) => {
                let page = output.page().cloned().map(Box::new);
                let shaped = output::shape(
                    output,
                    planned.max_chars(&self.limits),
                    &self.redactor,
                    self.artifacts.as_ref(),
                );
                let outcome = Outcome::Success {
                    content: shaped.content,
                };
                (
                    outcome,
                    shaped.truncated,
                    shaped.redactions,
                    shaped.artifact,
                    page,
                )
            }
            Err(error) => {
                let (error, redactions) = redact_error(error, &self.redactor);
                (Outcome::Error { error }, false, redactions, None, None)
            }
        };
        Observation {
            call_id: Arc::clone(planned.call_id),
            tool: Arc::clone(planned.name),
            tool_version: planned.version.cloned(),
            outcome,
            truncated,
            redactions,
            artifact,
            page,
            elapsed: ended.elapsed,
            attempts: ended.attempts,
            batch: batch.map(|batch| u32::try_from(batch).unwrap_or(u32::MAX)),
        }
    }

    /// The observation of a call answered before it ran (unknown tool, invalid arguments).
    pub(crate) fn rejected(&self, call_id: &Arc<str>, tool: &str, error: ToolError) -> Observation {
        let (error, redactions) = redact_error(error, &self.redactor);
        Observation {
            call_id: Arc::clone(call_id),
            tool: Arc::from(tool),
            tool_version: self
                .registry
                .lookup(tool)
                .and_then(|found| found.version.cloned()),
            outcome: Outcome::Error { error },
            truncated: false,
            redactions,
            artifact: None,
            page: None,
            elapsed: Duration::ZERO,
            attempts: 0,
            batch: None,
        }
    }
}

/// The span of one call that runs.
pub(crate) fn call_span(planned: &Planned<'_>, depth: u32, batch: Option<usize>) -> tracing::Span {
    tracing::info_span!(
        "tool_call",
        tool = %planned.name,
        call_id = %planned.call_id,
        depth,
        batch,
        outcome = tracing::field::Empty,
        elapsed_ms = tracing::field::Empty,
    )
}

/// Records a call's outcome and elapsed time on its span.
pub(crate) fn record_end(span: &tracing::Span, kind: Option<&str>, elapsed: Duration) {
    span.record("outcome", kind.unwrap_or("success"));
    span.record(
        "elapsed_ms",
        u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
    );
    tracing::info!(parent: span, "call finished");
}

pub(crate) fn cancelled_error() -> ToolError {
    ToolError::new(
        ErrorKind::Cancelled,
        "the turn was cancelled before this call finished",
    )
}

/// Secrets can reach error messages too (a connection string in a driver's error).
pub(crate) fn redact_error(error: ToolError, redactor: &Redactor) -> (ToolError, u32) {
    let (message, count) = redactor.redact(error.message());
    if count == 0 {
        return (error, 0);
    }
    let message = message.into_owned();
    (
        error.with_message(message),
        u32::try_from(count).unwrap_or(u32::MAX),
    )
}
