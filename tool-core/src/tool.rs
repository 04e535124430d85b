//! The [`Tool`] trait, its arguments ([`ToolArgs`]) and its output ([`ToolOutput`]).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::OnceLock;

use serde_json::Value;

use crate::args;
use crate::as_text::{self, Serialized};
use crate::context::{CallContext, DepsType};
use crate::error::ToolError;
use crate::page::PageInfo;
use crate::spec::ToolSpec;

/// A boxed, `Send` future.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The future that runs one prepared call of a tool.
pub type ToolFuture = BoxFuture<'static, Result<ToolOutput, ToolError>>;

/// The arguments of one call, as the model sent them.
///
/// Providers hand arguments over either as a JSON string (OpenAI) or as a parsed value
/// (Anthropic, Gemini, MCP); a tool accepts both and parses a string directly into its
/// parameters, without an intermediate [`Value`]. An empty string and `null` mean "no
/// arguments", the same as `{}`.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ToolArgs<'a> {
    /// Arguments as JSON text.
    Json(&'a str),
    /// Arguments as a parsed JSON value.
    Value(Value),
    /// Arguments parsed already by the caller, which keeps them (the runtime, whose other
    /// stages read the same value): the tool reads them without a copy.
    Parsed(&'a Value),
}

impl ToolArgs<'_> {
    /// The arguments as a JSON value (parsing a string form).
    pub fn into_value(self) -> Result<Value, ToolError> {
        match self {
            ToolArgs::Value(value) => Ok(value),
            ToolArgs::Parsed(value) => Ok(value.clone()),
            ToolArgs::Json(text) if text.trim().is_empty() => Ok(Value::Object(Default::default())),
            ToolArgs::Json(text) => {
                serde_json::from_str(text).map_err(|error| args::malformed_json(&error))
            }
        }
    }
}

impl<'a> From<&'a str> for ToolArgs<'a> {
    fn from(text: &'a str) -> Self {
        ToolArgs::Json(text)
    }
}

impl<'a> From<&'a String> for ToolArgs<'a> {
    fn from(text: &'a String) -> Self {
        ToolArgs::Json(text)
    }
}

impl From<Value> for ToolArgs<'_> {
    fn from(value: Value) -> Self {
        ToolArgs::Value(value)
    }
}

/// What a successful call produced: its JSON serialization (or, for a string result, its
/// text), plus page metadata for a pagination tool.
#[derive(Clone)]
pub struct ToolOutput {
    body: Body,
    // Boxed: most outputs are not pages, and a small `ToolOutput` moves cheaply.
    page: Option<Box<PageInfo>>,
}

#[derive(Debug, Clone)]
enum Body {
    Json(String),
    /// A string result, kept as the text the model reads; its JSON is made only when asked
    /// for.
    Text {
        text: String,
        json: OnceLock<String>,
    },
    /// [`Contents`](crate::Contents): the blocks' JSON.
    Blocks(String),
}

impl PartialEq for ToolOutput {
    /// Outputs are equal when their JSON and pages are (two string results: their texts).
    fn eq(&self, other: &Self) -> bool {
        let same = match (&self.body, &other.body) {
            (Body::Text { text, .. }, Body::Text { text: other, .. }) => text == other,
            _ => {
                self.content_blocks_json().is_some() == other.content_blocks_json().is_some()
                    && self.json() == other.json()
            }
        };
        same && self.page == other.page
    }
}

impl std::fmt::Debug for ToolOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("ToolOutput");
        match &self.body {
            Body::Json(json) => debug.field("json", json),
            Body::Text { text, .. } => debug.field("text", text),
            Body::Blocks(json) => debug.field("blocks", json),
        };
        debug.field("page", &self.page).finish()
    }
}

impl ToolOutput {
    /// Serializes `value` as the output. A value that serializes as one string (`String`,
    /// `&str`, `Arc<str>`, a JSON string) is kept as its text.
    #[inline(always)]
    pub fn from_serialize<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        match as_text::serialize(value) {
            Ok(Serialized::Text(text)) => Ok(Self::from_text(text)),
            Ok(Serialized::Json(json)) => Ok(Self::from_json(json)),
            Ok(Serialized::Blocks(json)) => Ok(Self {
                body: Body::Blocks(json),
                page: None,
            }),
            Err(error) => Err(ToolError::failed(format!(
                "the tool's result could not be serialized: {error}"
            ))),
        }
    }

    /// An output from JSON text the caller guarantees is valid.
    #[inline]
    pub fn from_json(json: String) -> Self {
        Self {
            body: Body::Json(json),
            page: None,
        }
    }

    /// A string result: the model reads `text` as it is.
    #[inline]
    pub fn from_text(text: String) -> Self {
        Self {
            body: Body::Text {
                text,
                json: OnceLock::new(),
            },
            page: None,
        }
    }

    /// Attaches page metadata.
    #[must_use]
    pub fn with_page(mut self, page: PageInfo) -> Self {
        self.page = Some(Box::new(page));
        self
    }

    /// The result as JSON text.
    #[inline]
    pub fn json(&self) -> &str {
        match &self.body {
            Body::Json(json) | Body::Blocks(json) => json,
            Body::Text { text, json } => json.get_or_init(|| quote(text)),
        }
    }

    /// Whether the output is a string result kept as its text ([`ToolOutput::text`] is then
    /// free, and [`ToolOutput::json`] is made on first use).
    #[inline]
    pub fn is_text(&self) -> bool {
        matches!(self.body, Body::Text { .. })
    }

    /// The result as the model should read it: a JSON string result unquoted, anything else
    /// as JSON text.
    pub fn text(&self) -> Cow<'_, str> {
        match &self.body {
            Body::Text { text, .. } => Cow::Borrowed(text),
            Body::Blocks(json) => Cow::Borrowed(json),
            Body::Json(json) => {
                if json.starts_with('"')
                    && let Ok(text) = serde_json::from_str::<String>(json)
                {
                    return Cow::Owned(text);
                }
                Cow::Borrowed(json)
            }
        }
    }

    /// The result as the model should read it, consuming the output (no copy unless the result
    /// is a JSON string, which is unquoted).
    #[inline]
    pub fn into_text(self) -> String {
        match self.body {
            Body::Text { text, .. } | Body::Blocks(text) => text,
            Body::Json(json) => {
                if json.starts_with('"')
                    && let Ok(text) = serde_json::from_str::<String>(&json)
                {
                    return text;
                }
                json
            }
        }
    }

    /// The result as a JSON value.
    pub fn to_value(&self) -> Value {
        match &self.body {
            Body::Text { text, .. } => Value::String(text.clone()),
            Body::Json(json) | Body::Blocks(json) => {
                serde_json::from_str(json).unwrap_or_else(|_| Value::String(json.clone()))
            }
        }
    }

    /// Page metadata, for a pagination tool.
    pub fn page(&self) -> Option<&PageInfo> {
        self.page.as_deref()
    }

    /// The JSON text, consuming the output.
    #[inline(always)]
    pub fn into_json(self) -> String {
        match self.body {
            Body::Json(json) | Body::Blocks(json) => json,
            Body::Text { text, json } => json.into_inner().unwrap_or_else(|| quote(&text)),
        }
    }

    /// The JSON of the content blocks, when the tool returned [`Contents`](crate::Contents).
    #[inline]
    pub fn content_blocks_json(&self) -> Option<&str> {
        match &self.body {
            Body::Blocks(json) => Some(json),
            _ => None,
        }
    }

    /// The content blocks, when the tool returned [`Contents`](crate::Contents).
    pub fn content_blocks(&self) -> Option<Vec<crate::Content>> {
        serde_json::from_str(self.content_blocks_json()?).ok()
    }
}

/// `text` as a JSON string (serializing a string cannot fail). Kept out of line, so that the
/// accessors around it stay small enough to inline.
#[inline(never)]
fn quote(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// A tool: a definition the model and the runtime read, and a way to call it.
///
/// The `#[tool]` macro implements this for a function; the runtime implements it for dynamic
/// tools. The trait is object safe: registries hold `dyn Tool`.
pub trait Tool: Send + Sync + 'static {
    /// The tool's definition. Built once and cached.
    fn spec(&self) -> &ToolSpec;

    /// The deps type this tool's context needs, or `None` when it works with any.
    fn deps_type(&self) -> Option<DepsType>;

    /// Whether [`Tool::prepare`] reads the call's context. When it does not, a runtime may hand
    /// it a context without the call's identity and skip building one per call.
    fn takes_context(&self) -> bool {
        true
    }

    /// Prepares one call: parses and validates `args` and takes from `call` the context the
    /// tool asks for (a tool that takes none leaves it untouched).
    ///
    /// An error here (`invalid_arguments`, or `internal` for a context the runtime cannot
    /// provide) means nothing ran. The returned future runs the tool when polled; preparing
    /// again from the same arguments gives a fresh attempt.
    fn prepare(&self, args: ToolArgs<'_>, call: &CallContext) -> Result<ToolFuture, ToolError>;

    /// Prepares and runs one call.
    fn call(&self, args: ToolArgs<'_>, call: &CallContext) -> ToolFuture {
        match self.prepare(args, call) {
            Ok(future) => future,
            Err(error) => Box::pin(std::future::ready(Err(error))),
        }
    }
}

/// A `#[tool]` (`name::tool()`) is a `&'static dyn Tool`, and is a tool itself: it can be
/// handed wherever a tool is taken (`RuntimeBuilder::tool(get_order_status::tool())`).
impl Tool for &'static dyn Tool {
    fn spec(&self) -> &ToolSpec {
        (**self).spec()
    }

    fn deps_type(&self) -> Option<DepsType> {
        (**self).deps_type()
    }

    fn takes_context(&self) -> bool {
        (**self).takes_context()
    }

    fn prepare(&self, args: ToolArgs<'_>, call: &CallContext) -> Result<ToolFuture, ToolError> {
        (**self).prepare(args, call)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::ToolOutput;

    #[test]
    fn a_string_result_is_kept_as_its_text_and_reads_as_the_same_json() {
        let text = "line one\n\"quoted\" é";
        let Ok(output) = ToolOutput::from_serialize(text) else {
            panic!("a string serializes");
        };
        assert!(output.is_text());
        assert_eq!(output.text(), text);
        // The same output as the JSON form the model used to be given.
        let json = ToolOutput::from_json(json!(text).to_string());
        assert!(!json.is_text());
        assert_eq!(output, json);
        assert_eq!(output.json(), json.json());
        assert_eq!(output.to_value(), json!(text));
        assert_eq!(output.clone().into_json(), json.clone().into_json());
        assert_eq!(output.into_text(), json.into_text());
    }

    #[test]
    fn other_results_are_json() {
        let Ok(output) = ToolOutput::from_serialize(&json!({ "n": 1 })) else {
            panic!("a value serializes");
        };
        assert!(!output.is_text());
        assert_eq!(output.json(), r#"{"n":1}"#);
        assert_eq!(output.text(), r#"{"n":1}"#);
    }
}
