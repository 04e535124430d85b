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
use crate::arguments::follow;
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
/// (the parameter left out: its default). A `null` stands for "left out" where the canonical
/// schema makes the property optional and does not take `null` itself; the arguments are read
/// alongside that schema, so nested objects, lists, recursive types and the variant of a
/// union the value names are all covered. Arguments that are not JSON are left as they are,
/// for the runtime to answer `invalid_arguments`.
fn calls_with_nulls_mapped(calls: Vec<ToolCall>, catalog: &LoweredCatalog) -> Vec<ToolCall> {
    calls
        .into_iter()
        .map(|mut call| {
            let Some(canonical) = catalog
                .get(&call.name)
                .and_then(|tool| tool.canonical.clone())
            else {
                return call;
            };
            let mut value = match &call.arguments {
                Arguments::Json(text) => match serde_json::from_str::<Value>(text) {
                    Ok(value) => value,
                    Err(_) => return call,
                },
                Arguments::Value(value) => value.clone(),
            };
            if remove_strict_nulls(&mut value, &canonical, &canonical, 0) {
                call.arguments = Arguments::Value(value);
            }
            call
        })
        .collect()
}

/// How deep the arguments are read for strict nulls (the runtime refuses deeper ones anyway).
const MAX_NULL_DEPTH: usize = 128;

/// Removes the strict `null`s of `value`, read with `schema` (of `root`); whether it removed
/// any.
fn remove_strict_nulls(value: &mut Value, schema: &Value, root: &Value, depth: usize) -> bool {
    if depth > MAX_NULL_DEPTH {
        return false;
    }
    let schema = follow(root, schema);
    match value {
        Value::Object(object) => {
            let shapes = object_shapes(root, schema, object, 0);
            if shapes.is_empty() {
                return false;
            }
            let left_out: Vec<String> = object
                .iter()
                .filter(|(key, entry)| {
                    entry.is_null() && {
                        let mut holders = shapes.iter().filter_map(|shape| {
                            shape
                                .properties
                                .get(key.as_str())
                                .map(|property| (shape, property))
                        });
                        let mut any = false;
                        let all = holders.all(|(shape, property)| {
                            any = true;
                            !shape.required.contains(&key.as_str())
                                && !accepts_null(root, property, 0)
                        });
                        any && all
                    }
                })
                .map(|(key, _)| key.clone())
                .collect();
            let mut removed = !left_out.is_empty();
            for key in &left_out {
                object.shift_remove(key);
            }
            for (key, entry) in object.iter_mut() {
                if let Some(property) = shapes
                    .iter()
                    .find_map(|shape| shape.properties.get(key.as_str()).copied())
                {
                    removed |= remove_strict_nulls(entry, property, root, depth + 1);
                }
            }
            removed
        }
        Value::Array(items) => {
            let Some(item_schema) = array_items(root, schema, 0) else {
                return false;
            };
            items.iter_mut().fold(false, |removed, item| {
                remove_strict_nulls(item, item_schema, root, depth + 1) | removed
            })
        }
        _ => false,
    }
}

/// An object schema's properties and required names.
struct Shape<'s> {
    properties: std::collections::HashMap<&'s str, &'s Value>,
    required: Vec<&'s str>,
}

/// The object shapes `schema` allows that fit `object`: itself, or the alternatives of a
/// union whose `const` properties `object` matches (an `allOf` adds its parts' properties).
fn object_shapes<'s>(
    root: &'s Value,
    schema: &'s Value,
    object: &Map<String, Value>,
    depth: usize,
) -> Vec<Shape<'s>> {
    if depth > 16 {
        return Vec::new();
    }
    let schema = follow(root, schema);
    let mut shapes = Vec::new();
    if schema.get("properties").is_some() || schema.get("allOf").is_some() {
        let mut shape = Shape {
            properties: std::collections::HashMap::new(),
            required: Vec::new(),
        };
        add_properties(root, schema, &mut shape, 0);
        let fits = shape.properties.iter().all(|(key, property)| {
            let property = follow(root, property);
            match (property.get("const"), object.get(*key)) {
                (Some(tag), Some(given)) => tag == given,
                (Some(_), None) => !shape.required.contains(key),
                _ => true,
            }
        });
        if fits {
            shapes.push(shape);
        }
    }
    for keyword in ["anyOf", "oneOf"] {
        for alternative in schema
            .get(keyword)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            shapes.extend(object_shapes(root, alternative, object, depth + 1));
        }
    }
    shapes
}

/// Adds the properties and required names of `schema` and of its `allOf` parts to `shape`.
fn add_properties<'s>(root: &'s Value, schema: &'s Value, shape: &mut Shape<'s>, depth: usize) {
    if depth > 16 {
        return;
    }
    let schema = follow(root, schema);
    if let Some(Value::Object(properties)) = schema.get("properties") {
        for (name, property) in properties {
            shape.properties.insert(name.as_str(), property);
        }
    }
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(name) = name.as_str() {
            shape.required.push(name);
        }
    }
    for part in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        add_properties(root, part, shape, depth + 1);
    }
}

/// The items' schema of an array schema (or of the array alternative of a nullable one).
fn array_items<'s>(root: &'s Value, schema: &'s Value, depth: usize) -> Option<&'s Value> {
    if depth > 16 {
        return None;
    }
    let schema = follow(root, schema);
    if let Some(items) = schema.get("items").filter(|items| items.is_object()) {
        return Some(items);
    }
    ["anyOf", "oneOf"].iter().find_map(|keyword| {
        schema
            .get(*keyword)
            .and_then(Value::as_array)?
            .iter()
            .find_map(|alternative| array_items(root, alternative, depth + 1))
    })
}

/// Whether `schema` takes `null`.
fn accepts_null(root: &Value, schema: &Value, depth: usize) -> bool {
    if depth > 16 {
        return true;
    }
    let schema = follow(root, schema);
    let Value::Object(object) = schema else {
        // `true`: anything; `false`: nothing.
        return schema.as_bool().unwrap_or(true);
    };
    let typed = match object.get("type") {
        None => true,
        Some(Value::String(ty)) => ty == "null",
        Some(Value::Array(types)) => types.iter().any(|ty| ty == "null"),
        Some(_) => false,
    };
    let listed = match (object.get("enum"), object.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().any(Value::is_null),
        (_, Some(value)) => value.is_null(),
        _ => true,
    };
    let unions = ["anyOf", "oneOf"]
        .iter()
        .filter_map(|keyword| object.get(*keyword).and_then(Value::as_array))
        .all(|alternatives| {
            alternatives
                .iter()
                .any(|alternative| accepts_null(root, alternative, depth + 1))
        });
    let parts = object
        .get("allOf")
        .and_then(Value::as_array)
        .is_none_or(|parts| parts.iter().all(|part| accepts_null(root, part, depth + 1)));
    typed && listed && unions && parts
}
