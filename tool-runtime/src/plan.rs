//! A planned call: what stages 1 and 2 of the stack (`stack.rs`) make of a call, and what the
//! later stages, the scheduler and the shells read of it.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use tool_core::{CallContext, Tool, ToolFuture};

use crate::arguments::{Arguments, CallArguments};
use crate::call::ToolCall;
use crate::gates::{AwaitedLines, CallIdentity};
use crate::idempotency::CallKey;
use crate::limits::Limits;
use crate::observation::GateCell;
use crate::session::Session;
use crate::shells::contain;

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
    /// What the gate decided, for the call's observation.
    pub(crate) gate: GateCell,
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
    /// As sent, or as a person edited them.
    pub(crate) arguments: Cow<'a, Arguments>,
    /// The key the caller supplied.
    pub(crate) idempotency_key: Option<Arc<str>>,
}

impl<'a> CallRef<'a> {
    pub(crate) fn of(index: usize, call: &'a ToolCall) -> Self {
        Self {
            index,
            id: &call.id,
            name: &call.name,
            arguments: Cow::Borrowed(&call.arguments),
            idempotency_key: call.idempotency_key.clone(),
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
