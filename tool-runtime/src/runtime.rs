//! The [`Runtime`]: plans a turn of tool calls, schedules it and runs each call through the
//! shells and the output policy, answering every call exactly once, in call order.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use futures::StreamExt;
use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tool_core::{
    CallContext, ErrorKind, Registry, Tool, ToolError, ToolFuture, ToolInvoker, ToolOutput,
};
use tracing::Instrument;

use crate::call::{Arguments, Session, ToolCall};
use crate::limits::{self, Limits};
use crate::observation::{Batch, Observation, Outcome, TurnReport};
use crate::output::{self, artifacts::ArtifactStore, redact::Redactor};
use crate::schedule::{self, Slot};
use crate::shells::{self, RetryPolicy, contain};

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

/// One call, ready to run: the tool, its prepared first attempt and what the scheduler and the
/// shells need to know.
struct Planned<'a> {
    index: usize,
    call: &'a ToolCall,
    tool: Arc<dyn Tool>,
    context: CallContext,
    first: Option<ToolFuture>,
    timeout: Option<Duration>,
    max_chars: usize,
    parallel_safe: bool,
    resources: Vec<String>,
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
    pub async fn execute(&self, session: &Session, calls: Vec<ToolCall>) -> TurnReport {
        self.execute_with_cancel(session, calls, CancellationToken::new())
            .await
    }

    /// Runs one turn until `cancel` fires; calls that have not finished by then are answered
    /// with `cancelled`.
    pub async fn execute_with_cancel(
        &self,
        session: &Session,
        calls: Vec<ToolCall>,
        cancel: CancellationToken,
    ) -> TurnReport {
        let span = tracing::info_span!("tool_turn", session = session.id(), calls = calls.len());
        let report = self
            .run_turn(session, &calls, &cancel)
            .instrument(span)
            .await;
        for call in calls {
            if let Arguments::Value(value) = call.arguments {
                limits::dispose(value);
            }
        }
        report
    }

    async fn run_turn(
        &self,
        session: &Session,
        calls: &[ToolCall],
        cancel: &CancellationToken,
    ) -> TurnReport {
        let started = Instant::now();
        let mut observations: Vec<Option<Observation>> = vec![None; calls.len()];
        let mut planned: Vec<Option<Planned<'_>>> = Vec::with_capacity(calls.len());
        for (index, call) in calls.iter().enumerate() {
            match self.plan(session, index, call) {
                Ok(plan) => planned.push(Some(plan)),
                Err(error) => {
                    tracing::info!(tool = %call.name, call_id = %call.id, kind = %error.kind(), "rejected while planning");
                    observations[index] = Some(self.rejected(call, error));
                    planned.push(None);
                }
            }
        }

        let slots: Vec<Slot<'_>> = planned
            .iter()
            .flatten()
            .map(|plan| Slot {
                index: plan.index,
                parallel_safe: plan.parallel_safe,
                resources: &plan.resources,
            })
            .collect();
        let groups = schedule::schedule(&slots);

        let mut batches = Vec::with_capacity(groups.len());
        for (batch_index, group) in groups.into_iter().enumerate() {
            batches.push(Batch {
                index: batch_index,
                call_ids: group
                    .indices
                    .iter()
                    .map(|&index| calls[index].id.clone())
                    .collect(),
                concurrent: group.concurrent,
            });
            let members: Vec<Planned<'_>> = group
                .indices
                .iter()
                .filter_map(|&index| planned[index].take())
                .collect();
            let concurrency = self.shared.limits.max_concurrency.max(1);
            let mut finished: Vec<(usize, Observation)> = futures::stream::iter(members)
                .map(|plan| {
                    let index = plan.index;
                    async move { (index, self.run_call(plan, batch_index, cancel).await) }
                })
                .buffer_unordered(concurrency)
                .collect()
                .await;
            for (index, observation) in finished.drain(..) {
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

    /// Looks the tool up, checks the argument limits and prepares the first attempt.
    fn plan<'a>(
        &self,
        session: &Session,
        index: usize,
        call: &'a ToolCall,
    ) -> Result<Planned<'a>, ToolError> {
        let shared = &self.shared;
        let Some(tool) = shared.registry.get(&call.name) else {
            return Err(shared.registry.unknown_tool(&call.name));
        };
        let tool = Arc::clone(tool);
        limits::check_arguments(&call.arguments, &shared.limits)?;
        let context = CallContext::new(
            Arc::clone(&shared.deps),
            session.shared_id(),
            call.id.as_str(),
            call.name.as_str(),
        )
        .with_invoker(Arc::clone(&self.shared) as Arc<dyn ToolInvoker>);
        let first =
            contain::prepare(|| tool.prepare(call.arguments.as_tool_args(), context.clone()))
                .map_err(|error| with_schema_fragment(error, tool.spec().input_schema()))?;
        let spec = tool.spec();
        Ok(Planned {
            index,
            call,
            timeout: spec.timeout().or(shared.limits.default_timeout),
            max_chars: spec
                .output()
                .max_chars
                .unwrap_or(shared.limits.max_output_chars),
            parallel_safe: spec.execution().parallel_safe(),
            resources: spec.resources().map(str::to_owned).collect(),
            first: Some(first),
            context,
            tool,
        })
    }

    /// Runs one planned call through the shells and the output policy.
    async fn run_call(
        &self,
        mut plan: Planned<'_>,
        batch: usize,
        cancel: &CancellationToken,
    ) -> Observation {
        let call = plan.call;
        let span = tracing::info_span!(
            "tool_call",
            tool = %call.name,
            call_id = %call.id,
            batch,
            outcome = tracing::field::Empty,
            elapsed_ms = tracing::field::Empty,
        );
        let started = Instant::now();
        let attempts = AtomicU32::new(0);
        let tool = Arc::clone(&plan.tool);
        let context = plan.context.clone();
        let mut first = plan.first.take();
        let shells = shells::run(&self.shared.retry, plan.timeout, |number| {
            attempts.store(number, Ordering::Relaxed);
            let future = first.take().unwrap_or_else(|| {
                match contain::prepare(|| {
                    tool.prepare(call.arguments.as_tool_args(), context.clone())
                }) {
                    Ok(future) => future,
                    Err(error) => Box::pin(std::future::ready(Err(error))),
                }
            });
            future
        })
        .instrument(span.clone());
        let result = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(cancelled_error()),
            outcome = shells => outcome.result,
        };
        let elapsed = started.elapsed();
        let observation = self.observe(
            call,
            plan.tool.as_ref(),
            result,
            plan.max_chars,
            elapsed,
            attempts.load(Ordering::Relaxed),
            Some(batch),
        );
        span.record("outcome", observation.error_kind().unwrap_or("success"));
        span.record(
            "elapsed_ms",
            u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
        );
        tracing::info!(parent: &span, "call finished");
        observation
    }

    #[allow(
        clippy::too_many_arguments,
        reason = "one observation gathers every fact of a call"
    )]
    fn observe(
        &self,
        call: &ToolCall,
        tool: &dyn Tool,
        result: Result<ToolOutput, ToolError>,
        max_chars: usize,
        elapsed: Duration,
        attempts: u32,
        batch: Option<usize>,
    ) -> Observation {
        let mut observation = Observation {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            tool_version: tool.spec().version().map(str::to_owned),
            outcome: Outcome::Success {
                content: String::new(),
            },
            truncated: false,
            redactions: 0,
            artifact: None,
            page: None,
            elapsed,
            attempts,
            batch,
        };
        match result {
            Ok(output) => {
                let shaped = output::shape(
                    &output,
                    max_chars,
                    &self.shared.redactor,
                    self.shared.artifacts.as_ref(),
                );
                observation.outcome = Outcome::Success {
                    content: shaped.content,
                };
                observation.truncated = shaped.truncated;
                observation.redactions = shaped.redactions;
                observation.artifact = shaped.artifact;
                observation.page = output.page().cloned();
            }
            Err(error) => {
                let (error, redactions) = redact_error(error, &self.shared.redactor);
                observation.redactions = redactions;
                observation.outcome = Outcome::Error { error };
            }
        }
        observation
    }

    /// The observation of a call rejected before it ran.
    fn rejected(&self, call: &ToolCall, error: ToolError) -> Observation {
        let (error, redactions) = redact_error(error, &self.shared.redactor);
        Observation {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            tool_version: self
                .shared
                .registry
                .get(&call.name)
                .and_then(|tool| tool.spec().version().map(str::to_owned)),
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

/// Adds, to an `invalid_arguments` error about one field, that field's schema: what the model
/// needs to correct the call.
fn with_schema_fragment(error: ToolError, schema: &Value) -> ToolError {
    if error.kind() != &ErrorKind::InvalidArguments {
        return error;
    }
    let mut details = error
        .details()
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    let field = details
        .get("field")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| missing_field(error.message()));
    let fragment = field
        .as_deref()
        .and_then(|field| fragment_at(schema, field))
        .unwrap_or_else(|| schema.clone());
    if let Value::Object(map) = &mut details {
        if let Some(field) = field {
            map.entry("field").or_insert(Value::String(field));
        }
        map.insert("schema".to_owned(), fragment);
    }
    error.with_details(details)
}

fn missing_field(message: &str) -> Option<String> {
    let rest = message.strip_prefix("missing field `")?;
    rest.split('`').next().map(str::to_owned)
}

/// The schema of the property at `path` (`filter.status`, `items[2].sku`), following local
/// `$ref`s.
fn fragment_at(schema: &Value, path: &str) -> Option<Value> {
    let mut current = schema;
    for segment in path.split('.') {
        let name = segment.split('[').next().unwrap_or(segment);
        current = resolve(schema, current);
        current = current.get("properties")?.get(name)?;
        if segment.contains('[') {
            current = resolve(schema, current).get("items")?;
        }
    }
    Some(resolve(schema, current).clone())
}

fn resolve<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..8 {
        let Some(reference) = current.get("$ref").and_then(Value::as_str) else {
            break;
        };
        match reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
        {
            Some(target) => current = target,
            None => break,
        }
    }
    current
}

impl<D: Any + Send + Sync> ToolInvoker for Shared<D> {
    fn invoke(
        &self,
        parent: &CallContext,
        tool_name: &str,
        args: Value,
    ) -> tool_core::BoxFuture<'static, Result<ToolOutput, ToolError>> {
        let prepared = self.prepare_nested(parent, tool_name, args);
        Box::pin(async move {
            let (future_parts, policy) = prepared?;
            let NestedCall {
                tool,
                context,
                arguments,
                timeout,
                first,
            } = future_parts;
            let mut first = Some(first);
            let outcome = shells::run(&policy, timeout, |_| {
                first.take().unwrap_or_else(|| {
                    match contain::prepare(|| {
                        tool.prepare(arguments.as_tool_args(), context.clone())
                    }) {
                        Ok(future) => future,
                        Err(error) => Box::pin(std::future::ready(Err(error))),
                    }
                })
            })
            .await;
            outcome.result
        })
    }
}

struct NestedCall {
    tool: Arc<dyn Tool>,
    context: CallContext,
    arguments: Arguments,
    timeout: Option<Duration>,
    first: ToolFuture,
}

impl<D: Any + Send + Sync> Shared<D> {
    /// Plans a call a tool makes through `RunContext::call_tool`: the same lookup, limits and
    /// preparation as a call the model makes, one level deeper.
    fn prepare_nested(
        &self,
        parent: &CallContext,
        tool_name: &str,
        args: Value,
    ) -> Result<(NestedCall, RetryPolicy), ToolError> {
        if parent.depth() >= self.limits.max_call_depth {
            return Err(ToolError::custom(
                "call_depth_exceeded",
                format!(
                    "tool `{}` called `{tool_name}` {} levels deep; the limit is {}",
                    parent.tool_name(),
                    parent.depth() + 1,
                    self.limits.max_call_depth
                ),
            ));
        }
        let Some(tool) = self.registry.get(tool_name) else {
            return Err(self.registry.unknown_tool(tool_name));
        };
        let tool = Arc::clone(tool);
        let arguments = Arguments::Value(args);
        limits::check_arguments(&arguments, &self.limits)?;
        let context = parent.nested(format!("{}/{tool_name}", parent.call_id()), tool_name);
        let first = contain::prepare(|| tool.prepare(arguments.as_tool_args(), context.clone()))
            .map_err(|error| with_schema_fragment(error, tool.spec().input_schema()))?;
        let timeout = tool.spec().timeout().or(self.limits.default_timeout);
        Ok((
            NestedCall {
                tool,
                context,
                arguments,
                timeout,
                first,
            },
            self.retry.clone(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fragments_follow_paths_and_refs() {
        let schema = json!({
            "type": "object",
            "properties": {
                "filter": {"$ref": "#/$defs/Filter"},
                "items": {"type": "array", "items": {"$ref": "#/$defs/Item"}}
            },
            "$defs": {
                "Filter": {"type": "object", "properties": {"status": {"enum": ["open", "closed"]}}},
                "Item": {"type": "object", "properties": {"sku": {"type": "string"}}}
            }
        });
        assert_eq!(
            fragment_at(&schema, "filter.status"),
            Some(json!({"enum": ["open", "closed"]}))
        );
        assert_eq!(
            fragment_at(&schema, "items[2].sku"),
            Some(json!({"type": "string"}))
        );
        assert_eq!(fragment_at(&schema, "nope"), None);
    }
}
