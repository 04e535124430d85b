//! Planning one call: look the tool up, check the argument limits, parse and validate the
//! arguments and build the context, before anything runs.

use std::any::Any;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tool_core::{CallContext, ErrorKind, SessionContext, Tool, ToolError, ToolFuture, ToolInvoker};

use crate::call::{Arguments, Session, ToolCall};
use crate::limits::{self, Limits};
use crate::runtime::Shared;
use crate::shells::contain;

/// One call, ready to run: the tool and what the scheduler and the shells need to know. Its
/// prepared first attempt travels beside it (a future is not `Sync`; this is shared while the
/// call runs).
pub(crate) struct Planned<'a> {
    /// The call's position in its turn (0 for a nested call).
    pub(crate) index: usize,
    pub(crate) call_id: &'a Arc<str>,
    pub(crate) arguments: &'a Arguments,
    pub(crate) tool: &'a dyn Tool,
    /// The tool's name, shared with the observation.
    pub(crate) name: &'a Arc<str>,
    /// The tool's version, shared with the observation.
    pub(crate) version: Option<&'a Arc<str>>,
    /// The call's context: its own when the tool takes one, the turn's anonymous one otherwise.
    pub(crate) context: PlannedContext<'a>,
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
}

impl<'a> CallRef<'a> {
    pub(crate) fn of(index: usize, call: &'a ToolCall) -> Self {
        Self {
            index,
            id: &call.id,
            name: &call.name,
            arguments: &call.arguments,
        }
    }
}

impl Planned<'_> {
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
                .prepare(self.arguments.as_tool_args(), self.context.get())
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
        SessionContext::new(
            Arc::clone(&self.deps),
            session.shared_id(),
            Some(Arc::clone(self) as Arc<dyn ToolInvoker>),
        )
    }

    /// Plans one call, top-level or nested: look the tool up, check the argument limits, parse
    /// and validate the arguments. `context` gives the call its context once the tool is known.
    /// An error is the call's answer: it runs in no batch.
    pub(crate) fn plan<'a>(
        &'a self,
        call: CallRef<'a>,
        context: impl FnOnce(&dyn Tool) -> PlannedContext<'a>,
    ) -> Result<(Planned<'a>, ToolFuture), ToolError> {
        let Some(found) = self.registry.lookup(call.name) else {
            return Err(self.registry.unknown_tool(call.name));
        };
        let tool = found.tool.as_ref();
        limits::check_arguments(call.arguments, &self.limits)?;
        let context = context(tool);
        let first = contain::prepare(|| tool.prepare(call.arguments.as_tool_args(), context.get()))
            .map_err(|error| with_schema_fragment(error, tool.spec().input_schema()))?;
        let plan = Planned {
            index: call.index,
            call_id: call.id,
            arguments: call.arguments,
            name: found.name,
            version: found.version,
            context,
            tool,
        };
        Ok((plan, first))
    }
}

/// Adds, to an `invalid_arguments` error about one field, that field's schema: what the model
/// needs to correct the call.
pub(crate) fn with_schema_fragment(error: ToolError, schema: &Value) -> ToolError {
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
