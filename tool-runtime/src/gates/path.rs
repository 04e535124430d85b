//! The approval gate: a person asked about a planned call, at once or later (a pending
//! request, resumed by a signed decision).

use std::panic::AssertUnwindSafe;

use futures::FutureExt;
use serde_json::Value;
use tool_core::{ErrorKind, ToolError, ToolSpec};

use super::decision::{PendingApproval, SealedArguments};
use super::seal;
use super::{Approval, ApprovalRequest, AuditDecision, CallIdentity, Gates, denied, redact_value};
use crate::arguments::CallArguments;
use crate::output::redact::Redactor;

/// What the approval gate reads of a planned call.
pub(crate) struct AskedCall<'a, 'p> {
    pub(crate) spec: &'a ToolSpec,
    pub(crate) arguments: &'a CallArguments<'p>,
    /// The key the caller supplied, kept with a pending request so the resumed call runs
    /// under it.
    pub(crate) explicit_key: Option<&'a str>,
}

/// An approver's edit that fails validation: a denial naming the field.
pub(crate) fn edit_refused(error: ToolError) -> ToolError {
    match error.kind() {
        ErrorKind::InvalidArguments => {
            let mut refused = ToolError::new(
                ErrorKind::Denied,
                format!(
                    "the call was denied: the arguments the approver edited are invalid: {}",
                    error.message()
                ),
            );
            if let Some(details) = error.details() {
                refused = refused.with_details(details.clone());
            }
            refused
        }
        _ => error,
    }
}

impl Gates {
    /// Asks the approver about a call.
    pub(crate) async fn ask(
        &self,
        identity: &CallIdentity<'_>,
        plan: &AskedCall<'_, '_>,
        reason: String,
        redactor: &Redactor,
    ) -> Result<Option<Value>, ToolError> {
        let gates = self;
        let session = identity.session;
        let spec = plan.spec;
        let arguments = plan.arguments.value().clone();
        let digest = plan.arguments.digest().to_owned();
        let refuse = |decision: AuditDecision, why: &str| {
            gates.breaker.denied(session.id());
            gates.note(identity, Some(&digest), decision, why, None);
            denied(why)
        };
        // Denials earlier in the same turn count: the breaker is looked at again before each
        // ask, not only when the call was planned, whoever would answer it.
        gates.stop_if_tripped(identity, spec, true, false)?;
        let Some(approver) = session.approver().or(gates.approver.as_ref()) else {
            return Err(refuse(
                AuditDecision::Deny,
                &format!("no approver configured; {reason}, so a person must approve it"),
            ));
        };
        if !session.is_interactive() {
            return Err(refuse(
                AuditDecision::Deny,
                &format!("{reason}, and nobody can approve it in this session"),
            ));
        }
        gates
            .record(
                identity,
                Some(&digest),
                Some(&arguments),
                redactor,
                AuditDecision::Ask,
                &reason,
                None,
            )
            .await?;
        // What a person sees is redacted, the preview's input included.
        let shown = redact_value(&arguments, redactor);
        let preview = gates.previews.get(spec.name()).and_then(|preview| {
            std::panic::catch_unwind(AssertUnwindSafe(|| preview(&shown)))
                .map_err(|_| tracing::error!(tool = spec.name(), "the preview panicked"))
                .ok()
        });
        let request = ApprovalRequest {
            session: session.id().to_owned(),
            principal: session
                .principal()
                .map(|principal| principal.id().to_owned()),
            call_id: identity.call_id.to_owned(),
            tool: identity.tool.to_owned(),
            risk: spec.risk(),
            arguments: shown,
            reason: reason.clone(),
            preview,
        };
        let answer = AssertUnwindSafe(approver.decide(&request))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| {
                tracing::error!(tool = identity.tool, "the approver panicked");
                Approval::Deny("the approver failed".to_owned())
            });
        match answer {
            Approval::Approve => {
                gates.breaker.reset(session.id());
                gates
                    .record(
                        identity,
                        Some(&digest),
                        None,
                        redactor,
                        AuditDecision::Approve,
                        &reason,
                        None,
                    )
                    .await?;
                Ok(None)
            }
            Approval::ApproveWith(edited) => {
                let edited = super::restore_redacted(edited, &arguments, redactor);
                if let Some(field) = super::placeholder_left(&edited, &arguments) {
                    return Err(refuse(
                        AuditDecision::Deny,
                        &format!(
                            "the edited arguments hold a redacted placeholder at `{field}`, which \
                             stands for nothing there: edit the whole value or leave it as shown"
                        ),
                    ));
                }
                gates.breaker.reset(session.id());
                let edited_digest = CallArguments::digest_of(spec.input_schema(), edited.clone());
                gates
                    .record(
                        identity,
                        Some(&edited_digest),
                        Some(&edited),
                        redactor,
                        AuditDecision::Edit,
                        &reason,
                        None,
                    )
                    .await?;
                Ok(Some(edited))
            }
            Approval::Deny(why) => Err(refuse(AuditDecision::Deny, &why)),
            Approval::Pending => {
                self.defer(identity, plan, arguments, digest, request, redactor)
                    .await
            }
        }
    }

    /// Keeps a call a person will decide later; its answer is `approval_pending`. The store
    /// gets the arguments redacted (what the person sees, as in `request`) and sealed (what
    /// runs).
    async fn defer(
        &self,
        identity: &CallIdentity<'_>,
        plan: &AskedCall<'_, '_>,
        arguments: Value,
        digest: String,
        request: ApprovalRequest,
        redactor: &Redactor,
    ) -> Result<Option<Value>, ToolError> {
        let gates = self;
        let Some(keys) = &gates.keys else {
            let why = "a person must approve this call later, and this runtime cannot resume calls (no decision keys)";
            gates.note(identity, Some(&digest), AuditDecision::Deny, why, None);
            return Err(denied(why));
        };
        let ApprovalRequest {
            arguments: shown,
            reason,
            preview,
            ..
        } = request;
        let request_id = crate::hex::random_token();
        let mut pending = PendingApproval {
            request_id: request_id.clone(),
            session: identity.session.id().to_owned(),
            principal: identity
                .session
                .principal()
                .map(|principal| principal.id().to_owned()),
            call_id: identity.call_id.to_owned(),
            tool: identity.tool.to_owned(),
            version: identity.version.map(str::to_owned),
            arguments: shown,
            sealed_arguments: SealedArguments::from(String::new()),
            arguments_digest: digest.clone(),
            reason: reason.clone(),
            risk: plan.spec.risk(),
            preview,
            idempotency_key: plan.explicit_key.map(str::to_owned),
        };
        let not_requested = || {
            ToolError::new(
                ErrorKind::Internal,
                "the call needs a person's approval, which could not be requested",
            )
        };
        seal::seal(keys, &mut pending, &arguments).map_err(|error| {
            tracing::error!(%error, "the arguments of a pending approval could not be sealed");
            not_requested()
        })?;
        // The line first: a request whose decision cannot be recorded is never kept, so it
        // can never be signed and run.
        gates
            .record(
                identity,
                Some(&digest),
                None,
                redactor,
                AuditDecision::Pending,
                &reason,
                Some(&request_id),
            )
            .await?;
        gates.store.put(pending).await.map_err(|error| {
            tracing::error!(%error, "a pending approval could not be stored");
            not_requested()
        })?;
        Err(ToolError::new(
            ErrorKind::ApprovalPending,
            format!(
                "the call waits for a person's approval ({reason}); its result will come later"
            ),
        )
        .with_hint("do not repeat the call; tell the user it waits for approval")
        .with_details(serde_json::json!({ "request_id": request_id })))
    }
}
