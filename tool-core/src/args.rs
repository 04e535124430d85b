//! Parsing a call's arguments into a tool's parameters, with errors that name the field.
//!
//! Two ways in, with the same messages: [`parse_args`], generic over a type that derives
//! `Deserialize`, and [`params`], which parses the parameters a `#[tool]` declares without
//! one (code shared by every tool, compiled once). What happens after a failure (finding the
//! field, reading integral floats as integers, the error the model gets) is written once here
//! and serves both, through a parse "attempt" each gives it.

pub(crate) mod params;

use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_path_to_error::Segment;

use crate::error::{ErrorKind, ToolError};
use crate::tool::ToolArgs;

/// Parses `args` into `A`.
///
/// The fast path deserializes directly; only when that fails is the input parsed again to
/// find the path of the offending field, so a valid call pays nothing for good errors.
/// Inlined into each caller, where the parsed arguments are used.
///
/// A number written as a float where `A` wants an integer (`2.0`, `1e2` for a `u32`) is that
/// integer, as in JSON Schema: when parsing fails on such a number, it is read as the integer
/// and the arguments parsed again (the slow path). From JSON text a number is an integer when
/// its digits say so, not the `f64` it rounds to: `1e-400` and `0.99999999999999999` are not
/// integers, `-9223372036854775809` is out of an `i64`'s range, and `-0.0` is the integer 0.
/// The text is parsed again as a whole, so whatever else it holds (a duplicate key) is refused
/// as it would be without the float. A [`Value`] has no digits left: a float in it is an
/// integer when it has no fraction and is exact, below 2^53 ([`integer_of`]).
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
        ToolArgs::Parsed(Value::Null) => parse_args(ToolArgs::Json("{}")),
        ToolArgs::Parsed(value) if !value.is_object() => Err(not_an_object(value_kind(value))),
        ToolArgs::Parsed(value) => match A::deserialize(value) {
            Ok(parsed) => Ok(parsed),
            Err(_) => parse_value_slowly(value.clone()),
        },
    }
}

/// The most times integral floats are read as integers and the arguments parsed again.
const MAX_INTEGER_RETRIES: usize = 32;

/// An error of serde's and where it is: the path `serde_path_to_error` gives, from the root
/// of the arguments (or of a parameter's value).
#[derive(Debug)]
pub(crate) struct PathError {
    path: Vec<Segment>,
    inner: serde_json::Error,
}

impl PathError {
    pub(crate) fn new(path: Vec<Segment>, inner: serde_json::Error) -> Self {
        Self { path, inner }
    }

    /// The error at the root of the arguments.
    pub(crate) fn at_root(inner: serde_json::Error) -> Self {
        Self::new(Vec::new(), inner)
    }

    /// An error tracked in the value of the parameter named `key`.
    pub(crate) fn below(key: &str, error: PathError) -> Self {
        let mut path = vec![Segment::Map {
            key: key.to_owned(),
        }];
        path.extend(error.path);
        Self::new(path, error.inner)
    }

    pub(crate) fn path(&self) -> &[Segment] {
        &self.path
    }

    pub(crate) fn inner(&self) -> &serde_json::Error {
        &self.inner
    }

    /// The path as `serde_path_to_error` writes it: `.` for the root, `a.b[2].c`.
    fn path_text(&self) -> String {
        use std::fmt::Write as _;
        if self.path.is_empty() {
            return ".".to_owned();
        }
        let mut text = String::new();
        let mut separator = "";
        for segment in &self.path {
            if !matches!(segment, Segment::Seq { .. }) {
                text.push_str(separator);
            }
            let _ = write!(text, "{segment}");
            separator = ".";
        }
        text
    }
}

impl From<serde_path_to_error::Error<serde_json::Error>> for PathError {
    fn from(error: serde_path_to_error::Error<serde_json::Error>) -> Self {
        let path = error.path().iter().cloned().collect();
        Self::new(path, error.into_inner())
    }
}

/// JSON text that is not JSON: serde_json's message, and where, in the text as sent.
#[derive(Debug)]
pub(crate) struct Malformed {
    message: String,
    line: usize,
    column: usize,
}

impl Malformed {
    pub(crate) fn of(error: &serde_json::Error) -> Self {
        Self {
            message: strip_position(error),
            line: error.line(),
            column: error.column(),
        }
    }

    /// The error of parsing `text[offset..]` on its own, `lead` characters put before it,
    /// placed in `text`.
    pub(crate) fn within(
        error: &serde_json::Error,
        text: &str,
        offset: usize,
        lead: usize,
    ) -> Self {
        let before = text.get(..offset).unwrap_or(text);
        let line_start = before.rfind('\n').map_or(0, |newline| newline + 1);
        let line = 1 + before.matches('\n').count();
        let (line, column) = if error.line() <= 1 {
            (
                line,
                offset - line_start + error.column().saturating_sub(lead),
            )
        } else {
            (line + error.line() - 1, error.column())
        };
        Self {
            message: strip_position(error),
            line,
            column,
        }
    }
}

/// Why one attempt at parsing the arguments failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The text is not JSON.
    Malformed(Malformed),
    /// It is, but not the parameters.
    Field(PathError),
}

impl Failure {
    /// A failure serde_json reported, with no path known: at the root.
    pub(crate) fn of(error: serde_json::Error) -> Self {
        if error.is_syntax() || error.is_eof() {
            Failure::Malformed(Malformed::of(&error))
        } else {
            Failure::Field(PathError::at_root(error))
        }
    }
}

/// One parse of the whole of a JSON text (trailing characters refused), as the retries need.
pub(crate) type TextAttempt<'a> = dyn FnMut(&str) -> Result<(), Failure> + 'a;

/// One parse of the whole of a value.
pub(crate) type ValueAttempt<'a> = dyn FnMut(&Value) -> Result<(), PathError> + 'a;

/// JSON text that did not parse into `A`: the error with its path, or `A` when the only
/// trouble was numbers written as floats that are integers.
#[cold]
#[inline(never)]
fn parse_text_slowly<A: DeserializeOwned>(text: &str) -> Result<A, ToolError> {
    let error = match tracked_text::<A>(text) {
        Ok(parsed) => return Ok(parsed),
        Err(Failure::Malformed(malformed)) => return Err(malformed_error(&malformed)),
        Err(Failure::Field(error)) => error,
    };
    let mut parsed = None;
    text_failed(text, error, &mut |text| {
        tracked_text::<A>(text).map(|value| parsed = Some(value))
    })?;
    parsed.ok_or_else(lost)
}

/// `text` parsed whole into `A`, a failure with its path.
fn tracked_text<A: DeserializeOwned>(text: &str) -> Result<A, Failure> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    match serde_path_to_error::deserialize::<_, A>(&mut deserializer) {
        Ok(parsed) => match deserializer.end() {
            Ok(()) => Ok(parsed),
            Err(trailing) => Err(Failure::Malformed(Malformed::of(&trailing))),
        },
        Err(error) if error.inner().is_syntax() || error.inner().is_eof() => {
            Err(Failure::Malformed(Malformed::of(error.inner())))
        }
        Err(error) => Err(Failure::Field(error.into())),
    }
}

/// A value that did not parse into `A`: as [`parse_text_slowly`].
#[cold]
#[inline(never)]
fn parse_value_slowly<A: DeserializeOwned>(value: Value) -> Result<A, ToolError> {
    let error = match serde_path_to_error::deserialize::<_, A>(&value) {
        Ok(parsed) => return Ok(parsed),
        Err(error) => error.into(),
    };
    let mut parsed = None;
    value_failed(value, error, &mut |value| {
        serde_path_to_error::deserialize::<_, A>(value)
            .map(|value| parsed = Some(value))
            .map_err(PathError::from)
    })?;
    parsed.ok_or_else(lost)
}

/// An attempt that succeeded without leaving its result: a bug here, never the model's.
fn lost() -> ToolError {
    ToolError::new(
        ErrorKind::Internal,
        "the arguments parsed, but their values were lost on the way",
    )
}

/// JSON text whose parse failed with `error` (not a syntax error): the error the model gets,
/// or, when the trouble was only integral floats, the text parsed with them read as integers
/// (by `attempt`, which keeps the result).
#[cold]
#[inline(never)]
pub(crate) fn text_failed(
    text: &str,
    error: PathError,
    attempt: &mut TextAttempt<'_>,
) -> Result<(), ToolError> {
    if is_float_error(&error) {
        return retry_text_with_integers(text, error, attempt);
    }
    Err(field_error(error))
}

/// A value whose parse failed with `error`: as [`text_failed`].
#[cold]
#[inline(never)]
pub(crate) fn value_failed(
    value: Value,
    error: PathError,
    attempt: &mut ValueAttempt<'_>,
) -> Result<(), ToolError> {
    if is_float_error(&error) {
        return retry_with_integers(value, error, attempt);
    }
    Err(field_error(error))
}

/// Whether serde refused a float where it wanted something else (an integer, say).
fn is_float_error(error: &PathError) -> bool {
    error
        .inner()
        .to_string()
        .starts_with("invalid type: floating point")
}

/// Rewrites the numbers of `text` where parsing failed that are integers as written (`2.0`,
/// `1e2`, `-0`) as those integers, and parses the rewritten text again, as long as parsing
/// fails on a float. Each parse is of the whole text, by serde, so what it refuses (a duplicate
/// key) does not depend on how the numbers are written. The error reported is the last one.
fn retry_text_with_integers(
    text: &str,
    mut error: PathError,
    attempt: &mut TextAttempt<'_>,
) -> Result<(), ToolError> {
    let numbers = written::numbers_with_paths(text);
    let mut integers: Vec<Option<String>> = vec![None; numbers.len()];
    for _ in 0..MAX_INTEGER_RETRIES {
        let mut changed = false;
        for index in written::under(&numbers, error.path()) {
            if integers[index].is_none()
                && let WrittenNumber::Integer(integer) =
                    WrittenNumber::read(&text[numbers[index].range.clone()])
            {
                integers[index] = Some(integer.to_string());
                changed = true;
            }
        }
        if !changed {
            break;
        }
        let rewritten = written::splice(text, &numbers, &integers);
        let next = match attempt(&rewritten) {
            Ok(()) => return Ok(()),
            Err(Failure::Malformed(malformed)) => return Err(malformed_original(text, &malformed)),
            Err(Failure::Field(next)) => next,
        };
        let again = is_float_error(&next);
        error = next;
        if !again {
            return Err(field_error(error));
        }
    }
    let literal = written::at(&numbers, error.path())
        .filter(|_| wants_an_integer(&error))
        .map(|number| &text[number.range.clone()]);
    match literal.map(|literal| (literal, WrittenNumber::read(literal))) {
        Some((literal, WrittenNumber::Fraction)) => Err(number_error(
            error,
            &format!("number `{}` is not an integer", shortened(literal)),
            "send a whole number: this parameter takes an integer",
        )),
        Some((literal, WrittenNumber::OutOfRange)) => Err(number_error(
            error,
            &format!("number `{}` is out of range", shortened(literal)),
            "send an integer this parameter's type can hold",
        )),
        _ => Err(field_error(error)),
    }
}

/// Whether serde's error says it wanted one of Rust's integers (its words for them: `u32`,
/// `a nonzero u32`). For anything else it wanted, its own words say more.
fn wants_an_integer(error: &PathError) -> bool {
    let message = error.inner().to_string();
    let Some((_, expected)) = message.split_once(", expected ") else {
        return false;
    };
    let expected = strip_position_text(expected, error.inner());
    let name = expected.strip_prefix("a nonzero ").unwrap_or(expected);
    matches!(
        name,
        "u8" | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
    )
}

/// The error of JSON text a rewritten copy of which did not parse: the text's own, whose
/// position is the one the caller can find.
fn malformed_original(text: &str, fallback: &Malformed) -> ToolError {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Err(error) => malformed_json(&error),
        Ok(_) => malformed_error(fallback),
    }
}

/// A number literal as the message shows it: a long one is cut.
fn shortened(literal: &str) -> String {
    const SHOWN: usize = 40;
    if literal.len() <= SHOWN {
        literal.to_owned()
    } else {
        // A literal is ASCII: any byte is a boundary.
        format!("{}…", &literal[..SHOWN])
    }
}

/// The error for a float serde refused where an integer was wanted, in words about the number
/// (`what`): the path, and what serde expected.
fn number_error(error: PathError, what: &str, hint: &str) -> ToolError {
    let message = strip_position(error.inner());
    let message = match message.split_once(", expected ") {
        Some((_, expected)) => format!("invalid value: {what}, expected {expected}"),
        None => format!("invalid value: {what}"),
    };
    let inner = <serde_json::Error as serde::de::Error>::custom(message);
    field_error(PathError::new(error.path, inner)).with_hint(hint)
}

/// Reads the integral floats where parsing failed as integers, and parses again, as long as
/// parsing fails on a float. The error reported is the last one, about what is still wrong.
fn retry_with_integers(
    mut value: Value,
    mut error: PathError,
    attempt: &mut ValueAttempt<'_>,
) -> Result<(), ToolError> {
    for _ in 0..MAX_INTEGER_RETRIES {
        if !integers_at(&mut value, error.path()) {
            break;
        }
        match attempt(&value) {
            Ok(()) => return Ok(()),
            Err(next) => {
                let again = is_float_error(&next);
                error = next;
                if !again {
                    return Err(field_error(error));
                }
            }
        }
    }
    let float = value_at(&value, error.path())
        .filter(|_| wants_an_integer(&error))
        .and_then(Value::as_f64);
    match float {
        Some(float) if float.fract() != 0.0 => Err(number_error(
            error,
            &format!("number `{float}` is not an integer"),
            "send a whole number: this parameter takes an integer",
        )),
        Some(float) if float.fract() == 0.0 && integer_of(float).is_none() => Err(number_error(
            error,
            &format!(
                "float `{float:?}` is beyond 2^53, where a float no longer stands for one integer"
            ),
            "send the number as a JSON integer, not a float",
        )),
        _ => Err(field_error(error)),
    }
}

/// The node of `value` a serde path names.
fn value_at<'a>(value: &'a Value, path: &[Segment]) -> Option<&'a Value> {
    path.iter().try_fold(value, |node, segment| match segment {
        Segment::Map { key } | Segment::Enum { variant: key } => node.get(key.as_str()),
        Segment::Seq { index } => node.get(*index),
        Segment::Unknown => None,
    })
}

/// Turns the integral floats where parsing failed into integers: the node the path names, or
/// the deepest node it reaches (an array, whose items share one type; an enum's content,
/// which serde reads as a whole). Whether any changed.
fn integers_at(value: &mut Value, path: &[Segment]) -> bool {
    integers_below(value, path)
}

fn integers_below(node: &mut Value, segments: &[Segment]) -> bool {
    if let Some((Segment::Map { key } | Segment::Enum { variant: key }, rest)) =
        segments.split_first()
        && let Some(child) = node.get_mut(key.as_str())
    {
        return integers_below(child, rest);
    }
    integral_floats_to_integers(node)
}

/// Replaces every float in `value` that [`integer_of`] reads as an integer by that integer.
/// Whether any changed.
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

/// The integer a float with no fraction stands for, when it is exact: `1.0` for an integer
/// parameter is an integer in JSON Schema. Only below 2^53 in magnitude, where each integer
/// has its own `f64`; beyond, a float may be the rounding of a neighbouring integer, and none is
/// read from it. For a float already parsed (a [`Value`]); JSON text is read on its digits
/// ([`WrittenNumber`]). Shared with the runtime's validation of dynamic tools and its
/// idempotency keys.
pub fn integer_of(float: f64) -> Option<serde_json::Number> {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if float.fract() != 0.0 || !float.is_finite() || float.abs() >= EXACT {
        return None;
    }
    // Casts are exact here: the bounds are checked first, and the value has no fraction.
    if float >= 0.0 {
        Some(serde_json::Number::from(float as u64))
    } else {
        Some(serde_json::Number::from(float as i64))
    }
}

/// A JSON number as written, judged on its digits and exponent rather than on the `f64` it
/// rounds to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WrittenNumber {
    /// An integer that fits `u64` or `i64`: `1.0`, `1e2`, `100.0`, `-2.5e1`; `-0.0` and `-0`
    /// are the integer 0.
    Integer(serde_json::Number),
    /// An integer beyond both `u64` and `i64`: `-9223372036854775809`, `1e300`.
    OutOfRange,
    /// Not an integer: `1.5`, `1e-400`, `0.99999999999999999`.
    Fraction,
}

impl WrittenNumber {
    /// Reads a JSON number literal (`-?int(.frac)?([eE][+-]?exp)?`, as the JSON grammar
    /// spells it). Anything else is [`WrittenNumber::Fraction`]: it is no integer.
    #[must_use]
    pub fn read(literal: &str) -> WrittenNumber {
        written::read(literal.as_bytes())
    }
}

/// The numbers of JSON text that serde_json does not read as the exact integer they are
/// written as (a fraction or an exponent, `-0`, more digits than 64 bits hold), each with its
/// JSON pointer (`/a/0/b`) and its literal, in order; a repeated key gives each of its numbers.
/// A scan that skips strings first: text without such a number costs one pass, no allocation.
#[must_use]
pub fn inexact_numbers(text: &str) -> Vec<(String, &str)> {
    if written::inexact_ranges(text).next().is_none() {
        return Vec::new();
    }
    written::numbers_with_paths(text)
        .into_iter()
        .map(|number| (written::pointer(&number.path), &text[number.range]))
        .collect()
}

/// JSON text as a [`Value`], each number written as an integer (`2.0`, `1e2`) read as that
/// integer when it fits `u64` or `i64`, exactly, where `serde_json::from_str` gives the `f64`
/// it rounds to: the numbers as [`parse_args`] reads them. Other numbers are as serde_json
/// reads them. Text without such a number is parsed as it is, after one scan.
///
/// # Errors
///
/// As `serde_json::from_str`'s for the text, when it is not JSON.
pub fn exact_value(text: &str) -> Result<Value, serde_json::Error> {
    let mut ranges = written::inexact_ranges(text).peekable();
    if ranges.peek().is_none() {
        return serde_json::from_str(text);
    }
    let mut rewritten = String::with_capacity(text.len());
    let mut copied = 0;
    for range in ranges {
        if let WrittenNumber::Integer(integer) = WrittenNumber::read(&text[range.clone()]) {
            rewritten.push_str(&text[copied..range.start]);
            rewritten.push_str(&integer.to_string());
            copied = range.end;
        }
    }
    rewritten.push_str(&text[copied..]);
    // The rewritten text is JSON exactly when the text is: the text's own error, if any.
    serde_json::from_str(&rewritten).or_else(|_| serde_json::from_str(text))
}

/// Number literals in JSON text: where they are and what they are, on their digits.
mod written {
    use std::borrow::Cow;
    use std::ops::Range;

    use serde_path_to_error::Segment;

    use super::WrittenNumber;

    /// Integers with more digits than this are beyond `u64` and `i64`.
    const MAX_DIGITS: usize = 20;

    /// Reads a number literal exactly: its value is the significant digits times a power of
    /// ten, an integer when that power, after the digits' trailing zeros, is not negative.
    pub(super) fn read(literal: &[u8]) -> WrittenNumber {
        let (negative, rest) = match literal.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, literal),
        };
        let (int, rest) = split_digits(rest);
        if int.is_empty() {
            return WrittenNumber::Fraction;
        }
        let (frac, rest) = match rest.split_first() {
            Some((b'.', rest)) => match split_digits(rest) {
                (&[], _) => return WrittenNumber::Fraction,
                split => split,
            },
            _ => (&[][..], rest),
        };
        let exponent = match rest.split_first() {
            Some((b'e' | b'E', rest)) => {
                let (negative, rest) = match rest.split_first() {
                    Some((b'-', rest)) => (true, rest),
                    Some((b'+', rest)) => (false, rest),
                    _ => (false, rest),
                };
                let (digits, rest) = split_digits(rest);
                if digits.is_empty() || !rest.is_empty() {
                    return WrittenNumber::Fraction;
                }
                // Saturated far beyond any literal's length: the sign alone decides then.
                let magnitude = digits.iter().fold(0_i64, |exponent, digit| {
                    (exponent * 10 + i64::from(digit - b'0')).min(1 << 40)
                });
                if negative { -magnitude } else { magnitude }
            }
            None => 0,
            Some(_) => return WrittenNumber::Fraction,
        };
        // The value is `int frac` (as one integer) times 10^(exponent - frac.len()).
        let digits = || int.iter().chain(frac);
        let Some(first) = digits().position(|digit| *digit != b'0') else {
            return WrittenNumber::Integer(0_u64.into());
        };
        let trailing = digits().rev().take_while(|digit| **digit == b'0').count();
        let count = int.len() + frac.len();
        let significant = count - first - trailing;
        let scale = exponent - frac.len() as i64 + trailing as i64;
        if scale < 0 {
            return WrittenNumber::Fraction;
        }
        if significant as i64 + scale > MAX_DIGITS as i64 {
            return WrittenNumber::OutOfRange;
        }
        let magnitude = digits()
            .skip(first)
            .take(significant)
            .map(|digit| u64::from(digit - b'0'))
            .chain(std::iter::repeat_n(0, scale as usize))
            .try_fold(0_u64, |value, digit| {
                value
                    .checked_mul(10)
                    .and_then(|value| value.checked_add(digit))
            });
        match (magnitude, negative) {
            (Some(magnitude), false) => WrittenNumber::Integer(magnitude.into()),
            (Some(magnitude), true) => match 0_i64.checked_sub_unsigned(magnitude) {
                Some(value) => WrittenNumber::Integer(value.into()),
                None => WrittenNumber::OutOfRange,
            },
            (None, _) => WrittenNumber::OutOfRange,
        }
    }

    fn split_digits(bytes: &[u8]) -> (&[u8], &[u8]) {
        let count = bytes
            .iter()
            .take_while(|byte| byte.is_ascii_digit())
            .count();
        bytes.split_at(count)
    }

    /// Whether serde_json reads this literal as the integer it is written as: digits only,
    /// not `-0`, and few enough that they fit (19 always fit a `u64`, 18 an `i64`).
    fn read_exactly(literal: &[u8]) -> bool {
        let (negative, digits) = match literal.split_first() {
            Some((b'-', digits)) => (true, digits),
            _ => (false, literal),
        };
        digits.iter().all(u8::is_ascii_digit)
            && if negative {
                digits.len() <= 18 && digits != b"0"
            } else {
                digits.len() <= 19
            }
    }

    /// The end of the number token starting at `start`.
    fn end_of_number(bytes: &[u8], start: usize) -> usize {
        let length = bytes[start..]
            .iter()
            .take_while(|byte| matches!(byte, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .count();
        start + length
    }

    /// The position after the closing quote of the string whose contents start at `start`.
    fn end_of_string(bytes: &[u8], mut start: usize) -> usize {
        while let Some(offset) = bytes
            .get(start..)
            .and_then(|rest| rest.iter().position(|byte| matches!(byte, b'"' | b'\\')))
        {
            let at = start + offset;
            if bytes[at] == b'"' {
                return at + 1;
            }
            start = at + 2;
        }
        bytes.len()
    }

    /// The byte ranges of the numbers of `text` that serde_json does not read exactly as
    /// the integer written, in order: a scan that only skips strings.
    pub(super) fn inexact_ranges(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
        let bytes = text.as_bytes();
        let mut at = 0;
        std::iter::from_fn(move || {
            while let Some(&byte) = bytes.get(at) {
                match byte {
                    b'"' => at = end_of_string(bytes, at + 1),
                    b'-' | b'0'..=b'9' => {
                        let start = at;
                        at = end_of_number(bytes, at);
                        if !read_exactly(&bytes[start..at]) {
                            return Some(start..at);
                        }
                    }
                    _ => at += 1,
                }
            }
            None
        })
    }

    /// One step of the path to a value: an object's key (unescaped), an array's index.
    #[derive(Debug, Clone, PartialEq)]
    pub(super) enum Step<'a> {
        Key(Cow<'a, str>),
        Index(usize),
    }

    /// A number serde_json does not read exactly as the integer written: where it is.
    #[derive(Debug)]
    pub(super) struct Number<'a> {
        pub(super) path: Vec<Step<'a>>,
        pub(super) range: Range<usize>,
    }

    enum Frame<'a> {
        Object {
            key: Option<Cow<'a, str>>,
            expecting_key: bool,
        },
        Array {
            index: usize,
        },
    }

    /// The numbers of `text` that serde_json does not read exactly, with their paths, in
    /// order. Text that is not JSON gives what its structure up to there gives.
    pub(super) fn numbers_with_paths(text: &str) -> Vec<Number<'_>> {
        let bytes = text.as_bytes();
        let mut frames: Vec<Frame<'_>> = Vec::new();
        let mut numbers = Vec::new();
        let mut at = 0;
        while let Some(&byte) = bytes.get(at) {
            match byte {
                b'{' => frames.push(Frame::Object {
                    key: None,
                    expecting_key: true,
                }),
                b'[' => frames.push(Frame::Array { index: 0 }),
                b'}' | b']' => {
                    frames.pop();
                }
                b',' => match frames.last_mut() {
                    Some(Frame::Object { expecting_key, .. }) => *expecting_key = true,
                    Some(Frame::Array { index }) => *index += 1,
                    None => {}
                },
                b':' => {
                    if let Some(Frame::Object { expecting_key, .. }) = frames.last_mut() {
                        *expecting_key = false;
                    }
                }
                b'"' => {
                    let end = end_of_string(bytes, at + 1);
                    if let Some(Frame::Object {
                        key,
                        expecting_key: true,
                    }) = frames.last_mut()
                    {
                        *key = Some(unescaped(&text[at..end]));
                    }
                    at = end;
                    continue;
                }
                b'-' | b'0'..=b'9' => {
                    let start = at;
                    at = end_of_number(bytes, at);
                    if !read_exactly(&bytes[start..at]) {
                        let path = frames
                            .iter()
                            .map(|frame| match frame {
                                Frame::Object { key, .. } => {
                                    Step::Key(key.clone().unwrap_or_default())
                                }
                                Frame::Array { index } => Step::Index(*index),
                            })
                            .collect();
                        numbers.push(Number {
                            path,
                            range: start..at,
                        });
                    }
                    continue;
                }
                _ => {}
            }
            at += 1;
        }
        numbers
    }

    /// A key's text, its quotes included, unescaped.
    fn unescaped(quoted: &str) -> Cow<'_, str> {
        let inner = quoted
            .strip_prefix('"')
            .and_then(|inner| inner.strip_suffix('"'))
            .unwrap_or(quoted);
        if !inner.contains('\\') {
            return Cow::Borrowed(inner);
        }
        match serde_json::from_str::<String>(quoted) {
            Ok(key) => Cow::Owned(key),
            Err(_) => Cow::Borrowed(inner),
        }
    }

    /// The JSON pointer of a path.
    pub(super) fn pointer(path: &[Step<'_>]) -> String {
        let mut pointer = String::new();
        for step in path {
            pointer.push('/');
            match step {
                Step::Key(key) => pointer.push_str(&key.replace('~', "~0").replace('/', "~1")),
                Step::Index(index) => pointer.push_str(&index.to_string()),
            }
        }
        pointer
    }

    /// The keys a serde path goes through before an array or what serde reads as a whole.
    fn leading_keys(path: &[Segment]) -> Vec<&str> {
        path.iter()
            .map_while(|segment| match segment {
                Segment::Map { key } | Segment::Enum { variant: key } => Some(key.as_str()),
                _ => None,
            })
            .collect()
    }

    fn starts_with(path: &[Step<'_>], keys: &[&str]) -> bool {
        path.len() >= keys.len()
            && path
                .iter()
                .zip(keys)
                .all(|(step, key)| matches!(step, Step::Key(name) if name == key))
    }

    /// The numbers under the node a serde path names, or under the deepest node it reaches
    /// (an array, whose items share one type; an enum's content, which serde reads as a
    /// whole): their indexes in `numbers`.
    pub(super) fn under(numbers: &[Number<'_>], path: &[Segment]) -> Vec<usize> {
        let keys = leading_keys(path);
        let reached = (0..=keys.len())
            .rev()
            .find(|depth| {
                numbers
                    .iter()
                    .any(|number| starts_with(&number.path, &keys[..*depth]))
            })
            .unwrap_or(0);
        (0..numbers.len())
            .filter(|index| starts_with(&numbers[*index].path, &keys[..reached]))
            .collect()
    }

    /// The first number at exactly the node a serde path names.
    pub(super) fn at<'n, 'a>(
        numbers: &'n [Number<'a>],
        segments: &[Segment],
    ) -> Option<&'n Number<'a>> {
        numbers.iter().find(|number| {
            number.path.len() == segments.len()
                && number
                    .path
                    .iter()
                    .zip(segments)
                    .all(|(step, segment)| match (step, segment) {
                        (
                            Step::Key(name),
                            Segment::Map { key } | Segment::Enum { variant: key },
                        ) => name == key,
                        (Step::Index(index), Segment::Seq { index: at }) => index == at,
                        _ => false,
                    })
        })
    }

    /// `text` with the numbers given an integer replaced by it.
    pub(super) fn splice(
        text: &str,
        numbers: &[Number<'_>],
        integers: &[Option<String>],
    ) -> String {
        let mut rewritten = String::with_capacity(text.len());
        let mut copied = 0;
        for (number, integer) in numbers.iter().zip(integers) {
            if let Some(integer) = integer {
                rewritten.push_str(&text[copied..number.range.start]);
                rewritten.push_str(integer);
                copied = number.range.end;
            }
        }
        rewritten.push_str(&text[copied..]);
        rewritten
    }
}

/// The text to parse when it does not start with `{`: "no arguments" (empty or `null`) is
/// `{}`; plainly not an object is an error; anything else goes to the parser as it is.
pub(crate) fn leading_non_object(text: &str) -> Result<&str, ToolError> {
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

pub(crate) fn value_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn not_an_object(found: &str) -> ToolError {
    ToolError::invalid_arguments(format!(
        "arguments must be a JSON object of named parameters, got {found}"
    ))
    .with_hint("send {\"parameter\": value, ...}")
}

/// The error for arguments that are not JSON at all.
pub(crate) fn malformed_json(error: &serde_json::Error) -> ToolError {
    malformed_error(&Malformed::of(error))
}

/// The error for arguments that are not JSON at all, the position in the text as sent.
pub(crate) fn malformed_error(malformed: &Malformed) -> ToolError {
    let Malformed {
        message,
        line,
        column,
    } = malformed;
    ToolError::invalid_arguments(format!(
        "arguments are not valid JSON: {message} at line {line} column {column}"
    ))
    .with_hint("send the arguments as one JSON object")
    .with_details(serde_json::json!({ "line": line, "column": column }))
}

/// The error for arguments that parse as JSON but not into the parameters: the message in
/// the form `` `path`: what `` (no path for the arguments as a whole, and for a missing or an
/// unknown field the path of the object it belongs in), and the field it is about as
/// `details.field`, dotted: the wrong value, the missing field, the unknown field.
fn field_error(error: PathError) -> ToolError {
    let path = match error.path_text() {
        path if path == "." => String::new(),
        path => path,
    };
    let inner = error.inner;
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
    strip_position_text(&message, error).to_owned()
}

fn strip_position_text<'a>(message: &'a str, error: &serde_json::Error) -> &'a str {
    let suffix = format!(" at line {} column {}", error.line(), error.column());
    message.strip_suffix(&suffix).unwrap_or(message)
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
            Err("`n`: invalid value: number `1.5` is not an integer, expected u32".to_owned())
        );
        assert_eq!(
            counts(r#"{"n": 2.0, "sizes": [1.0, 2.5]}"#),
            Err(
                "`sizes[1]`: invalid value: number `2.5` is not an integer, expected u8".to_owned()
            )
        );
        assert_eq!(
            counts(r#"{"n": -1.0, "sizes": []}"#),
            Err("`n`: invalid value: integer `-1`, expected u32".to_owned())
        );
        // Text has the digits; a value only the float.
        let huge = r#"{"n": 1e300, "sizes": []}"#;
        assert_eq!(
            parse_args::<Counts>(ToolArgs::Json(huge)).map_err(|e| e.message().to_owned()),
            Err("`n`: invalid value: number `1e300` is out of range, expected u32".to_owned())
        );
        let value = serde_json::from_str::<Value>(huge).unwrap_or_default();
        assert_eq!(
            parse_args::<Counts>(ToolArgs::Value(value)).map_err(|e| e.message().to_owned()),
            Err("`n`: invalid value: float `1e300` is beyond 2^53, where a float no longer stands for one integer, expected u32".to_owned())
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

    #[test]
    fn a_written_number_is_read_on_its_digits() {
        let integer = |value: i64| WrittenNumber::Integer(value.into());
        for (literal, expected) in [
            ("0", integer(0)),
            ("-0", integer(0)),
            ("-0.0e-7", integer(0)),
            ("0e-400", integer(0)),
            ("1.0", integer(1)),
            ("1e2", integer(100)),
            ("1E+2", integer(100)),
            ("100.0", integer(100)),
            ("1.0e0", integer(1)),
            ("1000e-3", integer(1)),
            ("-2.50e1", integer(-25)),
            ("0.00120e4", integer(12)),
            ("-9223372036854775808", integer(i64::MIN)),
            ("-9223372036854775808.000", integer(i64::MIN)),
            ("1.5", WrittenNumber::Fraction),
            ("1e-400", WrittenNumber::Fraction),
            ("0.99999999999999999", WrittenNumber::Fraction),
            ("1234e-5", WrittenNumber::Fraction),
            ("1e999999999999999999999999", WrittenNumber::OutOfRange),
            ("1e-999999999999999999999999", WrittenNumber::Fraction),
            ("-9223372036854775809", WrittenNumber::OutOfRange),
            ("18446744073709551616", WrittenNumber::OutOfRange),
            ("1e300", WrittenNumber::OutOfRange),
            ("", WrittenNumber::Fraction),
            ("-", WrittenNumber::Fraction),
            ("1.", WrittenNumber::Fraction),
            ("1e", WrittenNumber::Fraction),
            ("1x", WrittenNumber::Fraction),
        ] {
            assert_eq!(WrittenNumber::read(literal), expected, "{literal}");
        }
        assert_eq!(
            WrittenNumber::read("18446744073709551615.0"),
            WrittenNumber::Integer(u64::MAX.into())
        );
    }

    #[test]
    fn only_numbers_serde_reads_inexactly_are_found_with_where_they_are() {
        let text =
            r#"{"a": 1, "b\/~": [2, 3.0, {"c": -0}], "e": "1.5e3", "f": 12345678901234567890}"#;
        assert_eq!(
            inexact_numbers(text),
            vec![
                ("/b~1~0/1".to_owned(), "3.0"),
                ("/b~1~0/2/c".to_owned(), "-0"),
                ("/f".to_owned(), "12345678901234567890")
            ]
        );
        assert!(inexact_numbers(r#"{"a": [1, -2, "3.5", true], "b": null}"#).is_empty());
        let escaped = r#"{"k\u0041": 2.0}"#;
        assert_eq!(inexact_numbers(escaped), vec![("/kA".to_owned(), "2.0")]);
    }

    #[test]
    fn an_exact_value_has_each_integer_as_written() {
        let value =
            exact_value(r#"{"a": 12345678901234567.0, "b": 2.5, "c": [1e2, -0], "d": 1e300}"#);
        assert_eq!(
            value.ok().map(|value| value.to_string()),
            Some(r#"{"a":12345678901234567,"b":2.5,"c":[100,0],"d":1e+300}"#.to_owned())
        );
        let broken = exact_value(r#"{"a": 1.0, "b": }"#)
            .err()
            .map(|e| e.column());
        assert_eq!(
            broken,
            serde_json::from_str::<Value>(r#"{"a": 1.0, "b": }"#)
                .err()
                .map(|e| e.column())
        );
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Pair {
        n: u64,
        s: Option<String>,
        name: Option<String>,
        nested: Option<Inner>,
    }

    #[derive(Debug, serde::Deserialize, PartialEq)]
    struct Inner {
        k: i8,
        x: f64,
    }

    fn pair(text: &str) -> Result<Pair, String> {
        parse_args::<Pair>(ToolArgs::Json(text)).map_err(|e| e.message().to_owned())
    }

    #[test]
    fn the_text_is_parsed_again_whole() {
        assert_eq!(
            pair(r#"{"n": 1.0, "s": "a", "s": "b"}"#),
            Err("duplicate field `s`".to_owned())
        );
        assert_eq!(
            pair(r#"{"n": 1.0, "nested": {"k": 1.0, "k": 2}}"#),
            Err("`nested`: duplicate field `k`".to_owned())
        );
        // Malformed after the float: where it is malformed, in the text as sent.
        let malformed = pair(r#"{"n": 1.0, "s": }"#);
        assert_eq!(
            malformed,
            Err("arguments are not valid JSON: expected value at line 1 column 17".to_owned())
        );
        assert_eq!(
            pair(r#"{"n": 1.0} x"#),
            Err("arguments are not valid JSON: trailing characters at line 1 column 12".to_owned())
        );
        // Only the integer parameter's numbers are rewritten; a float parameter keeps its own.
        assert_eq!(
            pair(r#"{"n": 2e1, "nested": {"x": 2.0, "k": -1.0}}"#),
            Ok(Pair {
                n: 20,
                s: None,
                name: None,
                nested: Some(Inner { k: -1, x: 2.0 })
            })
        );
        assert_eq!(
            pair(r#"{"n": 1, "nested": {"x": 1, "k": 1e-400}}"#),
            Err(
                "`nested.k`: invalid value: number `1e-400` is not an integer, expected i8"
                    .to_owned()
            )
        );
        // Where serde wants no integer, its own words.
        assert_eq!(
            pair(r#"{"n": 1, "name": 1.5}"#),
            Err("`name`: invalid type: floating point `1.5`, expected a string".to_owned())
        );
        assert_eq!(
            pair(r#"{"n": 1, "name": 2.0}"#),
            Err("`name`: invalid type: integer `2`, expected a string".to_owned())
        );
        let long = format!(r#"{{"n": 0.{}1}}"#, "0".repeat(100));
        assert_eq!(
            pair(&long),
            Err(format!(
                "`n`: invalid value: number `0.{}…` is not an integer, expected u64",
                "0".repeat(38)
            ))
        );
    }
}
