//! Google Gemini: `functionDeclarations`, `functionCall` parts and `functionResponse` parts.
//!
//! ```
//! # use tool_runtime::providers::{gemini, Target};
//! # use tool_runtime::{Runtime, Session, tool, tools};
//! # pub struct Deps;
//! /// Tracks a parcel.
//! #[tool(read_only)]
//! fn parcel_weight(order_id: String) -> String { order_id }
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runtime = Runtime::builder(Deps).inventory(false).tools(tools![parcel_weight]).build()?;
//! let session = Session::new("s-1");
//! let catalog = runtime.lowered_catalog(&session, Target::Gemini)?;
//! let tools = gemini::tools(&catalog); // the request's `tools`
//! # assert!(tools[0]["functionDeclarations"][0].get("parametersJsonSchema").is_some());
//! let response = serde_json::json!({"candidates": [{"content": {"role": "model", "parts": [
//!     {"functionCall": {"name": "parcel_weight", "args": {"order_id": "A-1"}}}
//! ]}}]});
//! let calls = gemini::calls_from_response(&response)?;
//! let report = runtime.execute(&session, &calls).await;
//! let content = gemini::function_responses(&report); // the next `user` content
//! # assert_eq!(content["parts"][0]["functionResponse"]["response"]["output"], "A-1");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

use serde_json::{Map, Value, json};

use super::{LoweredCatalog, ProviderError, SYNTHESIZED_ID, Target};
use crate::{Outcome, ToolCall, TurnReport};

/// The catalog as a request's `tools`: one entry holding every `functionDeclarations` item,
/// each with `parametersJsonSchema` (for [`Target::Gemini`]) or `parameters` (for
/// [`Target::GeminiParameters`]); a tool without parameters has neither.
pub fn tools(catalog: &LoweredCatalog) -> Vec<Value> {
    let field = match catalog.target() {
        Target::GeminiParameters => "parameters",
        _ => "parametersJsonSchema",
    };
    let declarations: Vec<Value> = catalog
        .tools()
        .map(|tool| {
            let mut declaration = Map::new();
            declaration.insert("name".into(), Value::String(tool.name.clone()));
            declaration.insert(
                "description".into(),
                Value::String(tool.description.clone()),
            );
            if let Some(parameters) = &tool.parameters {
                declaration.insert(field.into(), parameters.clone());
            }
            Value::Object(declaration)
        })
        .collect();
    vec![json!({ "functionDeclarations": declarations })]
}

/// The tool calls of a `generateContent` response (or of one `content`, or its `parts`): its
/// `functionCall` parts, in order. Gemini may give no id: each is then given one from the
/// response's `responseId` and its position (`synthesized_call_<responseId>_0`, ...: the same
/// for the same answer), left out again when the result is rendered.
pub fn calls_from_response(response: &Value) -> Result<Vec<ToolCall>, ProviderError> {
    let parts = match response.get("candidates") {
        // A response: its first candidate's parts. A candidate stopped before it wrote any
        // (`finishReason` SAFETY, MAX_TOKENS, ...) and a prompt refused outright (only
        // `promptFeedback`) have no calls.
        Some(Value::Array(candidates)) => match candidates.first() {
            Some(candidate) => candidate.pointer("/content/parts").unwrap_or(&Value::Null),
            None => return Ok(Vec::new()),
        },
        Some(_) => return Err(ProviderError::shape("`candidates` is not an array")),
        None if response.get("promptFeedback").is_some() => return Ok(Vec::new()),
        // One content, or its parts.
        None => response.get("parts").unwrap_or(response),
    };
    let parts = match parts {
        Value::Array(parts) => parts,
        Value::Null => return Ok(Vec::new()),
        _ => return Err(ProviderError::shape("`parts` is not an array")),
    };
    // Ids Gemini did not give are made from the response's id, when it has one, and the
    // call's position: the same answer gives the same ids, another answer others.
    let prefix = response
        .get("responseId")
        .and_then(Value::as_str)
        .map(|id| format!("{id}_"))
        .unwrap_or_default();
    parts
        .iter()
        .filter_map(|part| part.get("functionCall"))
        .enumerate()
        .map(|(index, call)| {
            let name = call.get("name").and_then(Value::as_str).ok_or_else(|| {
                ProviderError::shape(format!("functionCall {index} has no string `name`"))
            })?;
            let id = call
                .get("id")
                .and_then(Value::as_str)
                .map_or_else(|| format!("{SYNTHESIZED_ID}{prefix}{index}"), str::to_owned);
            let args = call.get("args").cloned().unwrap_or(Value::Null);
            Ok(ToolCall::new(id, name, args))
        })
        .collect()
}

/// The report as the `user` content answering the calls: one `functionResponse` part per call,
/// in call order, `{name, id?, response: {"output": ...}}` or `{"error": {kind, message,
/// hint}}`. An output that is a JSON object is given as that object, other output as text.
pub fn function_responses(report: &TurnReport) -> Value {
    let parts: Vec<Value> = report
        .observations()
        .iter()
        .map(|observation| {
            let response = match observation.outcome() {
                Outcome::Success { content } => {
                    let output = match serde_json::from_str::<Value>(content) {
                        Ok(object @ Value::Object(_)) => object,
                        _ => Value::String(content.clone()),
                    };
                    json!({ "output": output })
                }
                Outcome::Error { error } => json!({ "error": error }),
            };
            let mut function_response = Map::new();
            function_response.insert("name".into(), Value::String(observation.tool().into()));
            if !observation.call_id().starts_with(SYNTHESIZED_ID) {
                function_response.insert("id".into(), Value::String(observation.call_id().into()));
            }
            function_response.insert("response".into(), response);
            json!({ "functionResponse": function_response })
        })
        .collect();
    json!({ "role": "user", "parts": parts })
}
