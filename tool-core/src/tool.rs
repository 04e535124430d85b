//! The [`Tool`] trait, its arguments ([`ToolArgs`]) and its output ([`ToolOutput`]).

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::args;
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
pub enum ToolArgs<'a> {
    /// Arguments as JSON text.
    Json(&'a str),
    /// Arguments as a parsed JSON value.
    Value(Value),
}

impl ToolArgs<'_> {
    /// The arguments as a JSON value (parsing a string form).
    pub fn into_value(self) -> Result<Value, ToolError> {
        match self {
            ToolArgs::Value(value) => Ok(value),
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

/// What a successful call produced: its JSON serialization, plus page metadata for a
/// pagination tool.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    json: String,
    // Boxed: most outputs are not pages, and a small `ToolOutput` moves cheaply.
    page: Option<Box<PageInfo>>,
}

impl ToolOutput {
    /// Serializes `value` as the output.
    pub fn from_serialize<T: serde::Serialize + ?Sized>(value: &T) -> Result<Self, ToolError> {
        serde_json::to_string(value)
            .map(Self::from_json)
            .map_err(|error| {
                ToolError::failed(format!(
                    "the tool's result could not be serialized: {error}"
                ))
            })
    }

    /// An output from JSON text the caller guarantees is valid.
    pub fn from_json(json: String) -> Self {
        Self { json, page: None }
    }

    /// Attaches page metadata.
    #[must_use]
    pub fn with_page(mut self, page: PageInfo) -> Self {
        self.page = Some(Box::new(page));
        self
    }

    /// The result as JSON text.
    pub fn json(&self) -> &str {
        &self.json
    }

    /// The result as the model should read it: a JSON string result unquoted, anything else
    /// as JSON text.
    pub fn text(&self) -> Cow<'_, str> {
        if self.json.starts_with('"')
            && let Ok(text) = serde_json::from_str::<String>(&self.json)
        {
            return Cow::Owned(text);
        }
        Cow::Borrowed(&self.json)
    }

    /// The result as the model should read it, consuming the output (no copy unless the result
    /// is a JSON string, which is unquoted).
    pub fn into_text(self) -> String {
        if let Cow::Owned(text) = self.text() {
            return text;
        }
        self.json
    }

    /// The result as a JSON value.
    pub fn to_value(&self) -> Value {
        serde_json::from_str(&self.json).unwrap_or_else(|_| Value::String(self.json.clone()))
    }

    /// Page metadata, for a pagination tool.
    pub fn page(&self) -> Option<&PageInfo> {
        self.page.as_deref()
    }

    /// The JSON text, consuming the output.
    pub fn into_json(self) -> String {
        self.json
    }
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
