//! The [`Runtime`]: plans a turn of tool calls, schedules it and runs each call through the
//! shells and the output policy, answering every call exactly once, in call order.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tool_core::{ErrorKind, Registry, ToolError, ToolFuture, ToolSpec};
use tracing::Instrument;

use crate::build_error::LeftOutTool;
use crate::call::ToolCall;
use crate::call_path::{Finished, RunCall, call_span};
use crate::gates::{self, Admitted};
use crate::limits::Limits;
use crate::observation::{Observation, TurnReport};
use crate::plan::{CallRef, Planned, PlannedContext};
use crate::providers::{LoweredCatalog, LoweredTool, LoweringError, Target};
use crate::schedule::{self, Slot};
use crate::session::Session;
use crate::stack::Shared;

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

impl<D: Any + Send + Sync> Runtime<D> {
    /// The tools, sorted by name.
    pub fn registry(&self) -> &Registry {
        &self.shared.registry
    }

    /// The `#[tool]`s linked into the program that this runtime left out because their
    /// context needs other deps than `D`, sorted by name. A tool you expected to find and
    /// that the model's calls answer with `unknown_tool` is likely here.
    pub fn left_out_tools(&self) -> &[LeftOutTool] {
        &self.shared.left_out
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.shared.limits
    }

    /// What the model is shown for `session`: the tools it may call, sorted by name. The same
    /// value decides both: a tool outside the session's scope, one whose required roles the
    /// principal lacks, or one the policy denies whatever its arguments is neither shown nor
    /// run.
    pub fn catalog(&self, session: &Session) -> Vec<&ToolSpec> {
        self.shared
            .registry
            .specs()
            .filter(|spec| {
                self.shared
                    .gates
                    .shown(session, spec, self.shared.artifact_tool)
            })
            .collect()
    }

    /// The session's catalog lowered for `target` (see [`providers`](crate::providers)), in
    /// the catalog's order; each tool's lowering is made once and kept. A tool whose schema
    /// the target cannot express is the error, naming the tool, the keyword and what to change.
    pub fn lowered_catalog(
        &self,
        session: &Session,
        target: Target,
    ) -> Result<LoweredCatalog, LoweringError> {
        let shared = &*self.shared;
        shared.lowerings.catalog(
            shared
                .registry
                .specs()
                .enumerate()
                .filter(|(_, spec)| shared.gates.shown(session, spec, shared.artifact_tool)),
            target,
        )
    }

    /// One tool's schema lowered for `target` (made once and kept), whether or not a session
    /// is shown it; `None` when the runtime has no tool of that name.
    pub fn lowered_tool(
        &self,
        name: &str,
        target: Target,
    ) -> Option<Result<Arc<LoweredTool>, LoweringError>> {
        let shared = &*self.shared;
        let (position, spec) = shared
            .registry
            .specs()
            .enumerate()
            .find(|(_, spec)| spec.name() == name)?;
        Some(shared.lowerings.tool(position, spec, target))
    }

    /// Lets a session whose consecutive denials stopped its asks and writes
    /// (`too_many_denials`) go on: a person looked at what happened.
    pub fn reset_denials(&self, session: &Session) {
        self.shared.gates.breaker.reset(session.id());
    }

    /// The session deps.
    pub fn deps(&self) -> &Arc<D> {
        &self.shared.deps
    }

    /// Waits until every audit line submitted so far is durable: the lines nobody waits for
    /// (a write's outcome, a refusal) may still be queued when a turn returns. Call it before
    /// reading the trail (`verify_audit`) or shipping it elsewhere, and before dropping the
    /// last clone of the runtime (a `JsonlAudit` dropped with lines queued writes them on the
    /// dropping thread). Without an audit sink, answers at once.
    ///
    /// # Errors
    ///
    /// A line submitted since the last flush could not be made durable, a line nobody waited
    /// for included: the trail is missing it (it may still verify, since the chain goes on
    /// from the last line on disk). The error says how many; each lost line is reported by
    /// one flush, so the next one answers `Ok` unless more were lost. A `JsonlAudit` that can
    /// no longer write (its writer thread stopped) answers an error at once.
    pub async fn flush_audit(&self) -> std::io::Result<()> {
        match &self.shared.gates.audit {
            Some(audit) => audit.flush().await,
            None => Ok(()),
        }
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
        self.run_turn(session, calls, cancel, &[])
            .instrument(span)
            .await
    }

    /// Runs calls resumed by signed decisions; `answered[i]`: how a person answered call `i`.
    pub(crate) async fn run_resumed(
        &self,
        session: &Session,
        calls: &[ToolCall],
        answered: &[Answered],
    ) -> TurnReport {
        let span = tracing::info_span!(
            "tool_turn",
            session = session.id(),
            calls = calls.len(),
            resumed = true
        );
        self.run_turn(session, calls, None, answered)
            .instrument(span)
            .await
    }

    async fn run_turn(
        &self,
        session: &Session,
        calls: &[ToolCall],
        cancel: Option<&CancellationToken>,
        answered: &[Answered],
    ) -> TurnReport {
        let shared = &*self.shared;
        let started = Instant::now();
        let session_id = session.id();
        let gate_session = session;
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
        let context_of = |index: usize, tool: &dyn tool_core::Tool| match tool
            .takes_context()
            .then(|| contexts.call(index))
            .flatten()
        {
            Some(own) => PlannedContext::Own(own),
            None => PlannedContext::Shared(&anonymous),
        };
        // The calls the policy asks a person about, with its reason.
        let mut asks: Vec<(usize, String)> = Vec::new();

        // 1. Admit, validate and decide every call; a call refused here is answered at once.
        let mut observations: Vec<Option<Observation>> = Vec::with_capacity(calls.len());
        let mut planned: Vec<Option<(Planned<'_>, ToolFuture)>> = Vec::with_capacity(calls.len());
        for (index, call) in calls.iter().enumerate() {
            let answer = answered.get(index).copied().unwrap_or(Answered::No);
            // The planned call is moved once, into its place (a match rather than combinators,
            // which move it at each step).
            let refused = match shared.plan(gate_session, CallRef::of(index, call), |tool| {
                context_of(index, tool)
            }) {
                Ok((plan, first)) => {
                    match shared.decide(gate_session, &plan, answer != Answered::No) {
                        Ok(admitted) => {
                            // A signed decision with an edit: the call carries the arguments
                            // the person edited.
                            if answer == Answered::Edited {
                                plan.gate.set(crate::observation::Gate::Edited);
                            }
                            if let Admitted::Ask(reason) = admitted
                                && answer == Answered::No
                            {
                                asks.push((index, reason));
                            }
                            planned.push(Some((plan, first)));
                            observations.push(None);
                            None
                        }
                        Err(error) => Some(error),
                    }
                }
                // Arguments a person edited that do not validate are that person's mistake:
                // a denial naming the field, as for an edit given at once.
                Err(error) if answer == Answered::Edited => Some(gates::edit_refused(error)),
                Err(error) => Some(error),
            };
            match refused {
                None => {}
                Some(error) => {
                    tracing::info!(tool = %call.name, call_id = %call.id, kind = %error.kind(), "rejected while planning");
                    observations.push(Some(
                        shared.rejected(session_id, &call.id, &call.name, error),
                    ));
                    planned.push(None);
                }
            }
        }

        // 1b. A person answers the calls the policy asks about, in call order, each once every
        //     call has been decided. A call refused here never runs.
        if !asks.is_empty() {
            let mut approved = Vec::with_capacity(asks.len());
            for (index, reason) in asks {
                let Some((plan, first)) = planned[index].take() else {
                    continue;
                };
                match shared.ask(gate_session, plan, first, reason).await {
                    Ok(plan) => {
                        planned[index] = Some(plan);
                        approved.push(index);
                    }
                    Err(error) => {
                        let call = &calls[index];
                        tracing::info!(tool = %call.name, call_id = %call.id, kind = %error.kind(), "refused by the gates");
                        observations[index] =
                            Some(shared.rejected(session_id, &call.id, &call.name, error));
                    }
                }
            }
            // Denials in this turn may have tripped the session's refusal breaker: what nobody
            // approved stops too (the calls a person said yes to go on).
            let tripped = shared.gates.breaker.tripped(session_id);
            for (index, slot) in planned.iter_mut().enumerate().filter(|_| tripped) {
                let Some((plan, _)) = slot.as_ref() else {
                    continue;
                };
                if let Err(error) = shared.gates.stop_if_tripped(
                    &plan.identity(gate_session),
                    plan.tool.spec(),
                    false,
                    approved.contains(&index),
                ) {
                    let call = &calls[index];
                    *slot = None;
                    observations[index] =
                        Some(shared.rejected(session_id, &call.id, &call.name, error));
                }
            }
        }

        // 2. Schedule the planned calls into batches.
        let slots: Vec<Slot<'_>> = planned
            .iter()
            .flatten()
            .map(|(plan, _)| Slot {
                index: plan.index,
                parallel_safe: plan.parallel_safe(),
                resources: plan.tool.spec().resource_list(),
            })
            .collect();
        let batches = schedule::schedule(&slots);

        // 3. Run the batches one after another. Each call starts with one poll where it
        //    stands; the calls still running after it wait together, at most
        //    `max_concurrency` at a time (a batch that is not concurrent has one call).
        let concurrency = shared.limits.max_concurrency.max(1);
        let mut waiting = Waiting::default();
        for batch in &batches {
            // `copied`: a closure over `usize` keeps the turn's future `Send` (one over `&usize`
            // held across an await does not prove it).
            let mut members = batch.calls.iter().copied().peekable();
            while members.peek().is_some() {
                if waiting.len() >= concurrency
                    && let Some(finished) = waiting.next().await
                {
                    let (index, observation) = shared.finish(gate_session, finished, batch.index);
                    observations[index] = Some(observation);
                }
                StartCalls {
                    shared,
                    session: gate_session,
                    members: &mut members,
                    planned: &mut planned,
                    waiting: &mut waiting,
                    observations: &mut observations,
                    concurrency,
                    batch: batch.index,
                    cancel,
                }
                .await;
            }
            while let Some(finished) = waiting.next().await {
                let (index, observation) = shared.finish(gate_session, finished, batch.index);
                observations[index] = Some(observation);
            }
        }

        // 4. Answer every call, in call order.
        let observations = observations
            .into_iter()
            .zip(calls)
            .map(|(observation, call)| {
                // Every call was either rejected or scheduled; this only guards the invariant.
                observation.unwrap_or_else(|| {
                    shared.rejected(
                        session_id,
                        &call.id,
                        &call.name,
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
}

/// How a person already answered a call that asks, before its turn (a signed decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Answered {
    /// Nobody did: an ask goes to the approver.
    No,
    /// Approved as it was sent.
    AsSent,
    /// Approved with the arguments the person edited (the call's arguments).
    Edited,
}

/// Starts a batch's calls, up to the concurrency cap, each with one poll where it stands, in
/// the turn's task: a call that answers at once is observed, one still running joins the
/// waiting calls. (A future rather than an `.await` per call, so a call is built and polled on
/// the stack instead of in the turn's state.)
struct StartCalls<'t, 'a, D, I> {
    shared: &'a Shared<D>,
    session: &'a Session,
    /// The batch's calls still to start, by index.
    members: &'t mut I,
    /// The planned calls, each taken from its place when it starts (moved once, into its
    /// future).
    planned: &'t mut [Option<(Planned<'a>, ToolFuture)>],
    waiting: &'t mut Waiting<'a>,
    observations: &'t mut Vec<Option<Observation>>,
    concurrency: usize,
    batch: usize,
    cancel: Option<&'a CancellationToken>,
}

impl<'a, D, I> Future for StartCalls<'_, 'a, D, I>
where
    D: Any + Send + Sync,
    I: Iterator<Item = usize>,
{
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = &mut *self;
        while this.waiting.len() < this.concurrency {
            let Some(index) = this.members.next() else {
                break;
            };
            let Some((plan, first)) = this.planned[index].take() else {
                continue;
            };
            let span = call_span(&plan, 0, Some(this.batch));
            let mut call = this.shared.run_call(plan, first, span, this.cancel, true);
            match Pin::new(&mut call).poll(cx) {
                Poll::Ready(finished) => {
                    let (index, observation) =
                        this.shared.finish(this.session, finished, this.batch);
                    this.observations[index] = Some(observation);
                }
                Poll::Pending => this.waiting.push(call),
            }
        }
        Poll::Ready(())
    }
}

/// The calls of a batch still running after their first poll, driven together. Most turns have
/// none, so the set is only made for the first.
#[derive(Default)]
struct Waiting<'a> {
    running: Option<FuturesUnordered<RunCall<'a>>>,
}

impl<'a> Waiting<'a> {
    fn len(&self) -> usize {
        self.running.as_ref().map_or(0, FuturesUnordered::len)
    }

    fn push(&mut self, call: RunCall<'a>) {
        self.running
            .get_or_insert_with(FuturesUnordered::new)
            .push(call);
    }

    /// The next call to finish, or `None` when none is running.
    async fn next(&mut self) -> Option<Finished<'a>> {
        match &mut self.running {
            Some(running) => running.next().await,
            None => None,
        }
    }
}
