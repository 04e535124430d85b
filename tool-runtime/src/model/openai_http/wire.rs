//! The Chat Completions wire shape: the request's body, and the answer read back into a
//! [`ModelResponse`]. The tools and the tool calls go through [`openai`]'s helpers, so a
//! catalog and a call read here are read as they are everywhere else.

use serde_json::{Map, Value, json};

use super::Failure;
use crate::model::{Message, ModelRequest, ModelResponse, Usage};
use crate::providers::{LoweredCatalog, openai};
use crate::{Arguments, ToolCall};

/// How much of a body an error message quotes, in characters.
const EXCERPT_CHARS: usize = 200;

/// What the request asks for besides the conversation.
pub(super) struct BodyOptions<'a> {
    pub(super) model: &'a str,
    pub(super) temperature: Option<f32>,
    pub(super) max_tokens: Option<u32>,
    pub(super) stream: bool,
}

/// The body of `POST {base}/chat/completions`.
pub(super) fn request_body(request: &ModelRequest<'_>, options: &BodyOptions<'_>) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(options.model));
    body.insert(
        "messages".into(),
        request.messages.iter().map(message).collect(),
    );
    // OpenAI refuses an empty `tools` array: no tools, no field.
    if !request.tools.is_empty() {
        body.insert("tools".into(), openai::chat_tools(request.tools).into());
    }
    if let Some(schema) = request.response_schema {
        body.insert(
            "response_format".into(),
            json!({
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": true},
            }),
        );
    }
    if let Some(temperature) = options.temperature.and_then(short_number) {
        body.insert("temperature".into(), temperature);
    }
    if let Some(max_tokens) = options.max_tokens {
        body.insert("max_tokens".into(), max_tokens.into());
    }
    if options.stream {
        body.insert("stream".into(), true.into());
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Value::Object(body)
}

/// `number` as the JSON number it was written as (`0.2`, not `0.20000000298023224`, which
/// converting the `f32` to `f64` gives); nothing for a NaN or an infinity.
fn short_number(number: f32) -> Option<Value> {
    if !number.is_finite() {
        return None;
    }
    let written: f64 = number.to_string().parse().ok()?;
    serde_json::Number::from_f64(written).map(Value::Number)
}

/// One message in the Chat Completions shape.
fn message(message: &Message) -> Value {
    match message {
        Message::System { text } => json!({"role": "system", "content": text}),
        Message::User { text } => json!({"role": "user", "content": text}),
        Message::Assistant { text, calls } => {
            let mut rendered = json!({"role": "assistant", "content": text});
            // OpenAI refuses an empty `tool_calls` array as well.
            if !calls.is_empty() {
                rendered["tool_calls"] = calls.iter().map(tool_call).collect();
            }
            rendered
        }
        Message::Tool {
            call_id, content, ..
        } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
    }
}

/// A call as the assistant message that made it carries it: the arguments as JSON text.
fn tool_call(call: &ToolCall) -> Value {
    let arguments = match &call.arguments {
        Arguments::Json(text) => text.clone(),
        Arguments::Value(value) => value.to_string(),
    };
    json!({
        "id": &*call.id,
        "type": "function",
        "function": {"name": call.name, "arguments": arguments},
    })
}

/// The answer of a request that did not stream: a chat completion.
pub(super) fn completion(body: &[u8], catalog: &LoweredCatalog) -> Result<ModelResponse, Failure> {
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        Failure::malformed(format!(
            "answered with a body that is not JSON (expected a chat completion): {error}; {}",
            begins(body)
        ))
    })?;
    let Some(message) = value
        .pointer("/choices/0/message")
        .filter(|m| m.is_object())
    else {
        // Some servers answer an error with status 200.
        if let Some(error) = value.get("error").filter(|error| !error.is_null()) {
            return Err(Failure::malformed(format!(
                "answered an error instead of a chat completion: {}",
                error_text(error)
            )));
        }
        return Err(Failure::malformed(format!(
            "answered without `choices[0].message` (expected a chat completion); {}",
            begins(body)
        )));
    };
    response(message, value.get("usage"), catalog)
}

/// The response an assistant message and a `usage` object make.
pub(super) fn response(
    message: &Value,
    usage: Option<&Value>,
    catalog: &LoweredCatalog,
) -> Result<ModelResponse, Failure> {
    let calls = openai::calls_from_chat(message, catalog).map_err(|error| {
        Failure::malformed(format!(
            "answered tool calls in no documented shape: {error}"
        ))
    })?;
    Ok(ModelResponse {
        text: text(message)?,
        calls,
        usage: usage.and_then(tokens),
    })
}

/// The text of an assistant message: its `content` (a string, or text parts), else its
/// `refusal` (what the model said instead of an answer in the asked-for shape). Empty text
/// is no text: servers send `""` beside tool calls.
fn text(message: &Value) -> Result<Option<String>, Failure> {
    let content = match message.get("content") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(Value::Array(parts)) => Some(
            parts
                .iter()
                .filter_map(|part| part.get("text").and_then(Value::as_str))
                .collect(),
        ),
        Some(other) => {
            return Err(Failure::malformed(format!(
                "answered a message whose `content` is neither text nor parts: {}",
                excerpt(&other.to_string())
            )));
        }
    };
    let refusal = message
        .get("refusal")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(content
        .filter(|text| !text.is_empty())
        .or(refusal.filter(|text| !text.is_empty())))
}

/// The tokens a `usage` object reports (`prompt_tokens`, `completion_tokens`).
fn tokens(usage: &Value) -> Option<Usage> {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64);
    match (count("prompt_tokens"), count("completion_tokens")) {
        (None, None) => None,
        (input, output) => Some(Usage::new(input.unwrap_or(0), output.unwrap_or(0))),
    }
}

/// What an error body says: OpenAI's `{"error": {"message", "code"}}`, or the shapes other
/// servers use (`{"error": "..."}`, `{"message": "..."}`, `{"detail": "..."}`), else the
/// body's beginning.
pub(super) fn error_message(body: &[u8]) -> String {
    if body.iter().all(u8::is_ascii_whitespace) {
        return "(the body is empty)".to_owned();
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(value) => {
            let said = value
                .get("error")
                .filter(|error| !error.is_null())
                .map(error_text)
                .or_else(|| {
                    ["message", "detail"]
                        .iter()
                        .find_map(|key| value.get(*key).and_then(Value::as_str))
                        .map(str::to_owned)
                });
            said.unwrap_or_else(|| excerpt(&String::from_utf8_lossy(body)))
        }
        Err(_) => excerpt(&String::from_utf8_lossy(body)),
    }
}

/// An `error` member as a sentence: its message, with its code or type when it has one.
pub(super) fn error_text(error: &Value) -> String {
    let Some(message) = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
    else {
        return excerpt(&error.to_string());
    };
    let label = ["code", "type"]
        .iter()
        .find_map(|key| Some((*key, error.get(*key).and_then(Value::as_str)?)));
    match label {
        Some((key, label)) => format!("{} ({key} `{label}`)", excerpt(message)),
        None => excerpt(message),
    }
}

/// `the body begins `...``, for a body that is not what was expected.
fn begins(body: &[u8]) -> String {
    if body.is_empty() {
        return "the body is empty".to_owned();
    }
    format!(
        "the body begins `{}`",
        excerpt(&String::from_utf8_lossy(body))
    )
}

/// The first [`EXCERPT_CHARS`] characters of `text`, lines joined, `…` where it was cut.
pub(super) fn excerpt(text: &str) -> String {
    let text = text.trim();
    let mut short: String = text
        .chars()
        .take(EXCERPT_CHARS)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if text.chars().nth(EXCERPT_CHARS).is_some() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_written() {
        assert_eq!(short_number(0.2), Some(json!(0.2)));
        assert_eq!(short_number(1.0), Some(json!(1.0)));
        assert_eq!(short_number(f32::NAN), None);
    }

    #[test]
    fn error_bodies() {
        let openai = br#"{"error":{"message":"Invalid model","type":"invalid_request_error","code":"model_not_found"}}"#;
        assert_eq!(
            error_message(openai),
            "Invalid model (code `model_not_found`)"
        );
        assert_eq!(error_message(br#"{"error":"busy"}"#), "busy");
        assert_eq!(
            error_message(br#"{"object":"error","message":"no such model"}"#),
            "no such model"
        );
        assert_eq!(error_message(b"<html>\nBad\n</html>"), "<html> Bad </html>");
        assert_eq!(error_message(b" "), "(the body is empty)");
    }

    #[test]
    fn excerpts_cut_at_characters() {
        let long = "é".repeat(300);
        let short = excerpt(&long);
        assert_eq!(short.chars().count(), EXCERPT_CHARS + 1);
        assert!(short.ends_with('…'));
        assert_eq!(excerpt("short"), "short");
    }
}
