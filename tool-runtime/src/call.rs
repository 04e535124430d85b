//! What a model emits in one turn: [`ToolCall`]s, and the [`Session`] they belong to.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::ToolArgs;

/// The arguments of one call, as the provider delivered them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Arguments {
    /// JSON text (OpenAI sends arguments as a string, possibly malformed).
    Json(String),
    /// A parsed value (Anthropic, Gemini, MCP).
    Value(Value),
}

impl Arguments {
    /// The arguments as a tool reads them.
    pub fn as_tool_args(&self) -> ToolArgs<'_> {
        match self {
            Arguments::Json(text) => ToolArgs::Json(text),
            Arguments::Value(value) => ToolArgs::Value(value.clone()),
        }
    }
}

impl From<String> for Arguments {
    fn from(text: String) -> Self {
        Arguments::Json(text)
    }
}

impl From<&str> for Arguments {
    fn from(text: &str) -> Self {
        Arguments::Json(text.to_owned())
    }
}

impl From<Value> for Arguments {
    fn from(value: Value) -> Self {
        Arguments::Value(value)
    }
}

/// One tool call a model emitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; the observation answers it (sharing this string).
    pub id: Arc<str>,
    /// The tool the model named (which may not exist).
    pub name: String,
    /// The arguments the model sent.
    pub arguments: Arguments,
}

impl ToolCall {
    /// A call of `name` with `arguments`, answered under `id`.
    pub fn new(
        id: impl Into<Arc<str>>,
        name: impl Into<String>,
        arguments: impl Into<Arguments>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

/// The conversation a turn belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    id: Arc<str>,
}

impl Session {
    /// A session with the given id.
    pub fn new(id: impl Into<Arc<str>>) -> Self {
        Self { id: id.into() }
    }

    /// The session id, as tools see it in their context.
    pub fn id(&self) -> &str {
        &self.id
    }

    pub(crate) fn shared_id(&self) -> Arc<str> {
        Arc::clone(&self.id)
    }
}
