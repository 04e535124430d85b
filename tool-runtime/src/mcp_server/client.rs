//! The way back to an MCP client from a call it made: progress and log notifications,
//! sampling and elicitation requests; and the client's user as the approver of the calls the
//! policy asks about.

// Logging, sampling and elicitation are marked deprecated in rmcp for the protocol's newest
// revision (SEP-2577); the revisions clients speak today (2025-06-18, 2025-11-25) have them.
#![allow(deprecated)]

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitationAction, LoggingLevel,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::service::{Peer, RequestContext};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use tool_core::BoxFuture;
use tool_core::client::{
    ClientError, ClientLink, Elicitation, Elicited, LogLevel, LogMessage, Progress, Sampled,
    SamplingRequest,
};

use crate::approvals::{Approval, ApprovalRequest, Approver};

/// One request's link to its client.
pub(crate) struct McpClient {
    peer: Peer<RoleServer>,
    progress_token: Option<ProgressToken>,
    /// The MCP session's log level ([`level_rank`]), which `logging/setLevel` changes.
    log_level: Arc<AtomicU8>,
    can_sample: bool,
    can_elicit: bool,
    /// The request's cancellation: a question to the client stops waiting when it fires.
    cancel: CancellationToken,
    /// How long a question waits for its answer.
    timeout: Duration,
}

impl McpClient {
    pub(crate) fn new(
        context: &RequestContext<RoleServer>,
        log_level: Arc<AtomicU8>,
        timeout: Duration,
    ) -> Self {
        let info = context.peer.peer_info();
        let capabilities = info.as_ref().map(|info| &info.capabilities);
        Self {
            peer: context.peer.clone(),
            progress_token: context.meta.get_progress_token(),
            log_level,
            can_sample: capabilities.is_some_and(|capabilities| capabilities.sampling.is_some()),
            can_elicit: capabilities.is_some_and(|capabilities| capabilities.elicitation.is_some()),
            cancel: context.ct.clone(),
            timeout,
        }
    }

    /// Waits for the client's answer to `question`, until the call is cancelled or the
    /// timeout passes.
    async fn ask<T, E: std::fmt::Display>(
        &self,
        question: impl Future<Output = Result<T, E>>,
    ) -> Result<T, ClientError> {
        tokio::select! {
            answer = tokio::time::timeout(self.timeout, question) => match answer {
                Ok(Ok(answer)) => Ok(answer),
                Ok(Err(error)) => Err(ClientError::Failed(error.to_string())),
                Err(_) => Err(ClientError::Failed(format!(
                    "the client did not answer within {:?}",
                    self.timeout
                ))),
            },
            () = self.cancel.cancelled() => Err(ClientError::Failed(
                "the call was cancelled while the client was asked".to_owned(),
            )),
        }
    }

    pub(crate) fn elicits(&self) -> bool {
        self.can_elicit
    }
}

/// A level's rank, least severe first.
pub(crate) fn level_rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn mcp_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Notice => LoggingLevel::Notice,
        LogLevel::Warning => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
        LogLevel::Critical => LoggingLevel::Critical,
        LogLevel::Alert => LoggingLevel::Alert,
        LogLevel::Emergency => LoggingLevel::Emergency,
    }
}

impl ClientLink for McpClient {
    fn progress(&self, progress: Progress) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let Some(token) = self.progress_token.clone() else {
                return;
            };
            let mut params = ProgressNotificationParam::new(token, progress.progress);
            params.total = progress.total;
            params.message = progress.message;
            if let Err(error) = self.peer.notify_progress(params).await {
                tracing::debug!(%error, "could not send a progress notification");
            }
        })
    }

    fn log(&self, message: LogMessage) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let level = mcp_level(message.level);
            let set = self.log_level.load(Ordering::Relaxed);
            if set != u8::MAX && level_rank(level) < set {
                return;
            }
            let mut params = LoggingMessageNotificationParam::new(level, message.data);
            params.logger = message.logger;
            if let Err(error) = self.peer.notify_logging_message(params).await {
                tracing::debug!(%error, "could not send a log message");
            }
        })
    }

    fn sample(&self, request: SamplingRequest) -> BoxFuture<'_, Result<Sampled, ClientError>> {
        Box::pin(async move {
            let messages: Vec<Value> = request
                .messages
                .iter()
                .map(|message| {
                    json!({"role": message.role, "content": {"type": "text", "text": message.text}})
                })
                .collect();
            let mut params = json!({"messages": messages, "maxTokens": request.max_tokens});
            if let Some(system) = &request.system_prompt {
                params["systemPrompt"] = json!(system);
            }
            if let Some(temperature) = request.temperature {
                params["temperature"] = json!(temperature);
            }
            let params: CreateMessageRequestParams = serde_json::from_value(params)
                .map_err(|error| ClientError::Failed(format!("the request is invalid: {error}")))?;
            let result = self.ask(self.peer.create_message(params)).await?;
            let answer = serde_json::to_value(&result).unwrap_or(Value::Null);
            let content = answer.get("content").cloned().unwrap_or(Value::Null);
            let text = texts(&content);
            Ok(Sampled {
                text,
                model: result.model,
                stop_reason: result.stop_reason,
                content,
            })
        })
    }

    fn elicit(&self, request: Elicitation) -> BoxFuture<'_, Result<Elicited, ClientError>> {
        Box::pin(async move {
            let params: ElicitRequestParams = serde_json::from_value(json!({
                "mode": "form",
                "message": request.message,
                "requestedSchema": request.schema,
            }))
            .map_err(|error| {
                ClientError::Failed(format!(
                    "the schema is not one an elicitation can ask for (an object of flat \
                     string, number, boolean or enum properties): {error}"
                ))
            })?;
            let result = self.ask(self.peer.create_elicitation(params)).await?;
            Ok(match result.action {
                ElicitationAction::Accept => {
                    Elicited::Accept(result.content.unwrap_or_else(|| json!({})))
                }
                ElicitationAction::Decline => Elicited::Decline,
                // Cancel, and any action a later revision adds: no answer.
                _ => Elicited::Cancel,
            })
        })
    }

    fn can_sample(&self) -> bool {
        self.can_sample
    }

    fn can_elicit(&self) -> bool {
        self.can_elicit
    }
}

/// The text of sampled content: one text block's, or the texts of a list of blocks.
fn texts(content: &Value) -> String {
    match content {
        Value::Array(blocks) => blocks.iter().map(texts).collect::<Vec<_>>().join(""),
        block => block
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    }
}

/// Puts the policy's asks to the client's user, as an elicitation: approve, deny, or edit
/// the arguments.
pub(crate) struct ElicitingApprover {
    client: Arc<McpClient>,
}

impl ElicitingApprover {
    pub(crate) fn new(client: Arc<McpClient>) -> Self {
        Self { client }
    }
}

/// What the user is shown: the tool, the policy's reason, the preview, the arguments.
fn approval_message(request: &ApprovalRequest) -> String {
    let mut message = format!("Approve `{}`? {}.", request.tool, request.reason);
    if let Some(preview) = &request.preview {
        message.push_str("\n\n");
        message.push_str(&preview.title);
        for part in [&preview.summary, &preview.diff, &preview.command]
            .into_iter()
            .flatten()
        {
            message.push_str("\n\n");
            message.push_str(part);
        }
        if !preview.resources.is_empty() {
            message.push_str("\n\nTouches: ");
            message.push_str(&preview.resources.join(", "));
        }
    }
    message.push_str("\n\nArguments: ");
    message.push_str(&request.arguments.to_string());
    message
}

/// The answer's shape: a decision, the edited arguments, a reason for a denial.
fn approval_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "decision": {
                "type": "string",
                "title": "Decision",
                "enum": ["approve", "deny", "edit"],
                "enumNames": ["Approve", "Deny", "Approve with edited arguments"],
            },
            "arguments": {
                "type": "string",
                "title": "Edited arguments",
                "description": "For edit: the arguments to run the call with, as a JSON object",
            },
            "reason": {
                "type": "string",
                "title": "Reason",
                "description": "For deny: why, as the model is told",
            },
        },
        "required": ["decision"],
    })
}

impl Approver for ElicitingApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        Box::pin(async move {
            let asked = Elicitation::new(approval_message(request), approval_schema());
            match self.client.elicit(asked).await {
                Ok(Elicited::Accept(answer)) => decision_of(&answer),
                Ok(Elicited::Decline) => Approval::Deny("the user declined the call".to_owned()),
                Ok(Elicited::Cancel) => {
                    Approval::Deny("the user dismissed the approval without answering".to_owned())
                }
                Err(error) => Approval::Deny(format!("the user could not be asked: {error}")),
            }
        })
    }
}

/// The approval an accepted answer gives.
fn decision_of(answer: &Value) -> Approval {
    let reason = answer
        .get("reason")
        .and_then(Value::as_str)
        .filter(|reason| !reason.trim().is_empty());
    match answer.get("decision").and_then(Value::as_str) {
        Some("approve") => Approval::Approve,
        Some("edit") => match answer
            .get("arguments")
            .and_then(Value::as_str)
            .map(serde_json::from_str::<Value>)
        {
            Some(Ok(arguments)) if arguments.is_object() => Approval::ApproveWith(arguments),
            Some(Ok(_)) => Approval::Deny("the edited arguments are not a JSON object".to_owned()),
            Some(Err(error)) => {
                Approval::Deny(format!("the edited arguments are not JSON: {error}"))
            }
            None => Approval::Deny("the user chose to edit but gave no arguments".to_owned()),
        },
        Some("deny") => Approval::Deny(
            reason.map_or_else(|| "the user denied the call".to_owned(), str::to_owned),
        ),
        _ => Approval::Deny("the user's answer had no decision".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_map_to_approvals() {
        assert_eq!(
            decision_of(&json!({"decision": "approve"})),
            Approval::Approve
        );
        assert_eq!(
            decision_of(&json!({"decision": "edit", "arguments": "{\"amount\": 5}"})),
            Approval::ApproveWith(json!({"amount": 5}))
        );
        assert_eq!(
            decision_of(&json!({"decision": "deny", "reason": "too much"})),
            Approval::Deny("too much".to_owned())
        );
        assert!(matches!(
            decision_of(&json!({"decision": "edit", "arguments": "[1]"})),
            Approval::Deny(reason) if reason.contains("not a JSON object")
        ));
        assert!(matches!(
            decision_of(&json!({"decision": "edit", "arguments": "{"})),
            Approval::Deny(reason) if reason.contains("not JSON")
        ));
        assert!(matches!(decision_of(&json!({})), Approval::Deny(_)));
    }

    #[test]
    fn the_approval_schema_is_an_elicitation_schema() {
        let params: Result<ElicitRequestParams, _> = serde_json::from_value(json!({
            "mode": "form",
            "message": "m",
            "requestedSchema": approval_schema(),
        }));
        assert!(params.is_ok(), "{params:?}");
    }
}
