//! MCP: the entries of a `tools/list` result.

use std::any::Any;

use serde_json::{Map, Value, json};
use tool_core::ToolSpec;

use super::{LoweredTool, LoweringError, Target};
use crate::{Runtime, Session};

/// The tools `session` is shown, as the `tools` of a `tools/list` result, sorted by name:
/// `name`, `title` (when the tool has one), `description`, `inputSchema`, `outputSchema` (when
/// the tool's output is an object), and `annotations` with every hint set explicitly from
/// the declaration (MCP reads a missing `destructiveHint` as destructive and a missing
/// `openWorldHint` as open-world).
pub fn tools<D: Any + Send + Sync>(
    runtime: &Runtime<D>,
    session: &Session,
) -> Result<Vec<Value>, LoweringError> {
    let catalog = runtime.lowered_catalog(session, Target::Mcp)?;
    Ok(runtime
        .catalog(session)
        .into_iter()
        .zip(catalog.tools())
        .map(|(spec, lowered)| tool_entry(spec, lowered))
        .collect())
}

/// One `tools/list` entry: `spec`'s declaration with its schema lowered for MCP.
pub fn tool_entry(spec: &ToolSpec, lowered: &LoweredTool) -> Value {
    let mut entry = Map::new();
    entry.insert("name".into(), Value::String(lowered.name.clone()));
    if let Some(title) = spec.title() {
        entry.insert("title".into(), Value::String(title.to_owned()));
    }
    entry.insert(
        "description".into(),
        Value::String(lowered.description.clone()),
    );
    entry.insert(
        "inputSchema".into(),
        lowered
            .parameters
            .clone()
            .unwrap_or_else(super::no_parameters),
    );
    if let Some(output) = spec.output_schema().and_then(output_schema) {
        entry.insert("outputSchema".into(), output);
    }
    let hints = spec.hints();
    let mut annotations = Map::new();
    if let Some(title) = spec.title() {
        annotations.insert("title".into(), Value::String(title.to_owned()));
    }
    annotations.insert("readOnlyHint".into(), spec.execution().read_only.into());
    annotations.insert(
        "destructiveHint".into(),
        (!spec.execution().read_only && hints.destructive).into(),
    );
    annotations.insert("idempotentHint".into(), hints.idempotent.into());
    annotations.insert("openWorldHint".into(), hints.open_world.into());
    entry.insert("annotations".into(), Value::Object(annotations));
    json!(entry)
}

/// A tool's output schema as MCP takes it: an object root (a tool returning a number or a
/// string has none), in the portable spelling strict clients check
/// ([`super::lower::mcp_output_schema`]).
fn output_schema(schema: &Value) -> Option<Value> {
    let object = schema.as_object()?;
    if object.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    Some(super::lower::mcp_output_schema(schema))
}
