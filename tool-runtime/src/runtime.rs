//! The [`Runtime`]: plans a turn of tool calls, schedules it and runs each call through the
//! shells and the output policy, answering every call exactly once, in call order.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tool_core::{ErrorKind, Registry, ToolError, ToolFuture, ToolOutput};
use tracing::Instrument;

use crate::call::{Session, ToolCall};
use crate::limits::Limits;
use crate::nested::prepare_again;
use crate::observation::{Observation, Outcome, TurnReport};
use crate::output::{self, artifacts::ArtifactStore, redact::Redactor};
use crate::plan::Planned;
use crate::schedule::{self, Slot};
use crate::shells::{self, FirstAttempt, RetryPolicy, contain};

/// Runs the tool calls a model emits, for sessions whose deps are `D`.
///
/// Cheap to clone: clones share the tools, the limits and the artifact store.
pub struct Runtime<D> {
    pub(crate) shared: Arc<Shared<D>>,
}

impl<D> Clone for Runtime<D> {
    fn clone(&self) -> Self {
        Self {
            shared: Arc::clone(&self.shared),
        }
    }
}

impl<D> std::fmt::Debug for Runtime<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("tools", &self.shared.registry)
            .field("limits", &self.shared.limits)
            .finish_non_exhaustive()
    }
}

/// What every call of a runtime shares.
pub(crate) struct Shared<D> {
    pub(crate) deps: Arc<D>,
    pub(crate) registry: Registry,
    pub(crate) limits: Limits,
    pub(crate) retry: RetryPolicy,
    pub(crate) redactor: Redactor,
    pub(crate) artifacts: Arc<dyn ArtifactStore>,
}

/// Where and when a call starts.
struct Start<'a> {
    batch: usize,
    started: Instant,
    cancel: Option<&'a CancellationToken>,
}

/// A started call: answered on its first poll, or still running.
enum Started<'a> {
    /// Answered: the observation is in its slot.
    Done(usize, tracing::Span),
    Waiting(RunningCall<'a>),
}

/// The calls of a batch still running after their first poll, driven together. Most turns
/// have none, so the set is only made for the first.
#[derive(Default)]
struct Waiting<'a> {
    running: Option<FuturesUnordered<RunningCall<'a>>>,
}

type RunningCall<'a> = Pin<Box<dyn Future<Output = (usize, Observation)> + Send + 'a>>;

impl<'a> Waiting<'a> {
    fn len(&self) -> usize {
        self.running.as_ref().map_or(0, FuturesUnordered::len)
    }

    fn push(&mut self, call: RunningCall<'a>) {
        self.running
            .get_or_insert_with(FuturesUnordered::new)
            .push(call);
    }

    /// The next call to finish, or `None` when none is running.
    async fn next(&mut self) -> Option<(usize, Observation)> {
        match &mut self.running {
            Some(running) => running.next().await,
            None => None,
        }
    }
}

/// How a call ended, before the output policy.
struct Ended {
    result: Result<ToolOutput, ToolError>,
    attempts: u32,
    elapsed: Duration,
}

impl<D: Any + Send + Sync> Runtime<D> {
    /// The tools, sorted by name.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.shared.limits
    }

    /// The session deps.
    pub fn deps(&self) -> &Arc<D> {
        &self.shared.deps
    }

    /// Runs one turn: every call gets exactly one observation, in call order.
    ///
    /// `calls` may be owned or borrowed (`Vec<ToolCall>`, `&[ToolCall]`): a caller that
    /// renders the provider's result messages keeps its calls.
    pub async fn execute(&self, session: &Session, calls: impl AsRef<[ToolCall]>) -> TurnReport {
        self.execute_turn(session, calls.as_ref(), None).await
    }

    /// Runs one turn until `cancel` fires; calls that have not finished by then are answered
    /// with `cancelled`.
    pub async fn execute_with_cancel(
        &self,
        session: &Session,
        calls: impl AsRef<[ToolCall]>,
        cancel: CancellationToken,
    ) -> TurnReport {
        self.execute_turn(session, calls.as_ref(), Some(&cancel))
            .await
    }

    async fn execute_turn(
        &self,
        session: &Session,
        calls: &[ToolCall],
        cancel: Option<&CancellationToken>,
    ) -> TurnReport {
        let span = tracing::info_span!("tool_turn", session = session.id(), calls = calls.len());
        self.run_turn(session, calls, cancel).instrument(span).await
    }

    async fn run_turn(
        &self,
        session: &Session,
        calls: &[ToolCall],
        cancel: Option<&CancellationToken>,
    ) -> TurnReport {
        let started = Instant::now();
        let session = self.shared.session_context(session);
        // The calls' contexts, in one allocation for the turn, and after them the one that
        // tools taking none share.
        let contexts = session.turn(
            calls
                .iter()
                .map(|call| (&*call.id, call.name.as_str()))
                .chain([("", "")]),
        );
        let anonymous = contexts
            .call(calls.len())
            .unwrap_or_else(|| session.call("", ""));
        let mut observations: Vec<Option<Observation>> = Vec::with_capacity(calls.len());
        let mut planned: Vec<Option<(Planned<'_>, ToolFuture)>> = Vec::with_capacity(calls.len());
        for (index, call) in calls.iter().enumerate() {
            match self.shared.plan(&contexts, &anonymous, index, call) {
                Ok(plan) => {
                    planned.push(Some(plan));
                    observations.push(None);
                }
                Err(error) => {
                    tracing::info!(tool = %call.name, call_id = %call.id, kind = %error.kind(), "rejected while planning");
                    observations.push(Some(self.rejected(call, error)));
                    planned.push(None);
                }
            }
        }

        let slots: Vec<Slot<'_>> = planned
            .iter()
            .flatten()
            .map(|(plan, _)| Slot {
                index: plan.index,
                parallel_safe: plan.tool.spec().execution().parallel_safe(),
                resources: plan.tool.spec().resource_list(),
            })
            .collect();
        let batches = schedule::schedule(&slots);

        let concurrency = self.shared.limits.max_concurrency.max(1);
        // Calls answered at their first poll, awaiting their elapsed time (one clock reading
        // serves all those a chunk of starts answered).
        let widest = batches.iter().map(|batch| batch.calls.len()).max();
        let mut answered: Vec<(usize, tracing::Span)> =
            Vec::with_capacity(widest.unwrap_or(0).min(concurrency));
        // Calls still running after their first poll; made when the first one is.
        let mut waiting = Waiting::default();
        for batch in &batches {
            let batch_index = batch.index;
            let mut members = batch
                .calls
                .iter()
                .filter_map(|&index| planned[index].take())
                .peekable();
            if cancel.is_some_and(CancellationToken::is_cancelled) {
                for (plan, _) in members {
                    let ended = Ended {
                        result: Err(cancelled_error()),
                        attempts: 0,
                        elapsed: Duration::ZERO,
                    };
                    observations[plan.index] = Some(self.observe(&plan, ended, batch_index));
                }
                continue;
            }
            // Calls start in order, each with one poll; only those still running are driven
            // together afterwards, at most `concurrency` at a time.
            while members.peek().is_some() {
                if waiting.len() >= concurrency
                    && let Some((index, observation)) = waiting.next().await
                {
                    observations[index] = Some(observation);
                }
                let chunk_start = Instant::now();
                // Start calls up to the cap in one go, with this task's context at hand.
                std::future::poll_fn(|cx| {
                    while waiting.len() < concurrency {
                        let Some((plan, first)) = members.next() else {
                            break;
                        };
                        let slot = &mut observations[plan.index];
                        let start = Start {
                            batch: batch_index,
                            started: chunk_start,
                            cancel,
                        };
                        match self.start_call(plan, first, start, slot, cx) {
                            Started::Done(index, span) => answered.push((index, span)),
                            Started::Waiting(rest) => waiting.push(rest),
                        }
                    }
                    Poll::Ready(())
                })
                .await;
                let elapsed = chunk_start.elapsed();
                for (index, span) in answered.drain(..) {
                    if let Some(observation) = &mut observations[index] {
                        observation.elapsed = elapsed;
                        record_end(&span, observation);
                    }
                }
            }
            while let Some((index, observation)) = waiting.next().await {
                observations[index] = Some(observation);
            }
        }

        let observations = observations
            .into_iter()
            .zip(calls)
            .map(|(observation, call)| {
                // Every call was either rejected or scheduled; this only guards the invariant.
                observation.unwrap_or_else(|| {
                    self.rejected(
                        call,
                        ToolError::new(ErrorKind::Internal, "the call was not scheduled"),
                    )
                })
            })
            .collect();
        TurnReport {
            observations,
            batches,
            elapsed: started.elapsed(),
        }
    }

    /// Starts one planned call: polls the tool once, inside the call's span; an answer goes
    /// straight into `slot`.
    ///
    /// Most tools answer on their first poll; such a call is answered here and needs no timer,
    /// no retry state, no cancellation registration and no allocation for them. A call that
    /// waits, or fails in a way worth retrying, continues in the full shells.
    fn start_call<'a>(
        &'a self,
        plan: Planned<'a>,
        mut first: ToolFuture,
        start: Start<'a>,
        slot: &mut Option<Observation>,
        cx: &mut Context<'_>,
    ) -> Started<'a> {
        let Start {
            batch,
            started,
            cancel,
        } = start;
        let span = tracing::info_span!(
            "tool_call",
            tool = %plan.call.name,
            call_id = %plan.call.id,
            batch,
            outcome = tracing::field::Empty,
            elapsed_ms = tracing::field::Empty,
        );
        let first_poll = {
            let _entered = span.enter();
            contain::poll_once(&mut first, cx)
        };
        let first = match first_poll {
            Poll::Ready(result) if !needs_retry(&self.shared.retry, &result) => {
                // The caller sets the elapsed time and records the end on the span.
                let ended = Ended {
                    result,
                    attempts: 1,
                    elapsed: Duration::ZERO,
                };
                *slot = Some(self.observe(&plan, ended, batch));
                return Started::Done(plan.index, span);
            }
            Poll::Ready(result) => FirstAttempt::Finished(result),
            Poll::Pending => FirstAttempt::Running {
                future: first,
                started,
            },
        };
        Started::Waiting(Box::pin(
            async move {
                let ended = self.run_shells(&plan, first, started, cancel).await;
                let observation = self.observe(&plan, ended, batch);
                record_end(&tracing::Span::current(), &observation);
                (plan.index, observation)
            }
            .instrument(span),
        ))
    }

    /// The full shells, for a call that waits or is retried, raced against cancellation.
    async fn run_shells(
        &self,
        plan: &Planned<'_>,
        first: FirstAttempt,
        started: Instant,
        cancel: Option<&CancellationToken>,
    ) -> Ended {
        let mut attempts = 1;
        let timeout = plan.timeout(&self.shared.limits);
        let shells = shells::run(&self.shared.retry, timeout, first, |number| {
            attempts = number;
            prepare_again(plan.tool, &plan.call.arguments, plan.context.get())
        });
        // The call first: a call that finishes at once never touches the cancellation token.
        let result = match cancel {
            Some(cancel) => tokio::select! {
                biased;
                outcome = shells => outcome.result,
                () = cancel.cancelled() => Err(cancelled_error()),
            },
            None => shells.await.result,
        };
        Ended {
            result,
            attempts,
            elapsed: started.elapsed(),
        }
    }

    fn observe(&self, plan: &Planned<'_>, ended: Ended, batch: usize) -> Observation {
        let (outcome, truncated, redactions, artifact, page) = match ended.result {
            Ok(output) => {
                let page = output.page().cloned().map(Box::new);
                let shaped = output::shape(
                    output,
                    plan.max_chars(&self.shared.limits),
                    &self.shared.redactor,
                    self.shared.artifacts.as_ref(),
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
                let (error, redactions) = redact_error(error, &self.shared.redactor);
                let redactions = u32::try_from(redactions).unwrap_or(u32::MAX);
                (Outcome::Error { error }, false, redactions, None, None)
            }
        };
        // One literal, so the observation is built where it is stored.
        Observation {
            call_id: Arc::clone(&plan.call.id),
            tool: Arc::clone(plan.name),
            tool_version: plan.version.cloned(),
            outcome,
            truncated,
            redactions,
            artifact,
            page,
            elapsed: ended.elapsed,
            attempts: ended.attempts,
            batch: Some(u32::try_from(batch).unwrap_or(u32::MAX)),
        }
    }

    /// The observation of a call rejected before it ran.
    fn rejected(&self, call: &ToolCall, error: ToolError) -> Observation {
        let (error, redactions) = redact_error(error, &self.shared.redactor);
        Observation {
            call_id: Arc::clone(&call.id),
            tool: Arc::from(call.name.as_str()),
            tool_version: self
                .shared
                .registry
                .lookup(&call.name)
                .and_then(|found| found.version.cloned()),
            outcome: Outcome::Error { error },
            truncated: false,
            redactions: u32::try_from(redactions).unwrap_or(u32::MAX),
            artifact: None,
            page: None,
            elapsed: Duration::ZERO,
            attempts: 0,
            batch: None,
        }
    }
}

/// Records a call's outcome and elapsed time on its span.
fn record_end(span: &tracing::Span, observation: &Observation) {
    span.record("outcome", observation.error_kind().unwrap_or("success"));
    span.record(
        "elapsed_ms",
        u64::try_from(observation.elapsed.as_millis()).unwrap_or(u64::MAX),
    );
    tracing::info!(parent: span, "call finished");
}

/// Whether a first attempt's result sends the call on to the retry shell.
fn needs_retry(policy: &RetryPolicy, result: &Result<ToolOutput, ToolError>) -> bool {
    match result {
        Ok(_) => false,
        Err(error) => policy.max_attempts > 1 && policy.should_retry(error),
    }
}

fn cancelled_error() -> ToolError {
    ToolError::new(
        ErrorKind::Cancelled,
        "the turn was cancelled before this call finished",
    )
}

/// Secrets can reach error messages too (a connection string in a driver's error).
fn redact_error(error: ToolError, redactor: &Redactor) -> (ToolError, usize) {
    let (message, count) = redactor.redact(error.message());
    if count == 0 {
        return (error, 0);
    }
    let message = message.into_owned();
    (error.with_message(message), count)
}
