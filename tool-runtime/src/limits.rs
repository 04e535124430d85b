//! Runtime-wide limits, and the cheap checks that enforce the argument limits before any
//! parsing: a model can send 10 MiB of arguments or nest them 10,000 levels deep.

use std::time::Duration;

use serde_json::Value;
use tool_core::ToolError;

use crate::arguments::Arguments;

/// Limits that apply to every call unless a tool declares its own.
///
/// Start from the defaults and change what differs; the runtime checks the values when it is
/// built ([`RuntimeBuilder::build`](crate::RuntimeBuilder::build)):
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::Limits;
///
/// let limits = Limits::default()
///     .with_max_concurrency(8)
///     .with_default_timeout(Some(Duration::from_secs(10)));
/// assert_eq!(limits.max_concurrency(), 8);
/// assert_eq!(limits.max_output_chars(), 16_000);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Limits {
    pub(crate) default_timeout: Option<Duration>,
    pub(crate) max_concurrency: usize,
    pub(crate) max_output_chars: usize,
    pub(crate) max_argument_bytes: usize,
    pub(crate) max_argument_depth: usize,
    pub(crate) max_call_depth: u32,
}

impl Limits {
    /// Timeout of a tool that declares none. `None`: no timeout. Default 60 s.
    pub fn default_timeout(&self) -> Option<Duration> {
        self.default_timeout
    }

    /// The most calls of one batch that run at the same time. Default 128: tool calls mostly
    /// wait on I/O, and a model rarely emits more calls in one turn, so a turn's reads all run
    /// together. A backend that must not see many calls at once is protected better by
    /// declaring it as a resource of its tools (`resources("db")`): calls that share a
    /// resource never run at the same time.
    pub fn max_concurrency(&self) -> usize {
        self.max_concurrency
    }

    /// Output characters the model receives from a tool that declares no limit. Default
    /// 16,000.
    pub fn max_output_chars(&self) -> usize {
        self.max_output_chars
    }

    /// The largest arguments accepted, in bytes of JSON. Default 1 MiB.
    pub fn max_argument_bytes(&self) -> usize {
        self.max_argument_bytes
    }

    /// The deepest nesting of arrays and objects accepted in arguments (at most
    /// [`MAX_ARGUMENT_DEPTH`](crate::MAX_ARGUMENT_DEPTH)). Default 64.
    pub fn max_argument_depth(&self) -> usize {
        self.max_argument_depth
    }

    /// How deeply tools may call tools (`RunContext::call_tool`; at most
    /// [`MAX_CALL_DEPTH`](crate::MAX_CALL_DEPTH)). Default 4.
    pub fn max_call_depth(&self) -> u32 {
        self.max_call_depth
    }

    /// Sets [`default_timeout`](Self::default_timeout).
    #[must_use]
    pub fn with_default_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Sets [`max_concurrency`](Self::max_concurrency) (at least 1).
    #[must_use]
    pub fn with_max_concurrency(mut self, max: usize) -> Self {
        self.max_concurrency = max;
        self
    }

    /// Sets [`max_output_chars`](Self::max_output_chars) (at least 1).
    #[must_use]
    pub fn with_max_output_chars(mut self, max: usize) -> Self {
        self.max_output_chars = max;
        self
    }

    /// Sets [`max_argument_bytes`](Self::max_argument_bytes).
    #[must_use]
    pub fn with_max_argument_bytes(mut self, max: usize) -> Self {
        self.max_argument_bytes = max;
        self
    }

    /// Sets [`max_argument_depth`](Self::max_argument_depth) (1 to
    /// [`MAX_ARGUMENT_DEPTH`](crate::MAX_ARGUMENT_DEPTH)).
    #[must_use]
    pub fn with_max_argument_depth(mut self, max: usize) -> Self {
        self.max_argument_depth = max;
        self
    }

    /// Sets [`max_call_depth`](Self::max_call_depth) (at most
    /// [`MAX_CALL_DEPTH`](crate::MAX_CALL_DEPTH)).
    #[must_use]
    pub fn with_max_call_depth(mut self, max: u32) -> Self {
        self.max_call_depth = max;
        self
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            default_timeout: Some(Duration::from_secs(60)),
            max_concurrency: 128,
            max_output_chars: 16_000,
            max_argument_bytes: 1 << 20,
            max_argument_depth: 64,
            max_call_depth: 4,
        }
    }
}

/// Rejects arguments over the size or depth limit, without parsing them.
pub(crate) fn check_arguments(arguments: &Arguments, limits: &Limits) -> Result<(), ToolError> {
    let (bytes, depth) = match arguments {
        // Each level of nesting takes a byte: text no longer than the limit, or with no more
        // opening brackets than the limit, cannot pass it.
        Arguments::Json(text) if text.len() <= limits.max_argument_depth => (text.len(), 0),
        Arguments::Json(text)
            if memchr::memchr2_iter(b'[', b'{', text.as_bytes()).count()
                <= limits.max_argument_depth =>
        {
            (text.len(), 0)
        }
        Arguments::Json(text) => (text.len(), text_depth(text)),
        Arguments::Value(value) => (
            value_size(value, limits.max_argument_bytes),
            value_depth(value),
        ),
    };
    if bytes > limits.max_argument_bytes {
        return Err(ToolError::invalid_arguments(format!(
            "arguments are {bytes} bytes; the limit is {} bytes",
            limits.max_argument_bytes
        ))
        .with_hint("send smaller arguments: pass references (ids, paths) instead of content")
        .with_details(serde_json::json!({ "limit": "max_argument_bytes", "max": limits.max_argument_bytes, "found": bytes })));
    }
    if depth > limits.max_argument_depth {
        return Err(ToolError::invalid_arguments(format!(
            "arguments nest {depth} levels deep; the limit is {} levels",
            limits.max_argument_depth
        ))
        .with_details(serde_json::json!({ "limit": "max_argument_depth", "max": limits.max_argument_depth, "found": depth })));
    }
    Ok(())
}

/// The deepest nesting of `[` and `{` in JSON text, ignoring brackets inside strings.
/// Malformed text is measured as far as it goes; the parser reports the error itself.
fn text_depth(text: &str) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0_usize, 0_usize, false, false);
    for byte in text.bytes() {
        if in_string {
            match (escaped, byte) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// The nesting depth of a value, without recursion (a value built in code can be deeper than
/// the stack allows).
fn value_depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0_usize)];
    while let Some((value, depth)) = stack.pop() {
        match value {
            Value::Array(items) => {
                deepest = deepest.max(depth + 1);
                stack.extend(items.iter().map(|item| (item, depth + 1)));
            }
            Value::Object(entries) => {
                deepest = deepest.max(depth + 1);
                stack.extend(entries.values().map(|entry| (entry, depth + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// The serialized size of a value, counted until it passes `cap`.
fn value_size(value: &Value, cap: usize) -> usize {
    let mut size = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        size += match value {
            Value::Null => 4,
            Value::Bool(_) => 5,
            Value::Number(number) => number.to_string().len(),
            Value::String(text) => text.len() + 2,
            Value::Array(items) => {
                stack.extend(items.iter());
                items.len() + 1
            }
            Value::Object(entries) => {
                for (key, entry) in entries {
                    size += key.len() + 3;
                    stack.push(entry);
                }
                entries.len() + 1
            }
        };
        if size > cap {
            break;
        }
    }
    size
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_ignores_brackets_in_strings() {
        assert_eq!(text_depth(r#"{"a": "[[[{{{", "b": [1, {"c": []}]}"#), 4);
        assert_eq!(text_depth(r#"{"a": "\"[["}"#), 1);
        assert_eq!(text_depth("not json"), 0);
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(text_depth(&deep), 10_000);
    }

    #[test]
    fn value_depth_and_size() {
        let value = serde_json::json!({"a": [1, {"b": null}], "c": "xy"});
        assert_eq!(value_depth(&value), 3);
        assert_eq!(value_size(&value, usize::MAX), value.to_string().len());
    }
}
