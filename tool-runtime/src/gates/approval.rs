//! Approvals: a person's answer to a call the policy asked about.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::{BoxFuture, RiskLevel};

/// What a person sees before deciding: built by a tool's preview function from the call's
/// validated arguments (see [`RuntimeBuilder::preview`](crate::RuntimeBuilder::preview)).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preview {
    /// One line: what the call will do.
    pub title: String,
    /// A few lines of detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// The change, as a diff, for a call that edits something.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff: Option<String>,
    /// The command, for a call that runs one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// What the call touches (files, records, accounts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<String>,
}

impl Preview {
    /// A preview with a title.
    pub fn new(title: impl Into<String>) -> Self {
        Self {
            title: title.into(),
            ..Self::default()
        }
    }

    /// The preview with a summary.
    #[must_use]
    pub fn with_summary(mut self, summary: impl Into<String>) -> Self {
        self.summary = Some(summary.into());
        self
    }

    /// The preview with a diff.
    #[must_use]
    pub fn with_diff(mut self, diff: impl Into<String>) -> Self {
        self.diff = Some(diff.into());
        self
    }

    /// The preview with a command.
    #[must_use]
    pub fn with_command(mut self, command: impl Into<String>) -> Self {
        self.command = Some(command.into());
        self
    }

    /// The preview with one more affected resource.
    #[must_use]
    pub fn with_resource(mut self, resource: impl Into<String>) -> Self {
        self.resources.push(resource.into());
        self
    }
}

/// A tool's preview function: from the validated arguments to what a person is shown.
pub(crate) type PreviewFn = Arc<dyn Fn(&Value) -> Preview + Send + Sync>;

/// A call the policy asked about, as an [`Approver`] sees it. Its arguments passed
/// validation; secrets in them are redacted.
#[derive(Debug, Clone, Serialize)]
#[non_exhaustive]
pub struct ApprovalRequest {
    /// The session the call belongs to.
    pub session: String,
    /// The principal acting in the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub principal: Option<String>,
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The tool's risk level.
    pub risk: RiskLevel,
    /// The validated arguments (redacted).
    pub arguments: Value,
    /// Why the policy asked.
    pub reason: String,
    /// What the call will do, when the tool has a preview.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<Preview>,
}

/// An approver's answer.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Approval {
    /// Run the call as it is.
    Approve,
    /// Run the call with these arguments instead. They are validated against the tool's
    /// schema again; arguments that fail are a denial naming the field. A string left as the
    /// request showed it (redacted) stands for the value it hides; a placeholder anywhere else
    /// (inside a changed string, in an array whose items were added or removed) is a denial
    /// naming the field.
    ApproveWith(Value),
    /// Refuse the call; the reason is what the model is told.
    Deny(String),
    /// Decide later: the call is answered `approval_pending` with a request id, and the
    /// application resumes it with a signed decision ([`Runtime::resume`](crate::Runtime::resume)).
    Pending,
}

/// Answers the calls the policy asks about: a terminal prompt, a web application, a queue.
///
/// ```
/// use tool_runtime::BoxFuture;
/// use tool_runtime::approvals::{Approval, ApprovalRequest, Approver};
///
/// /// Approves refunds up to 50, denies the rest.
/// struct SmallRefunds;
///
/// impl Approver for SmallRefunds {
///     fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
///         Box::pin(async move {
///             match request.arguments["amount"].as_f64() {
///                 Some(amount) if amount <= 50.0 => Approval::Approve,
///                 _ => Approval::Deny("refunds over 50 go through a manager".into()),
///             }
///         })
///     }
/// }
/// ```
pub trait Approver: Send + Sync + 'static {
    /// The answer for one call.
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval>;
}

impl<T: Approver + ?Sized> Approver for Arc<T> {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        (**self).decide(request)
    }
}
