//! [`ToolError`]: what a failed call tells the model and the runtime.
//!
//! Every error carries a stable machine-readable [`ErrorKind`] (its string form never changes
//! between releases), a message the model can act on, an optional hint, and whether retrying
//! the same call could succeed ([`ToolError::is_retryable`]).

use std::borrow::Cow;
use std::error::Error as StdError;
use std::fmt;
use std::sync::Arc;

use serde::ser::SerializeStruct;
use serde_json::Value;

/// The stable, machine-readable category of a [`ToolError`].
///
/// The string form ([`ErrorKind::as_str`]) is a protocol: models, traces and dashboards match
/// on it, so it never changes once released.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The arguments did not match the tool's parameters (malformed JSON, wrong type, missing
    /// or unknown field, over a size limit).
    InvalidArguments,
    /// The tool ran and failed (a business error, or a transient failure when retryable).
    ExecutionFailed,
    /// The model named a tool that does not exist.
    UnknownTool,
    /// The tool did not finish within its timeout; its future was dropped.
    Timeout,
    /// The tool panicked; the panic was contained.
    Panicked,
    /// The turn was cancelled before the call finished.
    Cancelled,
    /// The runtime could not provide what the tool needs (for example a context for other
    /// deps, or a timer). A configuration mistake, not the model's.
    Internal,
    /// Tools called tools deeper than the runtime allows.
    CallDepthExceeded,
    /// A tool that runs alongside other calls (parallel-safe) tried to call a tool that must
    /// run alone; the nested call did not run.
    NestedCallRefused,
    /// The tool exists but is outside the session's scope: this request may not call it.
    OutOfScope,
    /// The session's principal lacks a role the tool requires.
    NotPermitted,
    /// The policy or an approver refused the call; the message says why.
    Denied,
    /// The call waits for a person's decision; its details carry the request id to resume.
    ApprovalPending,
    /// The session had too many consecutive denials: its asks and writes are refused until the
    /// application resets it.
    TooManyDenials,
    /// The audit trail could not be written, so the write was not run.
    AuditUnavailable,
    /// A decision handed back to resume a call was refused: forged, replayed, expired, or
    /// for another session, principal, call or arguments.
    InvalidDecision,
    /// The idempotency store could not be reached, so a write that must run once was not run.
    IdempotencyUnavailable,
    /// An explicit idempotency key was reused with other arguments.
    IdempotencyKeyReused,
    /// The same call is running now, and the runtime refuses concurrent duplicates.
    IdempotencyInProgress,
    /// The same call is running in another instance and did not finish within the wait.
    InProgressElsewhere,
    /// An earlier run of the same call was stopped before it finished (timed out, cancelled,
    /// panicked) and may have done its work: the call is not run again until its
    /// idempotency window ends.
    OutcomeUnknown,
    /// The run's budget is spent (too many calls, of the run or of one tool, or too many
    /// repeated calls): the call did not run and the run ends; the details give the reason.
    BudgetExceeded,
    /// A kind defined by a tool or a later layer, in `snake_case`.
    Custom(Cow<'static, str>),
}

impl ErrorKind {
    /// The stable string form, for example `"invalid_arguments"`.
    pub fn as_str(&self) -> &str {
        match self {
            ErrorKind::InvalidArguments => "invalid_arguments",
            ErrorKind::ExecutionFailed => "execution_failed",
            ErrorKind::UnknownTool => "unknown_tool",
            ErrorKind::Timeout => "timeout",
            ErrorKind::Panicked => "panicked",
            ErrorKind::Cancelled => "cancelled",
            ErrorKind::Internal => "internal",
            ErrorKind::CallDepthExceeded => "call_depth_exceeded",
            ErrorKind::NestedCallRefused => "nested_call_refused",
            ErrorKind::OutOfScope => "out_of_scope",
            ErrorKind::NotPermitted => "not_permitted",
            ErrorKind::Denied => "denied",
            ErrorKind::ApprovalPending => "approval_pending",
            ErrorKind::TooManyDenials => "too_many_denials",
            ErrorKind::AuditUnavailable => "audit_unavailable",
            ErrorKind::InvalidDecision => "invalid_decision",
            ErrorKind::IdempotencyUnavailable => "idempotency_unavailable",
            ErrorKind::IdempotencyKeyReused => "idempotency_key_reused",
            ErrorKind::IdempotencyInProgress => "idempotency_in_progress",
            ErrorKind::InProgressElsewhere => "in_progress_elsewhere",
            ErrorKind::OutcomeUnknown => "outcome_unknown",
            ErrorKind::BudgetExceeded => "budget_exceeded",
            ErrorKind::Custom(kind) => kind,
        }
    }
}

impl ErrorKind {
    /// The kind whose string form is `name` ([`ErrorKind::as_str`]); any other name is a
    /// [`ErrorKind::Custom`] kind.
    pub fn from_name(name: &str) -> Self {
        const KNOWN: &[ErrorKind] = &[
            ErrorKind::InvalidArguments,
            ErrorKind::ExecutionFailed,
            ErrorKind::UnknownTool,
            ErrorKind::Timeout,
            ErrorKind::Panicked,
            ErrorKind::Cancelled,
            ErrorKind::Internal,
            ErrorKind::CallDepthExceeded,
            ErrorKind::NestedCallRefused,
            ErrorKind::OutOfScope,
            ErrorKind::NotPermitted,
            ErrorKind::Denied,
            ErrorKind::ApprovalPending,
            ErrorKind::TooManyDenials,
            ErrorKind::AuditUnavailable,
            ErrorKind::InvalidDecision,
            ErrorKind::IdempotencyUnavailable,
            ErrorKind::IdempotencyKeyReused,
            ErrorKind::IdempotencyInProgress,
            ErrorKind::InProgressElsewhere,
            ErrorKind::OutcomeUnknown,
            ErrorKind::BudgetExceeded,
        ];
        KNOWN
            .iter()
            .find(|kind| kind.as_str() == name)
            .cloned()
            .unwrap_or_else(|| ErrorKind::Custom(Cow::Owned(name.to_owned())))
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why a tool call failed, in a form the model can act on.
///
/// A tool returns `Result<T, E>` where `E: Into<ToolError>`. Conversions exist from
/// [`std::io::Error`] (timeouts and interrupted or reset connections are marked transient:
/// retried for read-only and idempotent tools only, since a reset connection may have carried
/// out a write),
/// [`serde_json::Error`], `String`, `&str` and `Box<dyn Error + Send + Sync>`; for your own
/// error type, implement `From<YourError> for ToolError` and decide per variant whether the
/// failure is worth retrying:
///
/// ```
/// use tool_core::ToolError;
///
/// #[derive(Debug, thiserror::Error)]
/// enum BackendError {
///     #[error("backend is overloaded")]
///     Overloaded,
///     #[error("order {0} is closed")]
///     Closed(String),
/// }
///
/// impl From<BackendError> for ToolError {
///     fn from(error: BackendError) -> Self {
///         match error {
///             BackendError::Overloaded => ToolError::transient(error.to_string()),
///             BackendError::Closed(_) => ToolError::failed(error.to_string())
///                 .with_hint("closed orders cannot change; open a ticket instead"),
///         }
///     }
/// }
///
/// let error = ToolError::from(BackendError::Overloaded);
/// assert_eq!(error.kind().as_str(), "execution_failed");
/// assert!(error.is_retryable());
/// ```
///
/// A `ToolError` is one pointer wide, so `Result<T, ToolError>` stays small.
#[derive(Clone)]
pub struct ToolError(Box<Inner>);

#[derive(Clone)]
struct Inner {
    kind: ErrorKind,
    message: String,
    hint: Option<String>,
    retryable: bool,
    safe_to_repeat: bool,
    details: Option<Value>,
    source: Option<Arc<dyn StdError + Send + Sync>>,
}

impl ToolError {
    /// An error of the given kind.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self(Box::new(Inner {
            kind,
            message: message.into(),
            hint: None,
            retryable: false,
            safe_to_repeat: false,
            details: None,
            source: None,
        }))
    }

    /// The tool failed and retrying the same call would fail again (a business error).
    pub fn failed(message: impl fmt::Display) -> Self {
        Self::new(ErrorKind::ExecutionFailed, message.to_string())
    }

    /// The tool failed for a reason that may pass (overload, a dropped connection): the
    /// runtime retries it when the tool is read-only or declares `idempotent`. A write is
    /// retried only when the failure is also [marked safe to repeat](ToolError::safe_to_repeat).
    pub fn transient(message: impl fmt::Display) -> Self {
        Self::failed(message).retryable(true)
    }

    /// Marks the failure transient and safe to repeat: nothing was done (the request was
    /// refused before it took effect, say with HTTP 429 or 503), so even a tool that writes may
    /// be run again. Only the tool can know this; no automatic conversion sets it.
    #[must_use]
    pub fn safe_to_repeat(mut self) -> Self {
        self.0.retryable = true;
        self.0.safe_to_repeat = true;
        self
    }

    /// The arguments did not match the tool's parameters.
    pub fn invalid_arguments(message: impl Into<String>) -> Self {
        Self::new(ErrorKind::InvalidArguments, message)
    }

    /// An error with a kind of your own (`snake_case`, stable).
    pub fn custom(kind: impl Into<Cow<'static, str>>, message: impl Into<String>) -> Self {
        Self::new(ErrorKind::Custom(kind.into()), message)
    }

    /// Adds a hint: what the model should do instead.
    #[must_use]
    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.0.hint = Some(hint.into());
        self
    }

    /// Attaches structured details (a field path, a schema fragment, a limit).
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.0.details = Some(details);
        self
    }

    /// Keeps the underlying error for logs and [`std::error::Error::source`].
    #[must_use]
    pub fn with_source(mut self, source: impl StdError + Send + Sync + 'static) -> Self {
        self.0.source = Some(Arc::new(source));
        self
    }

    /// Marks whether retrying the same call could succeed. Unmarking also clears
    /// [`ToolError::safe_to_repeat`].
    #[must_use]
    pub fn retryable(mut self, retryable: bool) -> Self {
        self.0.retryable = retryable;
        self.0.safe_to_repeat &= retryable;
        self
    }

    /// Replaces the message, keeping everything else.
    #[must_use]
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.0.message = message.into();
        self
    }

    /// The stable category.
    pub fn kind(&self) -> &ErrorKind {
        &self.0.kind
    }

    /// What went wrong, for the model.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// What to do instead, when known.
    pub fn hint(&self) -> Option<&str> {
        self.0.hint.as_deref()
    }

    /// Whether retrying the same call could succeed (the tool marked the failure transient).
    pub fn is_retryable(&self) -> bool {
        self.0.retryable
    }

    /// Whether the tool marked the failure as safe to repeat: nothing was done.
    pub fn is_safe_to_repeat(&self) -> bool {
        self.0.safe_to_repeat
    }

    /// Structured details, when any.
    pub fn details(&self) -> Option<&Value> {
        self.0.details.as_ref()
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("kind", &self.0.kind.as_str())
            .field("message", &self.0.message)
            .field("hint", &self.0.hint)
            .field("retryable", &self.0.retryable)
            .field("details", &self.0.details)
            .finish_non_exhaustive()
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.0.kind, self.0.message)?;
        if let Some(hint) = &self.0.hint {
            write!(f, " (hint: {hint})")?;
        }
        Ok(())
    }
}

impl StdError for ToolError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        self.0
            .source
            .as_deref()
            .map(|source| source as &(dyn StdError + 'static))
    }
}

impl PartialEq for ToolError {
    fn eq(&self, other: &Self) -> bool {
        self.0.kind == other.0.kind
            && self.0.message == other.0.message
            && self.0.hint == other.0.hint
            && self.0.retryable == other.0.retryable
            && self.0.safe_to_repeat == other.0.safe_to_repeat
            && self.0.details == other.0.details
    }
}

impl serde::Serialize for ToolError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut state = serializer.serialize_struct("ToolError", 5)?;
        state.serialize_field("kind", self.0.kind.as_str())?;
        state.serialize_field("message", &self.0.message)?;
        if let Some(hint) = &self.0.hint {
            state.serialize_field("hint", hint)?;
        } else {
            state.skip_field("hint")?;
        }
        state.serialize_field("retryable", &self.0.retryable)?;
        if let Some(details) = &self.0.details {
            state.serialize_field("details", details)?;
        } else {
            state.skip_field("details")?;
        }
        state.end()
    }
}

impl From<std::io::Error> for ToolError {
    fn from(error: std::io::Error) -> Self {
        use std::io::ErrorKind as Io;
        let transient = matches!(
            error.kind(),
            Io::TimedOut
                | Io::Interrupted
                | Io::WouldBlock
                | Io::ConnectionReset
                | Io::ConnectionAborted
                | Io::ConnectionRefused
                | Io::BrokenPipe
        );
        ToolError::failed(&error)
            .retryable(transient)
            .with_source(error)
    }
}

impl From<serde_json::Error> for ToolError {
    fn from(error: serde_json::Error) -> Self {
        ToolError::failed(&error).with_source(error)
    }
}

impl From<String> for ToolError {
    fn from(message: String) -> Self {
        ToolError::failed(message)
    }
}

impl From<&str> for ToolError {
    fn from(message: &str) -> Self {
        ToolError::failed(message)
    }
}

impl From<Box<dyn StdError + Send + Sync>> for ToolError {
    fn from(error: Box<dyn StdError + Send + Sync>) -> Self {
        let mut tool_error = ToolError::failed(error.to_string());
        tool_error.0.source = Some(Arc::from(error));
        tool_error
    }
}

impl From<std::convert::Infallible> for ToolError {
    fn from(never: std::convert::Infallible) -> Self {
        match never {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_timeouts_are_transient_and_not_found_is_not() {
        let timed_out = ToolError::from(std::io::Error::new(std::io::ErrorKind::TimedOut, "slow"));
        assert!(timed_out.is_retryable());
        let missing = ToolError::from(std::io::Error::new(std::io::ErrorKind::NotFound, "gone"));
        assert!(!missing.is_retryable());
        assert_eq!(missing.kind(), &ErrorKind::ExecutionFailed);
        assert!(missing.source().is_some());
    }

    #[test]
    fn serializes_with_stable_kind_and_without_empty_fields() {
        let error = ToolError::invalid_arguments("`limit`: expected u32").with_hint("pass 1..=50");
        let json = serde_json::to_string(&error).ok();
        assert_eq!(
            json.as_deref(),
            Some(
                r#"{"kind":"invalid_arguments","message":"`limit`: expected u32","hint":"pass 1..=50","retryable":false}"#
            )
        );
    }
}
