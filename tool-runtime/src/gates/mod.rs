//! The policy: which calls run (`auto`), need a person's yes (`ask`) or are refused (`deny`).
//!
//! An application builds a [`Policy`] in code (rules of an [`Action`] per tool, risk or role,
//! conditions over fields with a [`Compare`]) or reads one from a TOML file
//! ([`Policy::from_toml_file`], [`Policy::from_toml_str`], failing with a [`PolicyFileError`] that names the line), and passes
//! it to [`RuntimeBuilder::policy`](crate::RuntimeBuilder::policy). Who answers an `ask` is in
//! [`approvals`](crate::approvals); what is recorded, in [`audit`](crate::audit).
//!
//! # Where the gates sit
//!
//! Whether a planned call may run at all is decided before its tool is first polled.
//!
//! ```text
//! admit (scope -> roles) -> validate -> gate (policy -> approval) -> idempotency -> shells
//! ```
//!
//! The order is the stack's (`stack.rs`), where it is written once.
//!
//! Every call passes them, top-level, nested through `ctx.call_tool` or resumed after a
//! decision. A deny (scope, role or policy) is final: nothing turns it into an allow, and an
//! `ask` is answered only by the runtime's [`Approver`]. Each gate can answer a call without
//! running it; each answer is an observation with a stable kind (`out_of_scope`,
//! `not_permitted`, `denied`, `approval_pending`, `too_many_denials`, `audit_unavailable`).
//! A read-only call the policy lets run pays for no approver and writes no audit line.

pub(crate) mod approval;
pub(crate) mod audit;
mod breaker;
pub(crate) mod decision;
mod path;
mod policy;
mod policy_file;
pub(crate) mod seal;

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use tool_core::{ErrorKind, ToolError, ToolSpec};

pub(crate) use approval::PreviewFn;
pub(crate) use approval::{Approval, ApprovalRequest, Approver, Preview};
pub(crate) use audit::{AuditDecision, AuditRecord, AuditSink, AuditTicket};
pub(crate) use breaker::Breaker;
pub(crate) use decision::DecisionClaims;
pub(crate) use decision::{
    ApprovalStore, DecisionError, DecisionKeys, MemoryApprovalStore, PendingApproval,
    SignedDecision,
};
pub(crate) use path::{AskedCall, edit_refused};
pub use policy::{Action, Compare, Policy};
pub use policy_file::PolicyFileError;

use crate::arguments::CallArguments;
use crate::output::redact::Redactor;
use crate::session::Session;

/// What the gates of one runtime need.
pub(crate) struct Gates {
    pub(crate) policy: Policy,
    pub(crate) approver: Option<Arc<dyn Approver>>,
    pub(crate) audit: Option<Arc<dyn AuditSink>>,
    pub(crate) previews: HashMap<String, PreviewFn>,
    pub(crate) keys: Option<DecisionKeys>,
    pub(crate) store: Arc<dyn ApprovalStore>,
    pub(crate) breaker: Breaker,
}

impl Default for Gates {
    fn default() -> Self {
        Self {
            policy: Policy::default(),
            approver: None,
            audit: None,
            previews: HashMap::new(),
            keys: None,
            store: Arc::new(MemoryApprovalStore::default()),
            breaker: Breaker::new(3),
        }
    }
}

/// What the policy decided about a call that may go on.
pub(crate) enum Admitted {
    /// The call runs.
    Run,
    /// A person decides; the reason is shown to them.
    Ask(String),
}

/// Who is asking, for the audit lines of one call.
pub(crate) struct CallIdentity<'a> {
    pub(crate) session: &'a Session,
    pub(crate) call_id: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) version: Option<&'a str>,
    /// Where a planned call keeps the tickets of the lines its path waits for before the
    /// tool starts (`None`: a call that is not planned to run).
    pub(crate) awaited: Option<&'a AwaitedLines>,
}

/// The audit lines a planned call waits for before its tool starts: its decision line,
/// submitted while the call was planned and made durable while the rest of the turn is
/// planned (see [`AuditSink`]).
#[derive(Default)]
pub(crate) struct AwaitedLines(Mutex<Vec<AuditTicket>>);

impl AwaitedLines {
    fn push(&self, ticket: AuditTicket) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(ticket);
    }

    /// The tickets, for the call's path to wait on.
    pub(crate) fn take(&self) -> Vec<AuditTicket> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The answer to a call whose decision line could not be made durable: it did not run.
pub(crate) fn audit_unavailable() -> ToolError {
    ToolError::new(
        ErrorKind::AuditUnavailable,
        "the audit trail could not be written, so this call was not run",
    )
    .with_hint("reads still work; try the change again later")
}

impl Gates {
    /// Whether `session` may see and call `tool` at all: it is in the session's scope and
    /// the principal has the roles it requires. `read_artifact` is in every scope that is not
    /// empty (it reads only the session's own artifacts).
    pub(crate) fn in_scope(&self, session: &Session, tool: &str, artifact_tool: bool) -> bool {
        let scope = session.scope();
        scope.allows(tool) || (artifact_tool && tool == crate::READ_ARTIFACT && !scope.is_empty())
    }

    /// The first gate: scope, then roles. Run before the arguments are looked at.
    pub(crate) fn admit_tool(
        &self,
        identity: &CallIdentity<'_>,
        spec: &ToolSpec,
        artifact_tool: bool,
    ) -> Result<(), ToolError> {
        let session = identity.session;
        if !self.in_scope(session, spec.name(), artifact_tool) {
            let error = ToolError::new(
                ErrorKind::OutOfScope,
                format!(
                    "the tool `{}` is not available for this request",
                    spec.name()
                ),
            )
            .with_hint("use one of the tools you were given");
            self.note(
                identity,
                None,
                AuditDecision::OutOfScope,
                error.message(),
                None,
            );
            return Err(error);
        }
        if let Some(missing) = self.policy.missing_role(spec, session.principal()) {
            let error = ToolError::new(
                ErrorKind::NotPermitted,
                format!(
                    "calling `{}` needs the role `{}`, which this user does not have",
                    spec.name(),
                    missing.role
                ),
            );
            self.note(
                identity,
                None,
                AuditDecision::NotPermitted,
                error.message(),
                None,
            );
            return Err(error);
        }
        Ok(())
    }

    /// Whether the tool is shown to `session`: in scope, roles held, and not denied whatever
    /// its arguments. What is shown is exactly what [`Gates::admit_tool`] and
    /// [`Gates::decide`] may let through.
    pub(crate) fn shown(&self, session: &Session, spec: &ToolSpec, artifact_tool: bool) -> bool {
        self.in_scope(session, spec.name(), artifact_tool)
            && self
                .policy
                .missing_role(spec, session.principal())
                .is_none()
            && self.policy.decide(spec, session.principal(), None).action != Action::Deny
    }

    /// The policy gate, after the arguments passed validation. `answered`: a person already
    /// approved the call (at once, with or without edits, or by a signed decision): the
    /// refusal breaker, which stops what nobody approved, lets it through; a deny still wins.
    pub(crate) fn decide(
        &self,
        identity: &CallIdentity<'_>,
        spec: &ToolSpec,
        arguments: &CallArguments<'_>,
        redactor: &Redactor,
        answered: bool,
    ) -> Result<Admitted, ToolError> {
        let session = identity.session;
        let read_only = spec.execution().read_only;
        // Rules read the arguments as the tool will: defaults filled in, a `null` for an
        // optional field the same as its absence (a rule over a left-out field with a default
        // must see the default).
        let verdict = self
            .policy
            .decide(spec, session.principal(), Some(arguments));
        if verdict.action == Action::Deny {
            let audited = self.audit.as_ref().map(|_| arguments);
            // A refusal's line is not waited for.
            let ticket = self.submit(
                identity,
                audited.map(CallArguments::digest),
                audited.map(CallArguments::value),
                redactor,
                AuditDecision::Deny,
                &verdict.reason(spec),
                None,
            );
            log_failed(identity, ticket);
            return Err(denied(&verdict.reason(spec)));
        }
        self.stop_if_tripped(identity, spec, verdict.action == Action::Ask, answered)?;
        match verdict.action {
            Action::Ask => Ok(Admitted::Ask(verdict.reason(spec))),
            // A read the policy lets run: no audit line, nothing to pay.
            Action::Auto if read_only => Ok(Admitted::Run),
            _ => {
                if self.audit.is_some() {
                    let mut ticket = self.submit(
                        identity,
                        Some(arguments.digest()),
                        Some(arguments.value()),
                        redactor,
                        AuditDecision::Auto,
                        &verdict.reason(spec),
                        None,
                    );
                    // A sink that answers at once refuses the call now; otherwise the call's
                    // path waits for the line right before the tool starts, and planning goes
                    // on to the next call.
                    match (ticket.answer_now(), identity.awaited) {
                        (Some(answer), _) => {
                            answer.map_err(|error| unavailable(identity, &error))?;
                        }
                        (None, Some(awaited)) => awaited.push(ticket),
                        // Every planned call has a place for it; a call without one is
                        // refused rather than run before its line is durable.
                        (None, None) => return Err(audit_unavailable()),
                    }
                }
                Ok(Admitted::Run)
            }
        }
    }

    /// The refusal breaker, checked by this one rule wherever a call may go on: in a session
    /// whose consecutive denials tripped it, what nobody approved stops if it would change
    /// something or needs a person (a write, an ask); reads go on. `approved`: a person said
    /// yes to this call.
    pub(crate) fn stop_if_tripped(
        &self,
        identity: &CallIdentity<'_>,
        spec: &ToolSpec,
        asks: bool,
        approved: bool,
    ) -> Result<(), ToolError> {
        if approved
            || (spec.execution().read_only && !asks)
            || !self.breaker.tripped(identity.session.id())
        {
            return Ok(());
        }
        Err(self.breaker_refusal(identity))
    }

    /// The answer to an ask or a write of a session whose refusal breaker tripped (and its
    /// audit line).
    fn breaker_refusal(&self, identity: &CallIdentity<'_>) -> ToolError {
        let error = ToolError::new(
            ErrorKind::TooManyDenials,
            format!(
                "{} calls in a row were denied in this session; asks and writes are stopped until a person resets it",
                self.breaker.limit()
            ),
        )
        .with_hint("stop and tell the user what you were trying to do");
        self.note(
            identity,
            None,
            AuditDecision::Breaker,
            error.message(),
            None,
        );
        error
    }

    /// Writes one audit line about a call whose fate does not depend on it (a refusal, a
    /// resume): a failing audit is logged.
    pub(crate) fn note(
        &self,
        identity: &CallIdentity<'_>,
        digest: Option<&str>,
        decision: AuditDecision,
        reason: &str,
        approval_id: Option<&str>,
    ) {
        let Some(audit) = &self.audit else {
            return;
        };
        let record = AuditRecord {
            arguments_digest: digest,
            reason: Some(reason),
            approval_id,
            ..identity.line(decision)
        };
        log_failed(identity, audit.submit(&record));
    }

    /// Submits one audit line (a ticket resolved at once when there is no sink).
    #[allow(clippy::too_many_arguments)]
    fn submit(
        &self,
        identity: &CallIdentity<'_>,
        digest: Option<&str>,
        arguments: Option<&Value>,
        redactor: &Redactor,
        decision: AuditDecision,
        reason: &str,
        approval_id: Option<&str>,
    ) -> AuditTicket {
        let Some(audit) = &self.audit else {
            return AuditTicket::ready(Ok(()));
        };
        let redacted = arguments
            .filter(|_| audit.wants_arguments())
            .map(|arguments| redact_value(arguments, redactor));
        let record = AuditRecord {
            arguments_digest: digest,
            arguments: redacted.as_ref(),
            reason: Some(reason),
            approval_id,
            ..identity.line(decision)
        };
        audit.submit(&record)
    }

    /// Writes one audit line and waits until it is durable; an error refuses the call it
    /// records (`audit_unavailable`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) async fn record(
        &self,
        identity: &CallIdentity<'_>,
        digest: Option<&str>,
        arguments: Option<&Value>,
        redactor: &Redactor,
        decision: AuditDecision,
        reason: &str,
        approval_id: Option<&str>,
    ) -> Result<(), ToolError> {
        let ticket = self.submit(
            identity,
            digest,
            arguments,
            redactor,
            decision,
            reason,
            approval_id,
        );
        ticket.await.map_err(|error| unavailable(identity, &error))
    }

    /// Submits the audit line of an executed write's outcome (`success` or the error kind);
    /// nobody waits for it.
    pub(crate) fn record_outcome(&self, identity: &CallIdentity<'_>, outcome: &str) {
        let Some(audit) = &self.audit else {
            return;
        };
        let record = AuditRecord {
            outcome: Some(outcome),
            ..identity.line(AuditDecision::Outcome)
        };
        if let Some(Err(error)) = audit.submit(&record).answer_now() {
            tracing::error!(%error, tool = identity.tool, "the outcome of a write could not be audited");
        }
    }
}

impl<'a> CallIdentity<'a> {
    /// An audit line about this call, with nothing but who and what.
    fn line(&self, decision: AuditDecision) -> AuditRecord<'a> {
        AuditRecord {
            session: self.session.id(),
            principal: self.session.principal().map(|principal| principal.id()),
            call_id: self.call_id,
            tool: self.tool,
            version: self.version,
            arguments_digest: None,
            arguments: None,
            decision,
            reason: None,
            approval_id: None,
            outcome: None,
        }
    }
}

/// Logs the failure of a line nobody waits for, when the sink answered at once (a batching
/// sink logs the failures it finds later).
fn log_failed(identity: &CallIdentity<'_>, mut ticket: AuditTicket) {
    if let Some(Err(error)) = ticket.answer_now() {
        tracing::error!(%error, tool = identity.tool, "an audit line could not be written");
    }
}

/// The refusal of a call whose line could not be written, logged.
fn unavailable(identity: &CallIdentity<'_>, error: &std::io::Error) -> ToolError {
    tracing::error!(%error, tool = identity.tool, "the audit line could not be written; the call is refused");
    audit_unavailable()
}

/// A denial the model can act on.
pub(crate) fn denied(reason: &str) -> ToolError {
    ToolError::new(ErrorKind::Denied, format!("the call was denied: {reason}"))
        .with_hint("do not repeat this call; tell the user or try another way")
}

/// `value` with every string and key redacted.
pub(crate) fn redact_value(value: &Value, redactor: &Redactor) -> Value {
    let mut redacted = value.clone();
    redactor.redact_value(&mut redacted);
    redacted
}

/// Arguments a person edited from the redacted ones they were shown, with every string they
/// left as shown put back to what it stands for: a placeholder never runs as an argument.
pub(crate) fn restore_redacted(edited: Value, original: &Value, redactor: &Redactor) -> Value {
    match (edited, original) {
        (Value::String(text), Value::String(secret))
            if text != *secret && redactor.redact(secret).0 == text.as_str() =>
        {
            Value::String(secret.clone())
        }
        // Items are matched by position only when none was added or removed.
        (Value::Array(items), Value::Array(originals)) if items.len() == originals.len() => {
            Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(index, item)| match originals.get(index) {
                        Some(original) => restore_redacted(item, original, redactor),
                        None => item,
                    })
                    .collect(),
            )
        }
        (Value::Object(fields), Value::Object(originals)) => Value::Object(
            fields
                .into_iter()
                .map(|(key, item)| {
                    // A key left as shown is the key it stands for, when it stands for one.
                    let key = if originals.contains_key(&key) {
                        key
                    } else {
                        let mut stands_for = originals
                            .keys()
                            .filter(|original| redactor.redact(original).0 == key.as_str());
                        match (stands_for.next(), stands_for.next()) {
                            (Some(original), None) => original.clone(),
                            _ => key,
                        }
                    };
                    let item = match originals.get(&key) {
                        Some(original) => restore_redacted(item, original, redactor),
                        None => item,
                    };
                    (key, item)
                })
                .collect(),
        ),
        (edited, _) => edited,
    }
}

/// Where edited arguments still hold a redaction placeholder that stands for nothing (a
/// string the person changed around it, or an item moved): the dotted path of the first.
/// Arguments that held such text to begin with are left alone.
pub(crate) fn placeholder_left(edited: &Value, original: &Value) -> Option<String> {
    const PLACEHOLDER: &str = "[REDACTED:";
    if original.to_string().contains(PLACEHOLDER) {
        return None;
    }
    let mut stack = vec![(String::new(), edited)];
    while let Some((path, value)) = stack.pop() {
        let child = |name: &str| {
            if path.is_empty() {
                name.to_owned()
            } else {
                format!("{path}.{name}")
            }
        };
        match value {
            Value::String(text) if text.contains(PLACEHOLDER) => return Some(path),
            Value::Array(items) => stack.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(index, item)| (child(&index.to_string()), item)),
            ),
            Value::Object(fields) => {
                if fields.keys().any(|name| name.contains(PLACEHOLDER)) {
                    return Some(path);
                }
                stack.extend(fields.iter().map(|(name, item)| (child(name), item)));
            }
            _ => {}
        }
    }
    None
}

impl<T: AuditSink + ?Sized> AuditSink for Arc<T> {
    fn record(&self, record: &AuditRecord<'_>) -> std::io::Result<()> {
        (**self).record(record)
    }

    fn submit(&self, record: &AuditRecord<'_>) -> AuditTicket {
        (**self).submit(record)
    }

    fn flush(&self) -> AuditTicket {
        (**self).flush()
    }

    fn wants_arguments(&self) -> bool {
        (**self).wants_arguments()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{placeholder_left, redact_value, restore_redacted};
    use crate::output::redact::Redactor;

    #[test]
    fn an_edit_that_left_a_redacted_key_as_shown_runs_with_the_key() {
        let redactor = Redactor::default();
        let secret = "sk-proj-aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let original = json!({ "labels": { secret: "prod" }, "note": "x" });
        let mut edited = redact_value(&original, &redactor);
        edited["note"] = json!("y");
        let kept = restore_redacted(edited, &original, &redactor);
        assert_eq!(kept, json!({ "labels": { secret: "prod" }, "note": "y" }));
        assert_eq!(placeholder_left(&kept, &original), None);
    }

    #[test]
    fn a_redacted_key_that_stands_for_two_secrets_is_refused_in_an_edit() {
        let redactor = Redactor::default();
        let first = "sk-proj-aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let second = "sk-proj-bbbbbbbbbbbbbbbbbbbbbbbbbbbb";
        let original = json!({ "labels": { first: "prod", second: "dev" } });
        let edited = redact_value(&original, &redactor);
        let kept = restore_redacted(edited, &original, &redactor);
        assert_eq!(
            placeholder_left(&kept, &original).as_deref(),
            Some("labels")
        );
    }

    #[test]
    fn a_secret_used_as_a_key_is_redacted_as_a_string_is() {
        let redactor = Redactor::default();
        let secret = "sk-proj-aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let arguments = json!({ "tokens": { secret: "primary" }, "list": [secret] });
        let shown = redact_value(&arguments, &redactor).to_string();
        assert!(!shown.contains(secret), "{shown}");
        assert!(shown.contains("[REDACTED:openai_api_key]"), "{shown}");
    }

    #[test]
    fn array_items_are_put_back_only_where_none_was_added_or_removed() {
        let redactor = Redactor::default();
        let first = "sk-proj-aaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let second = "sk-proj-bbbbbbbbbbbbbbbbbbbbbbbbbbbb";
        let original = json!({ "keys": [first, second] });
        let shown = "[REDACTED:openai_api_key]";
        // Both left as shown: both put back.
        let kept = restore_redacted(json!({ "keys": [shown, shown] }), &original, &redactor);
        assert_eq!(kept, original);
        assert_eq!(placeholder_left(&kept, &original), None);
        // The first removed: the placeholder left cannot say which key it was.
        let removed = restore_redacted(json!({ "keys": [shown] }), &original, &redactor);
        assert_eq!(removed, json!({ "keys": [shown] }));
        assert_eq!(
            placeholder_left(&removed, &original).as_deref(),
            Some("keys.0")
        );
    }
}
