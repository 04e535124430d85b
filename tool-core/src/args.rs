//! Parsing a call's arguments into a tool's parameters, with errors that name the field.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;
use crate::tool::ToolArgs;

/// Parses `args` into `A`.
///
/// The fast path deserializes directly; only when that fails is the input parsed again to
/// find the path of the offending field, so a valid call pays nothing for good errors.
/// Inlined into each tool's `prepare`, where the parsed arguments are used.
#[inline(always)]
pub fn parse_args<A: DeserializeOwned>(args: ToolArgs<'_>) -> Result<A, ToolError> {
    match args {
        ToolArgs::Json(text) => {
            // The usual case, an object, goes straight to the parser.
            let text = if text.starts_with('{') {
                text
            } else {
                leading_non_object(text)?
            };
            match serde_json::from_str::<A>(text) {
                Ok(parsed) => Ok(parsed),
                Err(error) if error.is_syntax() || error.is_eof() => Err(malformed_json(&error)),
                Err(_) => {
                    let mut deserializer = serde_json::Deserializer::from_str(text);
                    Err(field_error(serde_path_to_error::deserialize::<_, A>(
                        &mut deserializer,
                    )))
                }
            }
        }
        ToolArgs::Value(Value::Null) => parse_args(ToolArgs::Json("{}")),
        ToolArgs::Value(value) if !value.is_object() => Err(not_an_object(value_kind(&value))),
        ToolArgs::Value(value) => match A::deserialize(&value) {
            Ok(parsed) => Ok(parsed),
            Err(_) => Err(field_error(serde_path_to_error::deserialize::<_, A>(
                &value,
            ))),
        },
    }
}

/// The text to parse when it does not start with `{`: "no arguments" (empty or `null`) is
/// `{}`; plainly not an object is an error; anything else goes to the parser as it is.
fn leading_non_object(text: &str) -> Result<&str, ToolError> {
    let trimmed = text.trim();
    if trimmed.is_empty() || trimmed == "null" {
        return Ok("{}");
    }
    match non_object_json(trimmed) {
        Some(found) => Err(not_an_object(found)),
        None => Ok(text),
    }
}

/// What the JSON text holds when it is plainly not an object (a struct also accepts an array
/// of positional values, which would silently bind arguments by position).
fn non_object_json(text: &str) -> Option<&'static str> {
    match text.trim_start().bytes().next()? {
        b'{' => None,
        b'[' => Some("an array"),
        b'"' => Some("a string"),
        b't' | b'f' => Some("a boolean"),
        b'-' | b'0'..=b'9' => Some("a number"),
        _ => None, // not JSON at all: the parser reports where
    }
}

fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn not_an_object(found: &str) -> ToolError {
    ToolError::invalid_arguments(format!(
        "arguments must be a JSON object of named parameters, got {found}"
    ))
    .with_hint("send {\"parameter\": value, ...}")
}

/// The error for arguments that are not JSON at all.
pub(crate) fn malformed_json(error: &serde_json::Error) -> ToolError {
    let message = strip_position(error);
    ToolError::invalid_arguments(format!(
        "arguments are not valid JSON: {message} at line {} column {}",
        error.line(),
        error.column()
    ))
    .with_hint("send the arguments as one JSON object")
    .with_details(serde_json::json!({ "line": error.line(), "column": error.column() }))
}

fn field_error<A>(result: Result<A, serde_path_to_error::Error<serde_json::Error>>) -> ToolError {
    // The fast path failed, so the slow one fails too; the `else` only keeps the types honest.
    let Err(error) = result else {
        return ToolError::invalid_arguments("arguments do not match the parameters");
    };
    let mut path = error.path().to_string();
    let inner = error.into_inner();
    let message = strip_position(&inner);
    // For an unknown field the path ends with that field; the object it is in is what matters.
    if let Some(field) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split('`').next())
        && let Some(parent) = path.strip_suffix(field)
    {
        path = parent.trim_end_matches('.').to_owned();
    }
    if path == "." || path.is_empty() {
        ToolError::invalid_arguments(message)
    } else {
        ToolError::invalid_arguments(format!("`{path}`: {message}"))
            .with_details(serde_json::json!({ "field": path }))
    }
}

/// serde_json appends " at line L column C" to its messages; the field path says more.
fn strip_position(error: &serde_json::Error) -> String {
    let message = error.to_string();
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    match message.strip_suffix(&suffix) {
        Some(stripped) => stripped.to_owned(),
        None => message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "fields are only deserialized")]
    struct Params {
        order_id: String,
        limit: Option<u32>,
        filter: Option<Filter>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code, reason = "fields are only deserialized")]
    struct Filter {
        status: String,
    }

    fn message(args: ToolArgs<'_>) -> String {
        match parse_args::<Params>(args) {
            Ok(parsed) => format!("parsed {parsed:?}"),
            Err(error) => error.message().to_owned(),
        }
    }

    #[test]
    fn wrong_type_names_the_field_what_was_expected_and_what_came() {
        assert_eq!(
            message(ToolArgs::Json(r#"{"order_id":"A-1","limit":"ten"}"#)),
            "`limit`: invalid type: string \"ten\", expected u32"
        );
        assert_eq!(
            message(ToolArgs::Value(
                serde_json::json!({"order_id":"A-1","filter":{"status":5}})
            )),
            "`filter.status`: invalid type: integer `5`, expected a string"
        );
    }

    #[test]
    fn malformed_json_gives_the_position() {
        assert_eq!(
            message(ToolArgs::Json(r#"{"order_id": "A-1""#)),
            "arguments are not valid JSON: EOF while parsing an object at line 1 column 18"
        );
    }

    #[test]
    fn missing_and_unknown_fields_are_named() {
        assert_eq!(message(ToolArgs::Json("{}")), "missing field `order_id`");
        assert_eq!(
            message(ToolArgs::Json(r#"{"order_id":"A-1","orderid":"x"}"#)),
            "unknown field `orderid`, expected one of `order_id`, `limit`, `filter`"
        );
        assert_eq!(
            message(ToolArgs::Json(
                r#"{"order_id":"A-1","filter":{"status":"open","state":1}}"#
            )),
            "`filter`: unknown field `state`, expected `status`"
        );
    }
}
