//! The stack every call passes, built once: the model's calls, the calls a tool makes through
//! `ctx.call_tool`, resumed calls and replayed ones. In order:
//!
//! 1. **admit**: the tool is looked up, then the session's scope and the principal's roles
//!    ([`Shared::plan`]);
//! 2. **validate**: the argument limits, the arguments parsed once into the value every stage
//!    reads, the tool's own parsing and the schema check ([`Shared::plan`]);
//! 3. **gate**: the run's budget (when the call belongs to a run), the policy ([`Shared::decide`]) and, when it asks, a person, whose edit is
//!    admitted and validated again ([`Shared::ask`]); the refusal breaker stops what nobody
//!    approved;
//! 4. **idempotency**: a write claims its key, or is answered from the store;
//! 5. **retry**, 6. **timeout**, 7. **contain**: the shells around each attempt;
//! 8. **shape**: the output policy ([`Shared::observe`]; a nested call's output is redacted
//!    only, for the calling tool);
//! 9. **audit outcome**: the line of an executed write's outcome ([`Shared::audit_outcome`]).
//!
//! Stages 4 to 7 run inside the call's future ([`RunCall`]), and stage 8 too for a large
//! output (shaped on the blocking pool); the drivers poll it: the turn's (`runtime.rs`: the
//! asks in call order, scheduling, batching) and the nested one (`nested.rs`). A stage with nothing to do costs nothing: a read-only call without rules
//! never parses its arguments twice, asks nobody, claims nothing and writes no line.

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tool_core::{Registry, SessionContext, Tool, ToolError, ToolFuture, ToolInvoker};

use crate::READ_ARTIFACT;
use crate::arguments::{Arguments, CallArguments};
use crate::build_error::LeftOutTool;
use crate::call_path::{Ended, Finished, Offload, Output, RunCall, record_end};
use crate::gates::{Admitted, AskedCall, AwaitedLines, CallIdentity, Gates};
use crate::idempotency::Layer;
use crate::limits::{self, Limits};
use crate::observation::{Gate, GateCell, Observation, Outcome};
use crate::output::artifacts::ArtifactStore;
use crate::output::redact::Redactor;
use crate::output::redact_client::RedactingClient;
use crate::output::{self, Policy};
use crate::plan::{CallRef, Planned, PlannedContext};
use crate::providers::Lowerings;
use crate::session::Session;
use crate::shells::{CallShells, RetryPolicy, contain};
use crate::validate;

/// What every call of a runtime shares.
pub(crate) struct Shared<D> {
    pub(crate) deps: Arc<D>,
    pub(crate) registry: Registry,
    pub(crate) limits: Limits,
    pub(crate) retry: RetryPolicy,
    pub(crate) redactor: Arc<Redactor>,
    pub(crate) artifacts: Arc<dyn ArtifactStore>,
    /// The `#[tool]`s of the program left out for needing other deps.
    pub(crate) left_out: Vec<LeftOutTool>,
    /// Whether the built-in `read_artifact` is offered.
    pub(crate) artifact_tool: bool,
    /// Scope, roles, policy, approvals and audit.
    pub(crate) gates: Gates,
    /// Exactly once for writes.
    pub(crate) idempotency: Layer,
    /// Each tool's schema lowered per provider, made when first asked for.
    pub(crate) lowerings: Lowerings,
}

impl<D: Any + Send + Sync> Shared<D> {
    /// The context every call of one turn shares.
    pub(crate) fn session_context(self: &Arc<Self>, session: &Session) -> SessionContext {
        let context = SessionContext::new(
            Arc::clone(&self.deps),
            session.shared_id(),
            Some(Arc::clone(self) as Arc<dyn ToolInvoker>),
        );
        // What tools send the client is redacted as their outputs are.
        let context = match session.client() {
            Some(client) => context.with_client(Arc::new(RedactingClient {
                inner: Arc::clone(client),
                redactor: Arc::clone(&self.redactor),
            })),
            None => context,
        };
        // The calls tools make are gated as their session is: they read it back.
        if session.is_plain() {
            context
        } else {
            context.with_data(Arc::new(session.clone()))
        }
    }

    /// Stages 1 and 2, admit and validate, for one call top-level or nested: look the tool up, check the
    /// scope and the roles, then the argument limits, parse and validate the arguments.
    /// `context` gives the call its context once the tool is known. An error is the call's
    /// answer: it runs in no batch.
    pub(crate) fn plan<'a>(
        &'a self,
        session: &Session,
        call: CallRef<'a>,
        context: impl FnOnce(&dyn Tool) -> PlannedContext<'a>,
    ) -> Result<(Planned<'a>, ToolFuture), ToolError> {
        let Some(found) = self.registry.lookup(call.name) else {
            // The suggestion and the list name only tools this session is shown.
            return Err(self.registry.unknown_tool_among(call.name, |name| {
                self.registry
                    .get(name)
                    .is_some_and(|tool| self.gates.shown(session, tool.spec(), self.artifact_tool))
            }));
        };
        let tool = found.tool.as_ref();
        // The first gate, before the arguments are looked at: scope, then roles.
        let identity = CallIdentity {
            session,
            call_id: call.id,
            tool: found.name,
            version: found.version.map(|version| &**version),
            awaited: None,
        };
        self.gates
            .admit_tool(&identity, tool.spec(), self.artifact_tool)?;
        let spec = tool.spec();
        limits::check_arguments(&call.arguments, &self.limits)?;
        let arguments = CallArguments::new(call.arguments, spec.input_schema());
        // Parsed once, before the tool, when a stage reads the value anyway: the tool then
        // reads that value instead of parsing the text again.
        let writes = Layer::applies(spec) || !spec.execution().read_only;
        if writes
            || validate::reads_the_value(spec)
            || self.gates.policy.reads_the_value(spec.name())
        {
            arguments.parse();
        }
        let idempotency = Layer::applies(spec).then(|| {
            let timeout = spec.timeout().or(self.limits.default_timeout);
            Box::new(self.idempotency.key(
                session,
                call.id,
                spec,
                found.version.map(|version| &**version),
                &arguments,
                call.idempotency_key.as_deref(),
                timeout.map(|timeout| self.retry.running_at_most(timeout)),
            ))
        });
        let context = match (context(tool), &idempotency) {
            // The tool reads its key from its context, to forward it downstream.
            (PlannedContext::Own(own), Some(key)) => {
                PlannedContext::Own(own.with_idempotency_key(Arc::clone(&key.for_tool)))
            }
            (context, _) => context,
        };
        let first = contain::prepare(|| tool.prepare(arguments.for_tool(), context.get()))
            .map_err(|error| validate::with_schema_fragment(error, spec.input_schema()))?;
        validate::check_prepared(spec, &arguments)?;
        let plan = Planned {
            index: call.index,
            call_id: call.id,
            arguments,
            name: found.name,
            version: found.version,
            context,
            tool,
            idempotency,
            audit: AwaitedLines::default(),
            gate: GateCell::default(),
        };
        Ok((plan, first))
    }

    /// Stages 4 (idempotency) to 8 (shape), as one future: the path of one planned call, top-level or
    /// nested. `for_the_model`: its output is shaped for the model (a nested call's is only
    /// redacted, for the calling tool).
    pub(crate) fn run_call<'a>(
        &'a self,
        planned: Planned<'a>,
        first: ToolFuture,
        span: tracing::Span,
        cancel: Option<&'a CancellationToken>,
        for_the_model: bool,
    ) -> RunCall<'a> {
        let offload = for_the_model.then(|| Offload {
            redactor: &self.redactor,
            artifacts: &self.artifacts,
            max_chars: planned.max_chars(&self.limits),
            read_limit: self.limits.max_output_chars,
            verbatim: self.artifact_tool && &**planned.name == READ_ARTIFACT,
        });
        let shells = CallShells {
            retry: &self.retry,
            repeatable: planned.repeatable(),
            timeout: planned.timeout(&self.limits),
        };
        RunCall::new(
            span,
            planned,
            first,
            shells,
            cancel,
            offload,
            &self.idempotency,
            &self.redactor,
        )
    }

    /// Stage 3, the gate: what the policy decides about a planned call. `approved`: a person approved it
    /// already (at once, edited or not, or by a signed decision): the refusal breaker, which
    /// stops what nobody approved, lets it through; a deny still wins. The decision is kept on
    /// the planned call for its observation: `auto`, or `approved` (an edit is marked by
    /// whoever knows of it); an ask is marked once a person answers.
    pub(crate) fn decide(
        &self,
        session: &Session,
        planned: &Planned<'_>,
        approved: bool,
    ) -> Result<Admitted, ToolError> {
        // A run's budget first: a call it refuses is put to nobody. A call a person approved
        // was counted when it was first decided.
        if let Some(meter) = session.meter().filter(|_| !approved) {
            meter.admit(planned.call_id, planned.name, || {
                planned.arguments.digest().to_owned()
            })?;
        }
        let admitted = self.gates.decide(
            &planned.identity(session),
            planned.tool.spec(),
            &planned.arguments,
            &self.redactor,
            approved,
        )?;
        match (&admitted, approved) {
            (_, true) => planned.gate.set(Gate::Approved),
            (Admitted::Run, false) => planned.gate.set(Gate::Auto),
            (Admitted::Ask(_), false) => {}
        }
        Ok(admitted)
    }

    /// Stage 3, the gate, when the policy asks: a person answers. The call comes back as it may run: as
    /// planned, or planned again with the arguments the person edited (admitted, validated
    /// and decided again: a deny still wins; an invalid edit is a denial naming the field).
    pub(crate) async fn ask<'a>(
        &'a self,
        session: &Session,
        planned: Planned<'a>,
        first: ToolFuture,
        reason: String,
    ) -> Result<(Planned<'a>, ToolFuture), ToolError> {
        let asked = AskedCall {
            spec: planned.tool.spec(),
            arguments: &planned.arguments,
            explicit_key: planned
                .idempotency
                .as_deref()
                .filter(|key| key.explicit)
                .map(|key| &*key.for_tool),
        };
        let edited = self
            .gates
            .ask(&planned.identity(session), &asked, reason, &self.redactor)
            .await?;
        match edited {
            None => {
                planned.gate.set(Gate::Approved);
                Ok((planned, first))
            }
            Some(edited) => {
                drop(first);
                self.plan_edited(session, planned, edited)
            }
        }
    }

    /// A call planned again with the arguments a person edited, in its own context.
    fn plan_edited<'a>(
        &'a self,
        session: &Session,
        planned: Planned<'a>,
        edited: Value,
    ) -> Result<(Planned<'a>, ToolFuture), ToolError> {
        let Planned {
            index,
            call_id,
            name,
            context,
            idempotency,
            ..
        } = planned;
        let call = CallRef {
            index,
            id: call_id,
            name,
            arguments: Cow::Owned(Arguments::Value(edited)),
            idempotency_key: idempotency
                .filter(|key| key.explicit)
                .map(|key| Arc::clone(&key.for_tool)),
        };
        let (planned, first) = self
            .plan(session, call, |_| context)
            .map_err(crate::gates::edit_refused)?;
        self.decide(session, &planned, true)?;
        planned.gate.set(Gate::Edited);
        Ok((planned, first))
    }

    /// Stage 9, the audit of the outcome: the line of an executed write's outcome (`success` or the error's
    /// kind). Only a write that ran has one: a replay or a refusal by the idempotency layer
    /// ran nothing.
    /// `attempts`: how many times the tool ran; `error`: the kind of the error it ended with,
    /// once shaped.
    pub(crate) fn audit_outcome(
        &self,
        session: &Session,
        planned: &Planned<'_>,
        attempts: u32,
        error: Option<&str>,
    ) {
        if self.gates.audit.is_none() || planned.tool.spec().execution().read_only || attempts == 0
        {
            return;
        }
        self.gates
            .record_outcome(&planned.identity(session), error.unwrap_or("success"));
    }

    /// The output policy for a call of `tool` whose output may reach `max_chars`.
    pub(crate) fn output_policy<'a>(
        &'a self,
        session: &'a str,
        tool: &str,
        max_chars: usize,
    ) -> Policy<'a> {
        Policy {
            max_chars,
            redactor: &self.redactor,
            artifacts: self.artifacts.as_ref(),
            // Errors are shaped on the turn's task: a long one is stored without waiting.
            shared_artifacts: Some(&self.artifacts),
            session,
            read_limit: self.limits.max_output_chars,
            // The pages of an artifact are what the model may see already, returned exactly.
            verbatim: self.artifact_tool && tool == READ_ARTIFACT,
        }
    }

    /// The observation of a call that ran: the output policy applied to what it returned.
    pub(crate) fn observe(
        &self,
        planned: &Planned<'_>,
        ended: Ended,
        batch: Option<usize>,
    ) -> Observation {
        let policy = self.output_policy(
            planned.context.get().session_id(),
            planned.name,
            planned.max_chars(&self.limits),
        );
        let (outcome, shaped, page) = match ended.result {
            Ok(Output::Raw(output)) => {
                let page = output.page().cloned().map(Box::new);
                let mut shaped = output::shape(output, &policy);
                let content = std::mem::take(&mut shaped.content);
                (Outcome::Success { content }, shaped, page)
            }
            Ok(Output::Shaped(shaped)) => {
                let (mut shaped, page) = *shaped;
                let content = std::mem::take(&mut shaped.content);
                (Outcome::Success { content }, shaped, page)
            }
            Err(error) => {
                // A write's transient failure may have been carried out: the model is not told
                // to repeat it unless the tool said nothing was done.
                let error = if planned.repeatable() || error.is_safe_to_repeat() {
                    error
                } else {
                    error.retryable(false)
                };
                let (error, shaped) = output::shape_error(error, &policy);
                (Outcome::Error { error }, shaped, None)
            }
        };
        Observation {
            call_id: Arc::clone(planned.call_id),
            tool: Arc::clone(planned.name),
            tool_version: planned.version.cloned(),
            outcome,
            truncated: shaped.truncated,
            redactions: shaped.redactions.saturating_add(ended.redactions),
            artifact: shaped.artifact,
            page,
            elapsed: ended.elapsed,
            attempts: ended.attempts,
            batch: batch.map(|batch| u32::try_from(batch).unwrap_or(u32::MAX)),
            replayed: ended.replayed,
            content_blocks: shaped.blocks,
            gate: planned.gate.get(),
        }
    }

    /// The observation of a call answered before it ran (unknown tool, invalid arguments, a
    /// refusal by the gate, whose decision its error's kind tells).
    pub(crate) fn rejected(
        &self,
        session: &str,
        call_id: &Arc<str>,
        tool: &str,
        error: ToolError,
    ) -> Observation {
        let gate = Gate::of_refusal(error.kind());
        let policy = self.output_policy(session, "", self.limits.max_output_chars);
        let (error, shaped) = output::shape_error(error, &policy);
        Observation {
            call_id: Arc::clone(call_id),
            tool: Arc::from(tool),
            tool_version: self
                .registry
                .lookup(tool)
                .and_then(|found| found.version.cloned()),
            outcome: Outcome::Error { error },
            truncated: shaped.truncated,
            redactions: shaped.redactions,
            artifact: shaped.artifact,
            page: None,
            elapsed: Duration::ZERO,
            attempts: 0,
            batch: None,
            replayed: false,
            content_blocks: false,
            gate,
        }
    }

    /// The observation of a call the model made, at the end of its path: the output policy
    /// applied in the call's span.
    pub(crate) fn finish(
        &self,
        session: &Session,
        finished: Finished<'_>,
        batch: usize,
    ) -> (usize, Observation) {
        let Finished {
            planned,
            ended,
            span,
        } = finished;
        let observation = span.in_scope(|| self.observe(&planned, ended, Some(batch)));
        self.audit_outcome(
            session,
            &planned,
            observation.attempts(),
            observation.error_kind(),
        );
        record_end(&span, observation.error_kind(), observation.elapsed);
        (planned.index, observation)
    }
}
