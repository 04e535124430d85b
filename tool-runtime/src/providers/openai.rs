//! OpenAI: the Chat Completions and Responses APIs, strict function calling.
//!
//! ```
//! # use tool_runtime::providers::{openai, Target};
//! # use tool_runtime::{Runtime, Session, tool, tools};
//! # pub struct Deps;
//! /// Tracks a parcel.
//! #[tool(read_only)]
//! fn track_parcel(order_id: String, verbose: Option<bool>) -> String { order_id }
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runtime = Runtime::builder(Deps).inventory(false).tools(tools![track_parcel]).build()?;
//! let session = Session::new("s-1");
//! let catalog = runtime.lowered_catalog(&session, Target::OpenAiStrict)?;
//! let tools = openai::chat_tools(&catalog); // the request's `tools`
//! # assert_eq!(tools[0]["function"]["strict"], true);
//! // The assistant message of the response, as the API sent it:
//! let message = serde_json::json!({"role": "assistant", "tool_calls": [{
//!     "id": "call_1", "type": "function",
//!     "function": {"name": "track_parcel", "arguments": "{\"order_id\":\"A-1\",\"verbose\":null}"}
//! }]});
//! let calls = openai::calls_from_chat(&message, &catalog)?;
//! let report = runtime.execute(&session, &calls).await;
//! let messages = openai::chat_messages(&report); // append to the conversation
//! # assert_eq!(messages[0]["tool_call_id"], "call_1");
//! # assert_eq!(messages[0]["content"], "A-1");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use serde_json::{Map, Value, json};

use super::{LoweredCatalog, ProviderError, Target};
use crate::{Arguments, ToolCall, TurnReport};

/// The catalog as the `tools` of a Chat Completions request: `{"type": "function",
/// "function": {name, description, parameters, strict}}` each, `strict` sent explicitly (true
/// for a catalog lowered for [`Target::OpenAiStrict`]).
pub fn chat_tools(catalog: &LoweredCatalog) -> Vec<Value> {
    let strict = catalog.target() == Target::OpenAiStrict;
    catalog
        .tools()
        .map(|tool| {
            json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters.clone().unwrap_or_else(super::no_parameters),
                    "strict": strict,
                }
            })
        })
        .collect()
}

/// The catalog as the `tools` of a Responses request: `{"type": "function", name,
/// description, parameters, strict}` each.
pub fn responses_tools(catalog: &LoweredCatalog) -> Vec<Value> {
    let strict = catalog.target() == Target::OpenAiStrict;
    catalog
        .tools()
        .map(|tool| {
            json!({
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters.clone().unwrap_or_else(super::no_parameters),
                "strict": strict,
            })
        })
        .collect()
}

/// The tool calls of a Chat Completions answer: `message` is the assistant message (or the
/// whole response, whose first choice's message is read). The arguments are passed on as the
/// model wrote them, malformed JSON included (the runtime answers such a call
/// `invalid_arguments`); a `null` for a parameter the strict lowering made nullable is read
/// as the parameter left out. No `tool_calls`: no calls.
pub fn calls_from_chat(
    message: &Value,
    catalog: &LoweredCatalog,
) -> Result<Vec<ToolCall>, ProviderError> {
    let message = message.pointer("/choices/0/message").unwrap_or(message);
    let calls = match message.get("tool_calls") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(calls)) => calls,
        Some(_) => return Err(ProviderError::shape("`tool_calls` is not an array")),
    };
    let calls = calls
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let function = call.get("function").ok_or_else(|| {
                ProviderError::shape(format!("tool call {index} has no `function`"))
            })?;
            let name = string_at(function, "name", index)?;
            // OpenAI gives every call an id, and its answer must name it.
            let id = string_at(call, "id", index)?;
            Ok(ToolCall::new(
                id,
                name,
                arguments_of(function.get("arguments")),
            ))
        })
        .collect::<Result<Vec<_>, ProviderError>>()?;
    Ok(calls_with_nulls_mapped(calls, catalog))
}

/// The tool calls of a Responses answer: the `function_call` items of its `output` (`output`
/// is the response, or its `output` array).
pub fn calls_from_responses(
    output: &Value,
    catalog: &LoweredCatalog,
) -> Result<Vec<ToolCall>, ProviderError> {
    let Value::Array(items) = output.get("output").unwrap_or(output) else {
        return Err(ProviderError::shape("`output` is not an array"));
    };
    let calls = items
        .iter()
        .filter(|item| item.get("type").and_then(Value::as_str) == Some("function_call"))
        .enumerate()
        .map(|(index, item)| {
            let name = string_at(item, "name", index)?;
            let id = string_at(item, "call_id", index)?;
            Ok(ToolCall::new(id, name, arguments_of(item.get("arguments"))))
        })
        .collect::<Result<Vec<_>, ProviderError>>()?;
    Ok(calls_with_nulls_mapped(calls, catalog))
}

/// The report as Chat Completions `tool` messages, one per call in call order:
/// `{"role": "tool", "tool_call_id", "content"}`; an error's content is
/// `{"error": {"kind", "message", ...}}` (with a `hint` where the runtime has one), which the
/// model reads to correct itself.
pub fn chat_messages(report: &TurnReport) -> Vec<Value> {
    report
        .observations()
        .iter()
        .map(|observation| {
            json!({
                "role": "tool",
                "tool_call_id": observation.call_id(),
                "content": observation.text_for_model(),
            })
        })
        .collect()
}

/// The report as Responses `function_call_output` items, one per call in call order.
pub fn responses_items(report: &TurnReport) -> Vec<Value> {
    report
        .observations()
        .iter()
        .map(|observation| {
            json!({
                "type": "function_call_output",
                "call_id": observation.call_id(),
                "output": observation.text_for_model(),
            })
        })
        .collect()
}

/// The arguments as OpenAI sends them: a JSON string (an object, from an older server or a
/// compatible one, is taken as it is).
fn arguments_of(arguments: Option<&Value>) -> Arguments {
    match arguments {
        Some(Value::String(text)) => Arguments::Json(text.clone()),
        Some(Value::Null) | None => Arguments::Json(String::new()),
        Some(value) => Arguments::Value(value.clone()),
    }
}

fn string_at<'v>(value: &'v Value, key: &str, index: usize) -> Result<&'v str, ProviderError> {
    value
        .get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| ProviderError::shape(format!("tool call {index} has no string `{key}`")))
}

/// `calls` with each `null` the model sent for a parameter its lowering made nullable removed
/// (the parameter left out: its default, or `None`). Arguments that are not JSON are left as
/// they are, for the runtime to answer `invalid_arguments`.
fn calls_with_nulls_mapped(calls: Vec<ToolCall>, catalog: &LoweredCatalog) -> Vec<ToolCall> {
    calls
        .into_iter()
        .map(|mut call| {
            let Some(tool) = catalog.get(&call.name) else {
                return call;
            };
            if tool.nullable_optional.is_empty() {
                return call;
            }
            let mut value = match &call.arguments {
                Arguments::Json(text) => match serde_json::from_str::<Value>(text) {
                    Ok(value) => value,
                    Err(_) => return call,
                },
                Arguments::Value(value) => value.clone(),
            };
            let mut removed = false;
            for path in &tool.nullable_optional {
                removed |= remove_null_at(&mut value, path);
            }
            if removed {
                call.arguments = Arguments::Value(value);
            }
            call
        })
        .collect()
}

/// Removes the `null` at `path` (property names; `[]` for every item of an array), wherever
/// it is; whether there was one.
fn remove_null_at(value: &mut Value, path: &[String]) -> bool {
    let Some((first, rest)) = path.split_first() else {
        return false;
    };
    if first == "[]" {
        return match value {
            Value::Array(items) => items
                .iter_mut()
                .fold(false, |removed, item| remove_null_at(item, rest) | removed),
            _ => false,
        };
    }
    let Some(object) = value.as_object_mut() else {
        return false;
    };
    if rest.is_empty() {
        return remove_null(object, first);
    }
    object
        .get_mut(first.as_str())
        .is_some_and(|inner| remove_null_at(inner, rest))
}

fn remove_null(object: &mut Map<String, Value>, key: &str) -> bool {
    if object.get(key).is_some_and(Value::is_null) {
        object.shift_remove(key);
        return true;
    }
    false
}
