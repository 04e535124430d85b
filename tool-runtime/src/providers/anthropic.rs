//! Anthropic: the Messages API's `tools`, `tool_use` blocks and `tool_result` blocks.
//!
//! ```
//! # use tool_runtime::providers::{anthropic, Target};
//! # use tool_runtime::{Runtime, Session, tool, tools};
//! # pub struct Deps;
//! /// Tracks a parcel.
//! #[tool(read_only)]
//! fn parcel_eta(order_id: String) -> String { order_id }
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runtime = Runtime::builder(Deps).inventory(false).tools(tools![parcel_eta]).build()?;
//! let session = Session::new("s-1");
//! let catalog = runtime.lowered_catalog(&session, Target::Anthropic)?;
//! let tools = anthropic::tools(&catalog); // the request's `tools`
//! # assert!(tools[0].get("input_schema").is_some());
//! let response = serde_json::json!({"role": "assistant", "content": [
//!     {"type": "text", "text": "Let me look."},
//!     {"type": "tool_use", "id": "toolu_1", "name": "parcel_eta", "input": {"order_id": "A-1"}}
//! ]});
//! let calls = anthropic::calls_from_message(&response)?;
//! let report = runtime.execute(&session, &calls).await;
//! let message = anthropic::tool_results(&report); // the next `user` message
//! # assert_eq!(message["content"][0]["tool_use_id"], "toolu_1");
//! # assert_eq!(message["content"][0]["is_error"], false);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use std::any::Any;

use serde_json::{Value, json};

use super::{LoweredCatalog, LoweringError, ProviderError, Target};
use crate::{Runtime, Session, ToolCall, TurnReport};

/// The catalog as the `tools` of a Messages request: `{name, description, input_schema}`
/// each, with `"strict": true` for a catalog lowered for [`Target::AnthropicStrict`].
pub fn tools(catalog: &LoweredCatalog) -> Vec<Value> {
    let strict = catalog.target() == Target::AnthropicStrict;
    catalog.tools().map(|tool| entry(tool, strict)).collect()
}

/// The `tools` of a Messages request for `session`, with `strict: true` (and the strict
/// lowering) on the tools `strict` picks by name and the plain lowering on the others:
/// Anthropic compiles a grammar per strict tool, and a request with many fails ("compiled
/// grammar is too large"), so strictness is chosen per tool. A picked tool whose schema the
/// strict subset cannot express is the error.
pub fn tools_with_strict<D: Any + Send + Sync>(
    runtime: &Runtime<D>,
    session: &Session,
    strict: impl Fn(&str) -> bool,
) -> Result<Vec<Value>, LoweringError> {
    let plain = runtime.lowered_catalog(session, Target::Anthropic)?;
    plain
        .tools()
        .map(|tool| {
            if !strict(&tool.name) {
                return Ok(entry(tool, false));
            }
            match runtime.lowered_tool(&tool.name, Target::AnthropicStrict) {
                Some(lowered) => lowered.map(|lowered| entry(&lowered, true)),
                None => Ok(entry(tool, false)),
            }
        })
        .collect()
}

/// One `tools` entry.
fn entry(tool: &super::LoweredTool, strict: bool) -> Value {
    let mut entry = json!({
        "name": tool.name,
        "description": tool.description,
        "input_schema": tool.parameters.clone().unwrap_or_else(super::no_parameters),
    });
    if strict {
        entry["strict"] = Value::Bool(true);
    }
    entry
}

/// The tool calls of an assistant message (or of the whole response: its `content`): its
/// `tool_use` blocks, in order. Their `input` is taken as the model gave it.
pub fn calls_from_message(message: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    let blocks = match message.get("content") {
        Some(Value::Array(blocks)) => blocks,
        // A plain text answer.
        Some(Value::String(_)) | None => return Ok(Vec::new()),
        Some(_) => return Err(ProviderError::shape("`content` is not an array")),
    };
    blocks
        .iter()
        .filter(|block| block.get("type").and_then(Value::as_str) == Some("tool_use"))
        .enumerate()
        .map(|(index, block)| {
            let name = block.get("name").and_then(Value::as_str).ok_or_else(|| {
                ProviderError::shape(format!("tool_use block {index} has no string `name`"))
            })?;
            // Anthropic gives every block an id, and its `tool_result` must name it.
            let id = block.get("id").and_then(Value::as_str).ok_or_else(|| {
                ProviderError::shape(format!("tool_use block {index} has no string `id`"))
            })?;
            let input = block.get("input").cloned().unwrap_or(Value::Null);
            Ok(ToolCall::new(id, name, input))
        })
        .collect()
}

/// The report as the `user` message that answers the calls: one `tool_result` block per call,
/// in call order, `is_error` set, an error's content `{"error": {"kind", "message", ...}}`
/// (with a `hint` where the runtime has one).
pub fn tool_results(report: &TurnReport) -> Value {
    let blocks: Vec<Value> = report
        .observations()
        .iter()
        .map(|observation| {
            json!({
                "type": "tool_result",
                "tool_use_id": observation.call_id(),
                "content": observation.text_for_model(),
                "is_error": !observation.is_success(),
            })
        })
        .collect();
    json!({ "role": "user", "content": blocks })
}
