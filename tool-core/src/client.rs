//! What a tool can ask of the client that made the call: progress, log messages, a model's
//! completion (sampling) and a person's input (elicitation).
//!
//! A call that came over MCP has a client on the other end; the server puts a [`ClientLink`]
//! in the call's session and [`RunContext`](crate::RunContext)'s methods reach it. A call made
//! any other way has none: progress and log messages go nowhere (a no-op), and sampling and
//! elicitation answer [`ClientError::NoClient`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::BoxFuture;

/// The way back to the client that made a call. The MCP server implements it; an
/// application serving another protocol may too.
pub trait ClientLink: Send + Sync + 'static {
    /// Reports how far the call has come. Dropped when the client asked for no progress.
    fn progress(&self, progress: Progress) -> BoxFuture<'_, ()>;

    /// Sends a log message. Dropped when it is below the level the client asked for.
    fn log(&self, message: LogMessage) -> BoxFuture<'_, ()>;

    /// Asks the client's model for a completion.
    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, Result<Sampled, ClientError>>;

    /// Asks the client's user for input of the given shape.
    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<Elicited, ClientError>>;

    /// Whether the client said it answers [`ClientLink::sample`].
    fn can_sample(&self) -> bool;

    /// Whether the client said it answers [`ClientLink::elicit`].
    fn can_elicit(&self) -> bool;
}

/// How far a call has come.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Progress {
    /// Done so far; grows with each report.
    pub progress: f64,
    /// The whole, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What is being done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Progress {
    /// `progress` done of an unknown whole.
    pub fn new(progress: f64) -> Self {
        Self {
            progress,
            total: None,
            message: None,
        }
    }

    /// The same report, out of `total`.
    #[must_use]
    pub fn of(mut self, total: f64) -> Self {
        self.total = Some(total);
        self
    }

    /// The same report, saying what is being done.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = Some(message.into());
        self
    }
}

/// A log message's severity, as syslog (RFC 5424) and MCP name them, least severe first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed information for debugging.
    Debug,
    /// What happened, in the normal course.
    Info,
    /// Normal but significant.
    Notice,
    /// Something to look at.
    Warning,
    /// Something failed.
    Error,
    /// A failure of a whole part.
    Critical,
    /// Someone must act now.
    Alert,
    /// Nothing works.
    Emergency,
}

/// A log message for the client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LogMessage {
    /// Its severity.
    pub level: LogLevel,
    /// Who logs it (the tool's name, when the context sent it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// What is logged: a string or any JSON value.
    pub data: Value,
}

/// A request for a completion from the client's model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The conversation, oldest first.
    pub messages: Vec<SamplingMessage>,
    /// The system prompt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// At most this many tokens in the answer.
    pub max_tokens: u32,
    /// Sampling temperature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
}

impl SamplingRequest {
    /// A request of one user message, answered in at most `max_tokens` tokens.
    pub fn new(prompt: impl Into<String>, max_tokens: u32) -> Self {
        Self {
            messages: vec![SamplingMessage {
                role: Role::User,
                text: prompt.into(),
            }],
            system_prompt: None,
            max_tokens,
            temperature: None,
        }
    }

    /// The same request with a system prompt.
    #[must_use]
    pub fn with_system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// The same request with one more message.
    #[must_use]
    pub fn with_message(mut self, role: Role, text: impl Into<String>) -> Self {
        self.messages.push(SamplingMessage {
            role,
            text: text.into(),
        });
        self
    }
}

/// Who says a message of a sampled conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One text message of a sampled conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who says it.
    pub role: Role,
    /// What is said.
    pub text: String,
}

/// The client model's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Sampled {
    /// The answer's text (empty when the answer is not text).
    pub text: String,
    /// The model that answered.
    pub model: String,
    /// Why the model stopped, as the client says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// The answer's content as the client sent it.
    pub content: Value,
}

/// A request for input from the client's user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Elicitation {
    /// What the user is asked.
    pub message: String,
    /// The shape of the answer: a JSON Schema object of flat properties (strings, numbers,
    /// booleans, enums), as MCP's elicitation allows.
    pub schema: Value,
}

impl Elicitation {
    /// Asks `message`, expecting an answer of `schema`'s shape.
    pub fn new(message: impl Into<String>, schema: Value) -> Self {
        Self {
            message: message.into(),
            schema,
        }
    }
}

/// The user's answer to an [`Elicitation`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "action", content = "content", rename_all = "lowercase")]
pub enum Elicited {
    /// The user answered; the content has the schema's shape.
    Accept(Value),
    /// The user said no.
    Decline,
    /// The user dismissed the question without answering.
    Cancel,
}

/// Why the client could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The call came with no client to ask (it was not made over MCP).
    #[error("this call has no client to ask: it was not made over MCP")]
    NoClient,
    /// The client did not say it supports this request.
    #[error("the client does not support {0}")]
    Unsupported(&'static str),
    /// The client answered with an error, or the connection failed.
    #[error("the client could not answer: {0}")]
    Failed(String),
}

impl From<ClientError> for crate::ToolError {
    /// A tool that `?`s a client's failure fails with its message.
    fn from(error: ClientError) -> Self {
        crate::ToolError::failed(error.to_string())
    }
}
