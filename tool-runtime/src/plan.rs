//! Planning one call: look the tool up, check the argument limits, parse and validate the
//! arguments and build the context, before anything runs.
//!
//! The arguments are checked against the tool's schema after the tool has parsed them
//! (`Tool::prepare`): a call serde refuses gets serde's error, which names the Rust type and
//! never pays for a second check; the schema check then catches only what parsing lets
//! through (a bound, a length, a pattern, a repeated item, a field a nested struct would
//! drop). For a tool whose parsing checks everything its schema says, the check is one look
//! at its spec. The prepared future is dropped unpolled when the check fails: nothing ran.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use tool_core::{CallContext, SessionContext, Tool, ToolError, ToolFuture, ToolInvoker};

use crate::arguments::{Arguments, CallArguments};
use crate::call::{Session, ToolCall};
use crate::gates::{AwaitedLines, CallIdentity};
use crate::idempotency::{CallKey, Layer};
use crate::limits::{self, Limits};
use crate::runtime::Shared;
use crate::shells::contain;
use crate::validate;

/// One call, ready to run: the tool and what the scheduler and the shells need to know. Its
/// prepared first attempt travels beside it (a future is not `Sync`; this is shared while the
/// call runs).
pub(crate) struct Planned<'a> {
    /// The call's position in its turn (0 for a nested call).
    pub(crate) index: usize,
    pub(crate) call_id: &'a Arc<str>,
    /// The one value every stage reads the arguments from.
    pub(crate) arguments: CallArguments<'a>,
    pub(crate) tool: &'a dyn Tool,
    /// The tool's name, shared with the observation.
    pub(crate) name: &'a Arc<str>,
    /// The tool's version, shared with the observation.
    pub(crate) version: Option<&'a Arc<str>>,
    /// The call's context: its own when the tool takes one, the turn's anonymous one otherwise.
    pub(crate) context: PlannedContext<'a>,
    /// The call's idempotency key, when the layer applies to its tool.
    pub(crate) idempotency: Option<Box<CallKey>>,
    /// The audit lines the call's path waits for before the tool starts.
    pub(crate) audit: AwaitedLines,
}

/// A call's context, owned or shared with the other calls of its turn.
pub(crate) enum PlannedContext<'a> {
    Own(CallContext),
    Shared(&'a CallContext),
}

/// What a call is, before it is planned.
pub(crate) struct CallRef<'a> {
    pub(crate) index: usize,
    pub(crate) id: &'a Arc<str>,
    pub(crate) name: &'a str,
    pub(crate) arguments: &'a Arguments,
    /// The key the caller supplied.
    pub(crate) idempotency_key: Option<&'a str>,
}

impl<'a> CallRef<'a> {
    pub(crate) fn of(index: usize, call: &'a ToolCall) -> Self {
        Self {
            index,
            id: &call.id,
            name: &call.name,
            arguments: &call.arguments,
            idempotency_key: call.idempotency_key.as_deref(),
        }
    }
}

impl Planned<'_> {
    /// Who makes the call, for the gates' audit lines.
    pub(crate) fn identity<'s>(&'s self, session: &'s Session) -> CallIdentity<'s> {
        CallIdentity {
            session,
            call_id: self.call_id,
            tool: self.name,
            version: self.version.map(|version| &**version),
            awaited: Some(&self.audit),
        }
    }

    /// The call's timeout: the tool's own, or the runtime's default.
    pub(crate) fn timeout(&self, limits: &Limits) -> Option<Duration> {
        self.tool.spec().timeout().or(limits.default_timeout)
    }

    /// The most output characters the model receives from this call.
    pub(crate) fn max_chars(&self, limits: &Limits) -> usize {
        self.tool
            .spec()
            .output()
            .max_chars
            .unwrap_or(limits.max_output_chars)
    }

    /// Whether the tool may run again after a transient failure: it is read-only or declares
    /// `idempotent`.
    pub(crate) fn repeatable(&self) -> bool {
        let spec = self.tool.spec();
        spec.execution().read_only || spec.hints().idempotent
    }

    /// Whether the call may run alongside other calls.
    pub(crate) fn parallel_safe(&self) -> bool {
        self.tool.spec().execution().parallel_safe()
    }

    /// A fresh attempt of the call: its arguments already passed once.
    pub(crate) fn prepare_again(&self) -> ToolFuture {
        match contain::prepare(|| {
            self.tool
                .prepare(self.arguments.for_tool(), self.context.get())
        }) {
            Ok(future) => future,
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }
}

impl PlannedContext<'_> {
    pub(crate) fn get(&self) -> &CallContext {
        match self {
            PlannedContext::Own(context) => context,
            PlannedContext::Shared(context) => context,
        }
    }
}

impl<D: Any + Send + Sync> Shared<D> {
    /// The context every call of one turn shares.
    pub(crate) fn session_context(self: &Arc<Self>, session: &Session) -> SessionContext {
        let context = SessionContext::new(
            Arc::clone(&self.deps),
            session.shared_id(),
            Some(Arc::clone(self) as Arc<dyn ToolInvoker>),
        );
        // The calls tools make are gated as their session is: they read it back.
        if session.is_plain() {
            context
        } else {
            context.with_data(Arc::new(session.clone()))
        }
    }

    /// Plans one call, top-level or nested: look the tool up, check the argument limits, parse
    /// and validate the arguments. `context` gives the call its context once the tool is known.
    /// An error is the call's answer: it runs in no batch.
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
        limits::check_arguments(call.arguments, &self.limits)?;
        let arguments = CallArguments::new(call.arguments, spec.input_schema());
        // Parsed once, before the tool, when a stage reads the value anyway: the tool then
        // reads that value instead of parsing the text again.
        let writes = Layer::applies(spec) || !spec.execution().read_only;
        if writes
            || validate::reads_the_value(spec)
            || self.gates.policy.reads_arguments(spec.name())
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
                call.idempotency_key,
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
        };
        Ok((plan, first))
    }
}
