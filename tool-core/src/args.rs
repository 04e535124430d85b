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
///
/// An integral float where `A` wants an integer (`2.0` for a `u32`) is that integer, as in
/// JSON Schema: when parsing fails on such a float, the float is read as the integer and the
/// arguments parsed again (the slow path; a fraction, `1.5`, is still refused).
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
                Err(_) => parse_text_slowly(text),
            }
        }
        ToolArgs::Value(Value::Null) => parse_args(ToolArgs::Json("{}")),
        ToolArgs::Value(value) if !value.is_object() => Err(not_an_object(value_kind(&value))),
        ToolArgs::Value(value) => match A::deserialize(&value) {
            Ok(parsed) => Ok(parsed),
            Err(_) => parse_value_slowly(value),
        },
    }
}

/// The most times integral floats are read as integers and the arguments parsed again.
const MAX_INTEGER_RETRIES: usize = 32;

/// JSON text that did not parse into `A`: the error with its path, or `A` when the only
/// trouble was integral floats.
#[cold]
#[inline(never)]
fn parse_text_slowly<A: DeserializeOwned>(text: &str) -> Result<A, ToolError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let error = match serde_path_to_error::deserialize::<_, A>(&mut deserializer) {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error,
    };
    if is_float_error(&error)
        && let Ok(value) = serde_json::from_str::<Value>(text)
    {
        return retry_with_integers(value, error);
    }
    Err(field_error(error))
}

/// A value that did not parse into `A`: as [`parse_text_slowly`].
#[cold]
#[inline(never)]
fn parse_value_slowly<A: DeserializeOwned>(value: Value) -> Result<A, ToolError> {
    let error = match serde_path_to_error::deserialize::<_, A>(&value) {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error,
    };
    if is_float_error(&error) {
        return retry_with_integers(value, error);
    }
    Err(field_error(error))
}

type PathError = serde_path_to_error::Error<serde_json::Error>;

/// Whether serde refused a float where it wanted something else (an integer, say).
fn is_float_error(error: &PathError) -> bool {
    error
        .inner()
        .to_string()
        .starts_with("invalid type: floating point")
}

/// Reads the integral floats where parsing failed as integers, and parses again, as long as
/// parsing fails on a float. The error reported is the last one, about what is still wrong.
fn retry_with_integers<A: DeserializeOwned>(
    mut value: Value,
    mut error: PathError,
) -> Result<A, ToolError> {
    for _ in 0..MAX_INTEGER_RETRIES {
        if !integers_at(&mut value, error.path()) {
            break;
        }
        match serde_path_to_error::deserialize::<_, A>(&value) {
            Ok(parsed) => return Ok(parsed),
            Err(next) => {
                let again = is_float_error(&next);
                error = next;
                if !again {
                    break;
                }
            }
        }
    }
    Err(field_error(error))
}

/// Turns the integral floats where parsing failed into integers: the node the path names, or
/// the deepest node it reaches (an array, whose items share one type; an enum's content,
/// which serde reads as a whole). Whether any changed.
fn integers_at(value: &mut Value, path: &serde_path_to_error::Path) -> bool {
    let segments: Vec<&serde_path_to_error::Segment> = path.iter().collect();
    integers_below(value, &segments)
}

fn integers_below(node: &mut Value, segments: &[&serde_path_to_error::Segment]) -> bool {
    use serde_path_to_error::Segment;
    if let Some((Segment::Map { key } | Segment::Enum { variant: key }, rest)) =
        segments.split_first()
        && let Some(child) = node.get_mut(key.as_str())
    {
        return integers_below(child, rest);
    }
    integral_floats_to_integers(node)
}

/// Replaces every float with no fraction in `value` by the same integer. Whether any changed.
fn integral_floats_to_integers(value: &mut Value) -> bool {
    let mut changed = false;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Number(number) => {
                if let Some(integer) = number
                    .as_f64()
                    .filter(|_| number.is_f64())
                    .and_then(integer_of)
                {
                    *number = integer;
                    changed = true;
                }
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            Value::Object(entries) => stack.extend(entries.values_mut()),
            _ => {}
        }
    }
    changed
}

/// The integer a float with no fraction stands for, when one fits: `1.0` for an integer
/// parameter is an integer in JSON Schema. Shared with the runtime's validation of dynamic
/// tools.
pub fn integer_of(float: f64) -> Option<serde_json::Number> {
    if float.fract() != 0.0 || !float.is_finite() {
        return None;
    }
    // Casts are exact here: the bounds are checked first, and the value has no fraction.
    if (0.0..18_446_744_073_709_551_616.0).contains(&float) {
        Some(serde_json::Number::from(float as u64))
    } else if (-9_223_372_036_854_775_808.0..0.0).contains(&float) {
        Some(serde_json::Number::from(float as i64))
    } else {
        None
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

/// The error for arguments that parse as JSON but not into the parameters: the message in
/// the form `` `path`: what `` (no path for the arguments as a whole, and for a missing or an
/// unknown field the path of the object it belongs in), and the field it is about as
/// `details.field`, dotted: the wrong value, the missing field, the unknown field.
fn field_error(error: PathError) -> ToolError {
    let path = match error.path().to_string() {
        path if path == "." => String::new(),
        path => path,
    };
    let inner = error.into_inner();
    let message = strip_position(&inner);
    let named = |prefix: &str| {
        message
            .strip_prefix(prefix)
            .and_then(|rest| rest.split('`').next())
            .map(str::to_owned)
    };
    let (at, field) = if let Some(unknown) = named("unknown field `") {
        // The path ends with the unknown field; the object it is in is where it does not belong.
        let parent = path
            .strip_suffix(unknown.as_str())
            .unwrap_or(&path)
            .trim_end_matches('.')
            .to_owned();
        (parent, path)
    } else if let Some(missing) = named("missing field `") {
        let field = join(&path, &missing);
        (path, field)
    } else {
        (path.clone(), path)
    };
    let error = if at.is_empty() {
        ToolError::invalid_arguments(message)
    } else {
        ToolError::invalid_arguments(format!("`{at}`: {message}"))
    };
    if field.is_empty() {
        error
    } else {
        error.with_details(serde_json::json!({ "field": field }))
    }
}

/// `parent.name`, or `name` at the root.
fn join(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_owned()
    } else {
        format!("{parent}.{name}")
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

    fn field(args: ToolArgs<'_>) -> Option<Value> {
        parse_args::<Params>(args)
            .err()
            .and_then(|error| error.details().map(|details| details["field"].clone()))
    }

    #[test]
    fn the_field_is_the_one_the_error_is_about() {
        assert_eq!(field(ToolArgs::Json("{}")), Some("order_id".into()));
        assert_eq!(
            field(ToolArgs::Json(r#"{"order_id":"A-1","orderid":"x"}"#)),
            Some("orderid".into())
        );
        assert_eq!(
            field(ToolArgs::Json(
                r#"{"order_id":"A-1","filter":{"status":"open","state":1}}"#
            )),
            Some("filter.state".into())
        );
        assert_eq!(
            field(ToolArgs::Json(r#"{"order_id":"A-1","filter":{}}"#)),
            Some("filter.status".into())
        );
        assert_eq!(
            message(ToolArgs::Json(r#"{"order_id":"A-1","filter":{}}"#)),
            "`filter`: missing field `status`"
        );
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Counts {
        n: u32,
        sizes: Vec<u8>,
        ratio: Option<f64>,
        shape: Option<Shape>,
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(tag = "type")]
    enum Shape {
        Rect { width: u32, height: i64 },
    }

    fn counts(text: &str) -> Result<Counts, String> {
        let from_text =
            parse_args::<Counts>(ToolArgs::Json(text)).map_err(|e| e.message().to_owned());
        let value = serde_json::from_str::<Value>(text).unwrap_or_default();
        let from_value =
            parse_args::<Counts>(ToolArgs::Value(value)).map_err(|e| e.message().to_owned());
        assert_eq!(from_text, from_value, "{text}");
        from_text
    }

    #[test]
    fn an_integral_float_is_an_integer() {
        assert_eq!(
            counts(r#"{"n": 2.0, "sizes": [1.0, 2e0, 3], "ratio": 1.0}"#),
            Ok(Counts {
                n: 2,
                sizes: vec![1, 2, 3],
                ratio: Some(1.0),
                shape: None
            })
        );
        assert_eq!(
            counts(
                r#"{"n": 2, "sizes": [], "shape": {"type": "Rect", "width": 3.0, "height": -4.0}}"#
            ),
            Ok(Counts {
                n: 2,
                sizes: vec![],
                ratio: None,
                shape: Some(Shape::Rect {
                    width: 3,
                    height: -4
                })
            })
        );
        assert_eq!(
            counts(r#"{"n": 1.5, "sizes": []}"#),
            Err("`n`: invalid type: floating point `1.5`, expected u32".to_owned())
        );
        assert_eq!(
            counts(r#"{"n": 2.0, "sizes": [1.0, 2.5]}"#),
            Err("`sizes[1]`: invalid type: floating point `2.5`, expected u8".to_owned())
        );
        assert_eq!(
            counts(r#"{"n": -1.0, "sizes": []}"#),
            Err("`n`: invalid value: integer `-1`, expected u32".to_owned())
        );
        assert_eq!(
            counts(r#"{"n": 1e300, "sizes": []}"#),
            Err("`n`: invalid type: floating point `1e+300`, expected u32".to_owned())
        );
        assert_eq!(
            counts(r#"{"n": 2.0, "sizes": [], "extra": 1.0}"#),
            Err("unknown field `extra`, expected one of `n`, `sizes`, `ratio`, `shape`".to_owned())
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
