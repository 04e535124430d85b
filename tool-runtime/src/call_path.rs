//! Stages 4 to 8 of the stack (`stack.rs`, where the order is written) as one future, for
//! every planned call, top-level or nested, first attempt or retry:
//!
//! ```text
//! span -> cancellation check -> audit line durable -> idempotency (claim, replay)
//!      -> shells (retry -> timeout -> contain -> tool) -> record -> shape (large outputs)
//! ```
//!
//! A hand-written state machine rather than an `async` block: a batch polls each call once
//! where it stands, and only a call still running after that poll moves into the set of
//! waiting calls.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFuture};
use tool_core::{BoxFuture, ErrorKind, PageInfo, ToolError, ToolFuture, ToolOutput};

use crate::gates::{self, AuditTicket};
use crate::idempotency::{
    self, Claim, ConcurrentDuplicates, Layer, Lookup, SharedFailure, StoreError, StoredResult,
};
use crate::output::artifacts::{ArtifactError, ArtifactStore};
use crate::output::redact::Redactor;
use crate::output::{self, OwnedPolicy, Policy, Shaped};
use crate::plan::Planned;
use crate::shells::{CallShells, Retry};

/// How a call ended, before the output policy (or after it, for a large output shaped on the
/// blocking pool).
pub(crate) struct Ended {
    pub(crate) result: Result<Output, ToolError>,
    pub(crate) attempts: u32,
    pub(crate) elapsed: Duration,
    /// Answered from the idempotency store: the first execution's result.
    pub(crate) replayed: bool,
    /// Secrets redacted from the output before the output policy saw it (a write's output is
    /// redacted before the idempotency store keeps it).
    pub(crate) redactions: u32,
}

impl Ended {
    fn new(result: Result<Output, ToolError>, attempts: u32, elapsed: Duration) -> Self {
        Self {
            result,
            attempts,
            elapsed,
            replayed: false,
            redactions: 0,
        }
    }
}

/// What a call that succeeded returned.
pub(crate) enum Output {
    /// As the tool returned it.
    Raw(ToolOutput),
    /// Shaped already by the output policy, with the page metadata it had.
    Shaped(Box<(Shaped, Option<Box<PageInfo>>)>),
}

/// Where a call's large output is shaped: off the turn's task.
pub(crate) struct Offload<'a> {
    pub(crate) redactor: &'a Arc<Redactor>,
    pub(crate) artifacts: &'a Arc<dyn ArtifactStore>,
    pub(crate) max_chars: usize,
    pub(crate) read_limit: usize,
    pub(crate) verbatim: bool,
}

/// One planned call on its way through the path: a future that polls the shells in the call's
/// span and ends with the call's result, handing the planned call back.
///
/// It is `Unpin`: a batch polls each call once where it stands, and only a call still running
/// after that poll moves into the set of waiting calls.
pub(crate) struct RunCall<'a> {
    span: tracing::Span,
    path: Path<'a>,
}

/// Where a call stands on its path.
struct Path<'a> {
    planned: Option<Planned<'a>>,
    cancel: Option<&'a CancellationToken>,
    /// For a call whose output the model reads: where a large one is shaped.
    offload: Option<Offload<'a>>,
    /// The idempotency layer, and the claim this call holds once it has one.
    layer: &'a Layer,
    /// Redacts a write's output before the store keeps it.
    redactor: &'a Redactor,
    /// How many secrets that took out.
    redactions: u32,
    claim: Option<Claim>,
    state: State<'a>,
}

enum State<'a> {
    NotStarted {
        first: ToolFuture,
        shells: CallShells<'a>,
    },
    /// Waiting until the call's decision line is durable: the tool never starts before.
    Auditing {
        awaited: Vec<AuditTicket>,
        first: ToolFuture,
        shells: CallShells<'a>,
        started: Instant,
    },
    /// Asking the idempotency store whether the call already ran (or runs now).
    Claiming {
        lookup: BoxFuture<'a, Result<Lookup, StoreError>>,
        first: Option<ToolFuture>,
        shells: CallShells<'a>,
        started: Instant,
        /// Whether the call already waited for another execution of its key.
        waited: bool,
        /// While it waits in a cancellable turn: the turn's cancellation.
        cancelled: Option<Pin<Box<WaitForCancellationFuture<'a>>>>,
    },
    /// Keeping the result of a claimed execution, or releasing its claim after a failure.
    Recording {
        record: BoxFuture<'a, Result<(), StoreError>>,
        then: Option<AfterRecord>,
    },
    Running {
        started: Instant,
        retry: Retry<'a>,
        // Boxed: only a call that waits in a cancellable turn needs it.
        waiting: Option<Pin<Box<WaitForCancellationFuture<'a>>>>,
    },
    /// An output being shaped on the blocking pool: a large one, or one whose full text goes
    /// to a store that waits on I/O.
    Shaping {
        shaping: tokio::task::JoinHandle<Shaped>,
        page: Option<Box<PageInfo>>,
        attempts: u32,
        elapsed: Duration,
        replayed: bool,
    },
    Done,
}

/// What a call does once the store has recorded its end.
enum AfterRecord {
    /// Goes on to the output policy.
    Output {
        output: ToolOutput,
        attempts: u32,
        elapsed: Duration,
    },
    /// Ends as it ended.
    Ended(Ended),
}

/// A call at the end of its path, before the output policy.
pub(crate) struct Finished<'a> {
    pub(crate) planned: Planned<'a>,
    pub(crate) ended: Ended,
    pub(crate) span: tracing::Span,
}

impl<'a> RunCall<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        span: tracing::Span,
        planned: Planned<'a>,
        first: ToolFuture,
        shells: CallShells<'a>,
        cancel: Option<&'a CancellationToken>,
        offload: Option<Offload<'a>>,
        layer: &'a Layer,
        redactor: &'a Redactor,
    ) -> Self {
        RunCall {
            span,
            path: Path {
                planned: Some(planned),
                cancel,
                offload,
                layer,
                redactor,
                redactions: 0,
                claim: None,
                state: State::NotStarted { first, shells },
            },
        }
    }
}

impl<'a> Future for RunCall<'a> {
    type Output = Finished<'a>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let ended = {
            let _entered = this.span.enter();
            match this.path.poll(cx) {
                Poll::Ready(mut ended) => {
                    ended.redactions = this.path.redactions;
                    ended
                }
                Poll::Pending => return Poll::Pending,
            }
        };
        this.path.state = State::Done;
        match this.path.planned.take() {
            Some(planned) => Poll::Ready(Finished {
                planned,
                ended,
                span: std::mem::replace(&mut this.span, tracing::Span::none()),
            }),
            // A future polled after it finished; nothing to hand back.
            None => Poll::Pending,
        }
    }
}

impl<'a> Path<'a> {
    fn poll(&mut self, cx: &mut Context<'_>) -> Poll<Ended> {
        let Some(planned) = &self.planned else {
            return Poll::Pending;
        };
        if let State::NotStarted { .. } = self.state {
            let State::NotStarted { first, shells } =
                std::mem::replace(&mut self.state, State::Done)
            else {
                return Poll::Pending;
            };
            let started = Instant::now();
            // Cancellation is checked before the call starts.
            if self.cancel.is_some_and(CancellationToken::is_cancelled) {
                return Poll::Ready(Ended::new(Err(cancelled_error()), 0, Duration::ZERO));
            }
            self.state = State::Auditing {
                awaited: planned.audit.take(),
                first,
                shells,
                started,
            };
        }
        if let State::Auditing {
            awaited, started, ..
        } = &mut self.state
        {
            // The gates ran when the call was planned; the line that records their decision
            // was submitted then, and is durable before the tool starts.
            while let Some(ticket) = awaited.last_mut() {
                match Pin::new(ticket).poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(())) => {
                        awaited.pop();
                    }
                    Poll::Ready(Err(error)) => {
                        tracing::error!(%error, "the audit line could not be written; the call is refused");
                        let ended =
                            Ended::new(Err(gates::audit_unavailable()), 0, started.elapsed());
                        return Poll::Ready(ended);
                    }
                }
            }
            let State::Auditing {
                first,
                shells,
                started,
                ..
            } = std::mem::replace(&mut self.state, State::Done)
            else {
                return Poll::Pending;
            };
            // The turn may have been cancelled while the line was written.
            if self.cancel.is_some_and(CancellationToken::is_cancelled) {
                return Poll::Ready(Ended::new(Err(cancelled_error()), 0, Duration::ZERO));
            }
            // Idempotency: a write asks the store first; everything else starts at once.
            self.state = match planned.idempotency.as_deref() {
                Some(key) => State::Claiming {
                    lookup: self.layer.store.claim(key.key.clone(), key.claim_for),
                    first: Some(first),
                    shells,
                    started,
                    waited: false,
                    cancelled: None,
                },
                None => State::Running {
                    started,
                    retry: Retry::new(&shells, first, started),
                    waiting: None,
                },
            };
        }
        if let State::Claiming { .. } = self.state {
            return self.poll_claim(cx);
        }
        if let State::Recording { record, then } = &mut self.state {
            if let Err(error) = std::task::ready!(record.as_mut().poll(cx)) {
                tracing::error!(%error, "the idempotency store did not record how a write ended");
            }
            return match then.take() {
                Some(AfterRecord::Output {
                    output,
                    attempts,
                    elapsed,
                }) => self.output_ready(output, attempts, elapsed, false, cx),
                Some(AfterRecord::Ended(ended)) => Poll::Ready(ended),
                None => Poll::Pending,
            };
        }
        if let State::Shaping {
            shaping,
            page,
            attempts,
            elapsed,
            replayed,
        } = &mut self.state
        {
            let shaped = match Pin::new(shaping).poll(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Ok(shaped)) => Ok(Output::Shaped(Box::new((shaped, page.take())))),
                Poll::Ready(Err(error)) => Err(ToolError::new(
                    ErrorKind::Internal,
                    format!("the output could not be shaped: {error}"),
                )),
            };
            let mut ended = Ended::new(shaped, *attempts, *elapsed);
            ended.replayed = *replayed;
            return Poll::Ready(ended);
        }
        let State::Running {
            started,
            retry,
            waiting,
        } = &mut self.state
        else {
            return Poll::Pending;
        };
        // The call first: a call that is ready when the token fires still counts, and a call
        // that finishes at once never registers with the token.
        if let Poll::Ready(result) = retry.poll_attempts(cx, || planned.prepare_again()) {
            let (attempts, elapsed) = (retry.attempts(), started.elapsed());
            return match result {
                Ok(output) => {
                    if let (Some(claim), Some(key)) =
                        (self.claim.take(), planned.idempotency.as_deref())
                    {
                        // The store keeps what the model may read: no secret rests there in
                        // clear, and a replay is what this call's reader gets.
                        let (output, redactions) = output::redacted(output, self.redactor);
                        self.redactions = redactions;
                        let result = StoredResult {
                            arguments_digest: key.key.arguments_digest.clone(),
                            output: output.json().to_owned(),
                            page: output
                                .page()
                                .and_then(|page| serde_json::to_string(page).ok()),
                            content_blocks: output.content_blocks_json().is_some(),
                        };
                        self.state = State::Recording {
                            record: self.layer.store.complete(key.key.clone(), claim, result),
                            then: Some(AfterRecord::Output {
                                output,
                                attempts,
                                elapsed,
                            }),
                        };
                        return self.poll(cx);
                    }
                    self.output_ready(output, attempts, elapsed, false, cx)
                }
                Err(error) => self.failed(Ended::new(Err(error), attempts, elapsed), cx),
            };
        }
        let Some(cancel) = self.cancel else {
            return Poll::Pending;
        };
        let waiting = waiting.get_or_insert_with(|| Box::pin(cancel.cancelled()));
        if waiting.as_mut().poll(cx).is_ready() {
            retry.stop();
            let ended = Ended::new(Err(cancelled_error()), retry.attempts(), started.elapsed());
            return self.failed(ended, cx);
        }
        Poll::Pending
    }

    /// The idempotency store's answer: run the call, replay the first execution's result,
    /// wait for the execution running now, or refuse.
    fn poll_claim(&mut self, cx: &mut Context<'_>) -> Poll<Ended> {
        let cancel = self.cancel;
        let (
            Some(planned),
            State::Claiming {
                lookup,
                first,
                shells,
                started,
                waited,
                cancelled,
            },
        ) = (&self.planned, &mut self.state)
        else {
            return Poll::Pending;
        };
        let Some(key) = planned.idempotency.as_deref() else {
            return Poll::Pending;
        };
        let layer = self.layer;
        let elapsed = started.elapsed();
        let answer = match lookup.as_mut().poll(cx) {
            Poll::Ready(answer) => answer,
            Poll::Pending => {
                // A duplicate waiting for another execution stops when its turn is cancelled,
                // if the store's wait can be dropped safely. A claim in flight is let finish:
                // dropped, it could leave a claim that nothing runs.
                if *waited
                    && layer.store.wait_is_cancel_safe()
                    && let Some(cancel) = cancel
                    && cancelled
                        .get_or_insert_with(|| Box::pin(cancel.cancelled()))
                        .as_mut()
                        .poll(cx)
                        .is_ready()
                {
                    return Poll::Ready(Ended::new(Err(cancelled_error()), 0, elapsed));
                }
                return Poll::Pending;
            }
        };
        let run = match answer {
            Ok(Lookup::Claimed(claim)) => Some(Some(claim)),
            Ok(Lookup::Done(result)) => {
                if key.explicit && result.arguments_digest != key.key.arguments_digest {
                    return Poll::Ready(Ended::new(Err(idempotency::key_reused()), 0, elapsed));
                }
                let mut output = match result.content_blocks {
                    true => serde_json::from_str::<tool_core::Contents>(&result.output)
                        .ok()
                        .and_then(|blocks| ToolOutput::from_serialize(&blocks).ok())
                        .unwrap_or_else(|| ToolOutput::from_json(result.output)),
                    false => ToolOutput::from_json(result.output),
                };
                if let Some(page) = result
                    .page
                    .and_then(|page| serde_json::from_str::<PageInfo>(&page).ok())
                {
                    output = output.with_page(page);
                }
                tracing::info!("answered from the idempotency store");
                // Shaped as the first execution's output was: off the turn's task when it must.
                return self.output_ready(output, 0, elapsed, true, cx);
            }
            Ok(Lookup::Pending) => {
                if *waited || layer.duplicates == ConcurrentDuplicates::Refuse {
                    let error = idempotency::in_progress(*waited);
                    return Poll::Ready(Ended::new(Err(error), 0, elapsed));
                }
                *waited = true;
                *lookup = layer.store.wait(key.key.clone(), key.claim_for, layer.wait);
                return self.poll_claim(cx);
            }
            Ok(Lookup::Abandoned { expires_in }) => {
                let error = idempotency::outcome_unknown(expires_in);
                return Poll::Ready(Ended::new(Err(error), 0, elapsed));
            }
            Ok(Lookup::Failed(failure)) => {
                let error = ToolError::new(ErrorKind::from_name(&failure.kind), failure.message);
                return Poll::Ready(Ended::new(Err(error), 0, elapsed));
            }
            Err(error) if layer.fail_open => {
                tracing::warn!(%error, "the idempotency store is unavailable; the write runs without it (fail-open)");
                Some(None)
            }
            Err(error) => {
                tracing::error!(%error, "the idempotency store is unavailable; the write is refused");
                return Poll::Ready(Ended::new(
                    Err(idempotency::unavailable(&error)),
                    0,
                    elapsed,
                ));
            }
        };
        let (Some(claim), Some(first)) = (run, first.take()) else {
            return Poll::Pending;
        };
        self.claim = claim;
        let started = *started;
        self.state = State::Running {
            started,
            retry: Retry::new(shells, first, started),
            waiting: None,
        };
        self.poll(cx)
    }

    /// A call that failed. Its claim is released when the tool itself answered (nothing is
    /// kept but success); a call stopped mid-flight (timed out, cancelled, panicked) may have
    /// done its work, so its claim stays until the window ends and a repeat is never run.
    fn failed(&mut self, ended: Ended, cx: &mut Context<'_>) -> Poll<Ended> {
        let (Some(planned), Err(error)) = (&self.planned, &ended.result) else {
            return Poll::Ready(ended);
        };
        let mid_flight = matches!(
            error.kind(),
            ErrorKind::Timeout | ErrorKind::Cancelled | ErrorKind::Panicked
        ) && !error.is_safe_to_repeat();
        match (self.claim.take(), planned.idempotency.as_deref()) {
            (Some(claim), Some(key)) if mid_flight => {
                self.state = State::Recording {
                    record: self.layer.store.abandon(key.key.clone(), claim),
                    then: Some(AfterRecord::Ended(ended)),
                };
                self.poll(cx)
            }
            (Some(claim), Some(key)) => {
                let failure = SharedFailure {
                    kind: error.kind().as_str().to_owned(),
                    message: error.message().to_owned(),
                };
                self.state = State::Recording {
                    record: self.layer.store.release(key.key.clone(), claim, failure),
                    then: Some(AfterRecord::Ended(ended)),
                };
                self.poll(cx)
            }
            _ => Poll::Ready(ended),
        }
    }

    /// A call that succeeded. Its output is shaped on the blocking pool when it is large, so
    /// the turn's other calls go on, and when its full text would go to an artifact store that
    /// waits on I/O ([`ArtifactStore::blocks`]), so a slow disk does not hold them up either.
    fn output_ready(
        &mut self,
        output: ToolOutput,
        attempts: u32,
        elapsed: Duration,
        replayed: bool,
        cx: &mut Context<'_>,
    ) -> Poll<Ended> {
        let ended = |result| {
            let mut ended = Ended::new(result, attempts, elapsed);
            ended.replayed = replayed;
            Poll::Ready(ended)
        };
        let (Some(planned), Some(offload)) = (&self.planned, &self.offload) else {
            return ended(Ok(Output::Raw(output)));
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return ended(Ok(Output::Raw(output)));
        }
        let policy = Policy {
            max_chars: offload.max_chars,
            redactor: offload.redactor,
            artifacts: offload.artifacts.as_ref(),
            shared_artifacts: None,
            session: planned.context.get().session_id(),
            read_limit: offload.read_limit,
            verbatim: offload.verbatim,
        };
        let size = output_size(&output);
        let blocks = offload.artifacts.blocks();
        if size < output::LARGE_OUTPUT && !(blocks && size > offload.max_chars) {
            if !blocks {
                return ended(Ok(Output::Raw(output)));
            }
            // It fits, unless redaction makes it longer: shaped here with a store that only
            // notes whether it was needed, and again on the blocking pool when it was.
            let probe = Probe::default();
            let page = output.page().cloned().map(Box::new);
            let shaped = output::shape(
                output.clone(),
                &Policy {
                    artifacts: &probe,
                    ..policy
                },
            );
            if !probe.asked.load(Ordering::Relaxed) {
                return ended(Ok(Output::Shaped(Box::new((shaped, page)))));
            }
        }
        let policy = OwnedPolicy::new(&policy, offload.redactor, offload.artifacts);
        let page = output.page().cloned().map(Box::new);
        self.state = State::Shaping {
            shaping: tokio::task::spawn_blocking(move || policy.shape(output)),
            page,
            attempts,
            elapsed,
            replayed,
        };
        self.poll(cx)
    }
}

/// An artifact store that keeps nothing and notes whether it was asked to: shaping an output
/// with it tells, without waiting on a real store, whether the output is cut.
#[derive(Debug, Default)]
struct Probe {
    asked: AtomicBool,
}

impl ArtifactStore for Probe {
    fn put(&self, _session: &str, _content: &str) -> Result<String, ArtifactError> {
        self.asked.store(true, Ordering::Relaxed);
        Err(ArtifactError::new("kept on the blocking pool"))
    }

    fn get(&self, _session: &str, _id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
        Ok(None)
    }

    fn blocks(&self) -> bool {
        false
    }
}

/// The span of one call that runs: the runtime's fields, and the OpenTelemetry GenAI
/// semantic conventions' for a tool's execution (`gen_ai.*`, and `error.type` when it fails),
/// so a GenAI-aware backend reads the call as one.
pub(crate) fn call_span(planned: &Planned<'_>, depth: u32, batch: Option<usize>) -> tracing::Span {
    tracing::info_span!(
        "tool_call",
        tool = %planned.name,
        call_id = %planned.call_id,
        depth,
        batch,
        gen_ai.operation.name = "execute_tool",
        gen_ai.tool.name = %planned.name,
        gen_ai.tool.call.id = %planned.call_id,
        gen_ai.tool.type = "function",
        outcome = tracing::field::Empty,
        "error.type" = tracing::field::Empty,
        elapsed_ms = tracing::field::Empty,
    )
}

/// Records a call's outcome and elapsed time on its span (and the error's kind as
/// `error.type`, when it failed).
pub(crate) fn record_end(span: &tracing::Span, kind: Option<&str>, elapsed: Duration) {
    span.record("outcome", kind.unwrap_or("success"));
    if let Some(kind) = kind {
        span.record("error.type", kind);
    }
    span.record(
        "elapsed_ms",
        u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
    );
    tracing::info!(parent: span, "call finished");
}

/// The bytes of an output as it is held (a string result's text, else its JSON).
fn output_size(output: &ToolOutput) -> usize {
    if output.is_text() {
        output.text().len()
    } else {
        output.json().len()
    }
}

pub(crate) fn cancelled_error() -> ToolError {
    ToolError::new(
        ErrorKind::Cancelled,
        "the turn was cancelled before this call finished",
    )
}
