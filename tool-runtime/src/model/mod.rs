//! The model a run talks to: the [`Model`] trait (the conversation and the session's lowered
//! catalog in; text, tool calls and token usage out), the conversation's [`Message`]s, and two
//! models: [`ScriptedModel`] (answers written in advance: tests, demos, replays) and, with the
//! feature `openai-http`, `OpenAiChat`, a client for any OpenAI-compatible Chat Completions
//! endpoint.
//!
//! A model of your own implements [`Model`], or is a closure passed to [`from_fn`].

#[cfg(feature = "openai-http")]
mod openai_http;
mod scripted;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::BoxFuture;

#[cfg(feature = "openai-http")]
pub use openai_http::OpenAiChat;
pub use scripted::ScriptedModel;

use crate::ToolCall;
use crate::providers::{LoweredCatalog, Target};

/// One message of a run's conversation, in no provider's format: a [`Model`] renders the
/// messages in its own.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// Instructions for the model.
    System {
        /// The instructions.
        text: String,
    },
    /// What the user wrote.
    User {
        /// The user's text.
        text: String,
    },
    /// What the model answered: its text, the calls it made, or both.
    Assistant {
        /// The model's text, if it wrote any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        text: Option<String>,
        /// The calls it made, in its order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        calls: Vec<ToolCall>,
    },
    /// The answer to one call, as the model reads it
    /// ([`Observation::text_for_model`](crate::Observation::text_for_model)).
    Tool {
        /// The call this answers.
        call_id: String,
        /// The tool the call named.
        tool: String,
        /// What the model reads: the content, or the error as JSON.
        content: String,
        /// Whether the call failed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User { text: text.into() }
    }

    /// A system message.
    pub fn system(text: impl Into<String>) -> Self {
        Message::System { text: text.into() }
    }

    /// The answers of one turn, one [`Message::Tool`] per observation, in call order.
    pub fn tool_results(report: &crate::TurnReport) -> Vec<Message> {
        report
            .observations()
            .iter()
            .map(|observation| Message::Tool {
                call_id: observation.call_id().to_owned(),
                tool: observation.tool().to_owned(),
                content: observation.text_for_model(),
                is_error: !observation.is_success(),
            })
            .collect()
    }
}

/// What a model is asked: the conversation so far and the tools it may call.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ModelRequest<'a> {
    /// The conversation, oldest first.
    pub messages: &'a [Message],
    /// The tools the session is shown, lowered for the model's [`Model::target`].
    pub tools: &'a LoweredCatalog,
    /// A JSON Schema the answer's text must follow (structured output), when the caller
    /// wants one: the router's classifier asks for `{intent, confidence, reason, entities}`.
    pub response_schema: Option<&'a Value>,
}

impl<'a> ModelRequest<'a> {
    /// A request for `messages` with `tools`.
    pub fn new(messages: &'a [Message], tools: &'a LoweredCatalog) -> Self {
        Self {
            messages,
            tools,
            response_schema: None,
        }
    }

    /// The request, asking for text that follows `schema`.
    #[must_use]
    pub fn with_response_schema(mut self, schema: &'a Value) -> Self {
        self.response_schema = Some(schema);
        self
    }
}

/// What a model answered.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelResponse {
    /// Its text, if it wrote any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// The calls it made (none: it answered).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub calls: Vec<ToolCall>,
    /// The tokens the request and the answer took, when the model reports them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

impl ModelResponse {
    /// An answer in text, without calls.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// An answer made of calls.
    pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Self {
            calls: calls.into_iter().collect(),
            ..Self::default()
        }
    }

    /// The answer, with the usage the model reported.
    #[must_use]
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }
}

/// Tokens a model request took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// The tokens of the request (the prompt).
    pub input_tokens: u64,
    /// The tokens of the answer.
    pub output_tokens: u64,
}

impl Usage {
    /// `input` tokens in, `output` tokens out.
    pub fn new(input_tokens: u64, output_tokens: u64) -> Self {
        Self {
            input_tokens,
            output_tokens,
        }
    }

    /// Both added up.
    pub fn total(&self) -> u64 {
        self.input_tokens.saturating_add(self.output_tokens)
    }

    /// This usage and `other`'s added up.
    #[must_use]
    pub fn plus(&self, other: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(other.input_tokens),
            output_tokens: self.output_tokens.saturating_add(other.output_tokens),
        }
    }
}

/// Why a model gave no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
#[non_exhaustive]
pub struct ModelError {
    /// What went wrong, as a stable name.
    pub kind: ModelErrorKind,
    /// What happened, for a person.
    pub message: String,
    /// The HTTP status the endpoint answered, when it answered one.
    pub status: Option<u16>,
    /// How long the endpoint asked to wait before asking again (`retry-after`).
    pub retry_after: Option<Duration>,
}

impl ModelError {
    /// An error of `kind`.
    pub fn new(kind: ModelErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            status: None,
            retry_after: None,
        }
    }

    /// The error, with the status the endpoint answered.
    #[must_use]
    pub fn with_status(mut self, status: u16) -> Self {
        self.status = Some(status);
        self
    }

    /// The error, with the wait the endpoint asked for.
    #[must_use]
    pub fn with_retry_after(mut self, wait: Duration) -> Self {
        self.retry_after = Some(wait);
        self
    }
}

/// What kind of failure a [`ModelError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The endpoint could not be reached, or the connection dropped before the answer ended.
    Connection,
    /// No answer within the request timeout.
    Timeout,
    /// The endpoint refused for too many requests (HTTP 429), after the retries.
    RateLimited,
    /// The endpoint failed (HTTP 5xx), after the retries.
    Server,
    /// The endpoint refused the request (another HTTP 4xx: a bad key, a bad model name).
    Refused,
    /// The answer did not have the documented shape (or a stream ended without its end).
    Malformed,
    /// The model's configuration is missing or wrong (a base URL, a key).
    Config,
    /// Anything else a model of your own reports.
    Other,
}

impl ModelErrorKind {
    /// The stable name: `connection`, `timeout`, `rate_limited`, `server`, `refused`,
    /// `malformed`, `config`, `other`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            ModelErrorKind::Connection => "connection",
            ModelErrorKind::Timeout => "timeout",
            ModelErrorKind::RateLimited => "rate_limited",
            ModelErrorKind::Server => "server",
            ModelErrorKind::Refused => "refused",
            ModelErrorKind::Malformed => "malformed",
            ModelErrorKind::Config => "config",
            ModelErrorKind::Other => "other",
        }
    }
}

impl fmt::Display for ModelErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A model: given the conversation and the tools, it answers with text, calls, or both.
///
/// The future is `Send`: a run is spawned like any other task.
pub trait Model: Send + Sync + 'static {
    /// The format the tools are lowered for. Default: OpenAI's strict function calling.
    fn target(&self) -> Target {
        Target::OpenAiStrict
    }

    /// A short name for traces and reports (`scripted`, the endpoint's model name).
    fn name(&self) -> &str {
        "model"
    }

    /// The model's answer to `request`.
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>>;
}

impl<M: Model + ?Sized> Model for Arc<M> {
    fn target(&self) -> Target {
        (**self).target()
    }

    fn name(&self) -> &str {
        (**self).name()
    }

    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        (**self).respond(request)
    }
}

/// A model made of a closure, which receives the conversation and the catalog's tool names
/// (for tests, and for models that decide in code).
///
/// ```
/// use tool_runtime::model::{self, Message, ModelResponse};
///
/// let echo = model::from_fn(|messages: &[Message], _tools: &[String]| {
///     let last = messages.iter().rev().find_map(|message| match message {
///         Message::User { text } => Some(text.clone()),
///         _ => None,
///     });
///     Ok(ModelResponse::text(last.unwrap_or_default()))
/// });
/// # let _ = echo;
/// ```
pub fn from_fn<F>(answer: F) -> FnModel<F>
where
    F: Fn(&[Message], &[String]) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
{
    FnModel { answer }
}

/// The model [`from_fn`] makes.
pub struct FnModel<F> {
    answer: F,
}

impl<F> fmt::Debug for FnModel<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FnModel")
    }
}

impl<F> Model for FnModel<F>
where
    F: Fn(&[Message], &[String]) -> Result<ModelResponse, ModelError> + Send + Sync + 'static,
{
    fn name(&self) -> &str {
        "fn"
    }

    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        let names: Vec<String> = request
            .tools
            .tools()
            .map(|tool| tool.name.clone())
            .collect();
        let answer = (self.answer)(request.messages, &names);
        Box::pin(std::future::ready(answer))
    }
}
