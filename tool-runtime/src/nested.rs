//! Calls a tool makes through `RunContext::call_tool`: planned and run on the same path as a
//! call the model makes (the same lookup, limits, validation, shells, output redaction and
//! span), one level deeper.
//!
//! Nested calls obey the scheduler's rule. A tool that runs alongside other calls (it is
//! parallel-safe) may only call parallel-safe tools: a call of a tool that must run alone is
//! refused with `nested_call_refused`, so it never overlaps the other calls of the batch. A
//! tool that runs alone may call any tool; its nested calls are ordered among themselves as
//! the scheduler orders a turn: parallel-safe ones may overlap unless they share a declared
//! resource, any other runs alone. The locks are those of the calls of one turn (or of one
//! calling tool's calls, a level deeper): a nested call does not wait for a top-level call of
//! its batch that declares the same resource.

use std::any::Any;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tool_core::{CallContext, ErrorKind, ToolError, ToolInvoker, ToolOutput};

use crate::arguments::Arguments;
use crate::call_path::{Finished, Output, call_span, record_end};
use crate::gates::Admitted;
use crate::observation::Gate;
use crate::output;
use crate::plan::{CallRef, PlannedContext};
use crate::schedule;
use crate::session::Session;
use crate::stack::Shared;
use crate::trace::NestedCall;

impl<D: Any + Send + Sync> ToolInvoker for Shared<D> {
    fn invoke(
        self: Arc<Self>,
        parent: &CallContext,
        tool_name: &str,
        args: Value,
    ) -> tool_core::BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let parent = parent.clone();
        let tool_name = tool_name.to_owned();
        Box::pin(
            async move { run_nested(&self, &parent, &tool_name, Arguments::Value(args)).await },
        )
    }
}

/// The nested driver: one call a tool makes, through the stack's stages.
async fn run_nested<D: Any + Send + Sync>(
    shared: &Shared<D>,
    parent: &CallContext,
    tool_name: &str,
    arguments: Arguments,
) -> Result<ToolOutput, ToolError> {
    let depth = parent.depth() + 1;
    let call_id: Arc<str> = Arc::from(format!("{}/{tool_name}", parent.call_id()));
    let session = Session::of_context(parent);
    // A call refused before it ran, as the run's trace has it (when the run is traced).
    let refused = |digest: Option<&str>, error: &ToolError| {
        note(&session, &call_id, tool_name, Noted::refused(digest, error));
    };
    if depth > shared.limits.max_call_depth {
        let error = ToolError::new(
            ErrorKind::CallDepthExceeded,
            format!(
                "tool `{}` called `{tool_name}` {depth} levels deep; the limit is {}",
                parent.tool_name(),
                shared.limits.max_call_depth
            ),
        )
        .with_hint("do the work in fewer nested calls");
        refused(None, &error);
        return Err(error);
    }
    let call = CallRef {
        index: 0,
        id: &call_id,
        name: tool_name,
        arguments: Cow::Owned(arguments),
        idempotency_key: None,
    };
    let context =
        |_: &dyn tool_core::Tool| PlannedContext::Own(parent.nested(&*call_id, tool_name));
    let reject = |error: ToolError| {
        tracing::info!(tool = %tool_name, call_id = %call_id, kind = %error.kind(), "nested call refused before it ran");
        let policy = shared.output_policy(parent.session_id(), "", shared.limits.max_output_chars);
        output::shape_error(error, &policy).0
    };
    let (planned, first) = match shared.plan(&session, call, context) {
        Ok(planned) => planned,
        Err(error) => {
            refused(None, &error);
            return Err(reject(error));
        }
    };

    // The scheduler's rule, for calls a tool makes: before the gates, so that nobody is
    // asked to approve a call that could never run.
    let parent_alone = shared
        .registry
        .get(parent.tool_name())
        .is_some_and(|tool| !tool.spec().execution().parallel_safe());
    if !planned.parallel_safe() && !parent_alone {
        let error = ToolError::new(
                ErrorKind::NestedCallRefused,
                format!(
                    "tool `{}` runs alongside other calls and cannot call `{tool_name}`, which must run alone",
                    parent.tool_name()
                ),
            )
            .with_hint(format!("call `{tool_name}` directly, not through another tool"));
        refused(Some(planned.arguments.digest()), &error);
        return Err(error);
    }

    // The gates, as for a call the model makes.
    let digest = planned.arguments.digest().to_owned();
    let (planned, first) = match shared.decide(&session, &planned, false) {
        Ok(Admitted::Run) => (planned, first),
        Ok(Admitted::Ask(reason)) => match shared.ask(&session, planned, first, reason).await {
            Ok(asked) => asked,
            Err(error) => {
                refused(Some(&digest), &error);
                return Err(reject(error));
            }
        },
        Err(error) => {
            refused(Some(&digest), &error);
            return Err(reject(error));
        }
    };

    let span = call_span(&planned, depth, None);
    // The scheduler's rule, as the calls come: parallel-safe ones may overlap unless they
    // share a declared resource; any other runs alone.
    let _turn = schedule::nested_turn(
        parent.nested_calls(),
        planned.parallel_safe(),
        planned.tool.spec().resource_list(),
    )
    .await;
    let Finished {
        ended,
        span,
        planned,
    } = shared.run_call(planned, first, span, None, false).await;
    let _entered = span.enter();
    let (elapsed, attempts) = (ended.elapsed, ended.attempts);
    let (replayed, mut redactions) = (ended.replayed, ended.redactions);
    // The output policy's redaction, on the JSON the calling tool reads. Cutting and page
    // notices shape text for a model's context: they apply when the calling tool's own
    // output reaches the model.
    let result = match ended.result {
        // A nested call's output is never shaped for the model.
        Ok(Output::Shaped(shaped)) => ToolOutput::from_serialize(&shaped.0.content),
        Ok(Output::Raw(output)) => {
            let (output, found) = output::redacted(output, &shared.redactor);
            redactions = redactions.saturating_add(found);
            Ok(output)
        }
        Err(error) => {
            let policy = shared.output_policy(
                parent.session_id(),
                tool_name,
                shared.limits.max_output_chars,
            );
            Err(output::shape_error(error, &policy).0)
        }
    };
    let kind = result.as_ref().err().map(|error| error.kind().as_str());
    shared.audit_outcome(&session, &planned, attempts, kind);
    record_end(&span, kind, elapsed);
    note(
        &session,
        &call_id,
        tool_name,
        Noted {
            digest: Some(planned.arguments.digest()),
            gate: planned.gate.get(),
            attempts,
            elapsed,
            replayed,
            redactions,
            error: result.as_ref().err(),
        },
    );
    result
}

/// What the run's trace keeps of a nested call.
struct Noted<'a> {
    digest: Option<&'a str>,
    gate: Option<Gate>,
    attempts: u32,
    elapsed: Duration,
    replayed: bool,
    redactions: u32,
    error: Option<&'a ToolError>,
}

impl<'a> Noted<'a> {
    /// A call answered before it ran: the gate's decision is what its error's kind tells.
    fn refused(digest: Option<&'a str>, error: &'a ToolError) -> Self {
        Self {
            digest,
            gate: Gate::of_refusal(error.kind()),
            attempts: 0,
            elapsed: Duration::ZERO,
            replayed: false,
            redactions: 0,
            error: Some(error),
        }
    }
}

/// Hands a nested call to its run's meter for the trace; nothing is built unless the run is
/// traced.
fn note(session: &Session, call_id: &str, tool: &str, noted: Noted<'_>) {
    let Some(meter) = session.meter() else {
        return;
    };
    meter.record_nested(|| NestedCall {
        call_id: call_id.to_owned(),
        tool: tool.to_owned(),
        arguments_digest: noted.digest.map(str::to_owned),
        gate: noted.gate,
        attempts: noted.attempts,
        elapsed: noted.elapsed,
        error_kind: noted.error.map(|error| error.kind().as_str().to_owned()),
        invalid_field: noted
            .error
            .filter(|error| *error.kind() == ErrorKind::InvalidArguments)
            .and_then(|error| error.details())
            .and_then(|details| details.get("field"))
            .and_then(Value::as_str)
            .map(str::to_owned),
        replayed: noted.replayed,
        redactions: noted.redactions,
    });
}
