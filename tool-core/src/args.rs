//! Parsing a call's arguments into a tool's parameters, with errors that name the field.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::ToolError;
use crate::tool::ToolArgs;

/// Parses `args` into `A`.
///
/// The fast path deserializes directly; only when that fails is the input parsed again to
/// find the path of the offending field, so a valid call pays nothing for good errors.
pub fn parse_args<A: DeserializeOwned>(args: ToolArgs<'_>) -> Result<A, ToolError> {
    match args {
        ToolArgs::Json(text) => {
            let text = if text.trim().is_empty() { "{}" } else { text };
            match serde_json::from_str::<A>(text) {
                Ok(parsed) => Ok(parsed),
                Err(error) if error.is_syntax() || error.is_eof() => Err(malformed_json(error)),
                Err(_) => {
                    let mut deserializer = serde_json::Deserializer::from_str(text);
                    Err(field_error(serde_path_to_error::deserialize::<_, A>(
                        &mut deserializer,
                    )))
                }
            }
        }
        ToolArgs::Value(Value::Null) => parse_args(ToolArgs::Json("{}")),
        ToolArgs::Value(value) => match A::deserialize(&value) {
            Ok(parsed) => Ok(parsed),
            Err(_) => Err(field_error(serde_path_to_error::deserialize::<_, A>(
                &value,
            ))),
        },
    }
}

/// The error for arguments that are not JSON at all.
pub(crate) fn malformed_json(error: serde_json::Error) -> ToolError {
    let message = strip_position(&error);
    ToolError::invalid_arguments(format!(
        "arguments are not valid JSON: {message} at line {} column {}",
        error.line(),
        error.column()
    ))
    .with_hint("send the arguments as one JSON object")
    .with_details(serde_json::json!({ "line": error.line(), "column": error.column() }))
}

fn field_error<A>(result: Result<A, serde_path_to_error::Error<serde_json::Error>>) -> ToolError {
    let error = match result {
        // The fast path failed, so the slow one fails too; this arm only keeps the types honest.
        Ok(_) => return ToolError::invalid_arguments("arguments do not match the parameters"),
        Err(error) => error,
    };
    let path = error.path().to_string();
    let inner = error.into_inner();
    let message = strip_position(&inner);
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
    }
}
