//! Deferred approvals, resumed: a person's decision about a pending call, signed, handed back
//! (perhaps to another process sharing the keys and the approval store), verified, consumed
//! once, and the approved call run on the same path as any other.

use std::any::Any;
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;
use tool_core::{ErrorKind, ToolError};

use crate::arguments::Arguments;
use crate::arguments::CallArguments;
use crate::call::ToolCall;
use crate::gates::{
    Approval, AuditDecision, CallIdentity, DecisionClaims, DecisionError, DecisionKeys,
    PendingApproval, SignedDecision, decision, seal,
};
use crate::observation::TurnReport;
use crate::runtime::{Answered, Runtime};
use crate::session::Session;

impl<D: Any + Send + Sync> Runtime<D> {
    /// The session's calls waiting for a person's decision, oldest first.
    pub async fn pending_approvals(
        &self,
        session: &Session,
    ) -> std::io::Result<Vec<PendingApproval>> {
        self.shared.gates.store.pending(session.id()).await
    }

    /// Signs a person's decision about a pending call: approve, approve with edited arguments
    /// (validated when the call resumes), or deny with a reason. The decision is bound to
    /// the request, the call, the session, the principal, the tool and the digest of the
    /// arguments kept with the request, and expires after the keys' time to live. What runs
    /// is the kept arguments (or the edit inside the decision), never `pending.arguments` as
    /// the caller may have changed them.
    ///
    /// An `ApproveWith` carries its edited arguments inside the token, signed but not
    /// encrypted: edit from `pending.arguments` (redacted) and leave a secret as shown, and
    /// the resumed call runs with the real value, restored from the sealed arguments; a new
    /// secret typed into an edit travels in the token in clear (base64url).
    pub fn sign_decision(
        &self,
        pending: &PendingApproval,
        approval: Approval,
    ) -> Result<SignedDecision, DecisionError> {
        let keys = self
            .shared
            .gates
            .keys
            .as_ref()
            .ok_or(DecisionError::NoKeys)?;
        let claims = DecisionClaims {
            request_id: pending.request_id.clone(),
            call_id: pending.call_id.clone(),
            session: pending.session.clone(),
            principal: pending.principal.clone(),
            tool: pending.tool.clone(),
            arguments_digest: pending.arguments_digest.clone(),
            approval,
        };
        decision::sign(keys, &claims, SystemTime::now())
    }

    /// Resumes pending calls with signed decisions.
    ///
    /// Each decision is verified (signature, expiry, key), must belong to this session and
    /// principal and match its pending call's tool and arguments, and is consumed once: a
    /// replay is refused. An approved call then runs through the gates like any call (a
    /// policy deny still wins; the approval answers only an ask) and through the shells. A
    /// denied one is answered `denied` with the person's reason. Either counts for the
    /// refusal breaker as a decision made at once does: a denial towards it, an approval
    /// starting the count again (so a stopped session's approved call runs).
    ///
    /// The report answers the resumed calls in the order of `decisions`, then every refused
    /// decision (`invalid_decision`): under the call id it names when this runtime's keys
    /// verify it (a replay, a decision for another session), otherwise under
    /// `decision-<position>` (a forged or expired one names nothing that can be trusted).
    pub async fn resume(
        &self,
        session: &Session,
        decisions: impl AsRef<[SignedDecision]>,
    ) -> TurnReport {
        let shared = &*self.shared;
        let keys = shared.gates.keys.as_ref();
        let mut calls = Vec::new();
        let mut answered = Vec::new();
        let mut refused = Vec::new();
        for (position, signed) in decisions.as_ref().iter().enumerate() {
            // A decision this runtime signed names its call; one it cannot read names nothing.
            let mut claimed_call: Option<(String, String)> = None;
            let checked = match keys {
                None => Err(ToolError::new(
                    ErrorKind::InvalidDecision,
                    "this runtime has no decision keys and resumes nothing",
                )),
                Some(keys) => match decision::verify(keys, signed, SystemTime::now()) {
                    Ok(claims) => {
                        claimed_call = Some((claims.call_id.clone(), claims.tool.clone()));
                        self.claim(session, keys, claims).await
                    }
                    Err(error) => Err(ToolError::new(
                        ErrorKind::InvalidDecision,
                        format!("the decision was refused: {error}"),
                    )),
                },
            };
            match checked {
                Ok((pending, Claimed::Denied { reason })) => {
                    // A person's decision counts as theirs made at once would: a denial
                    // towards the breaker, an approval resetting it.
                    shared.gates.breaker.denied(session.id());
                    refused.push(shared.rejected(
                        session.id(),
                        &Arc::from(pending.call_id.as_str()),
                        &pending.tool,
                        crate::gates::denied(&reason),
                    ));
                }
                Ok((pending, Claimed::Approved { arguments, edited })) => {
                    shared.gates.breaker.reset(session.id());
                    let mut call =
                        ToolCall::new(pending.call_id, pending.tool, Arguments::Value(arguments));
                    if let Some(key) = pending.idempotency_key {
                        call = call.with_idempotency_key(key);
                    }
                    calls.push(call);
                    answered.push(if edited {
                        Answered::Edited
                    } else {
                        Answered::AsSent
                    });
                }
                Err(error) => {
                    tracing::warn!(position, kind = %error.kind(), "a decision was refused");
                    let (call_id, tool) = claimed_call
                        .unwrap_or_else(|| (format!("decision-{position}"), String::new()));
                    let identity = CallIdentity {
                        session,
                        call_id: &call_id,
                        tool: &tool,
                        version: None,
                        awaited: None,
                    };
                    shared.gates.note(
                        &identity,
                        None,
                        AuditDecision::Resume,
                        error.message(),
                        None,
                    );
                    refused.push(shared.rejected(
                        session.id(),
                        &Arc::from(call_id.as_str()),
                        &tool,
                        error,
                    ));
                }
            }
        }
        let mut report = self.run_resumed(session, &calls, &answered).await;
        report.observations.extend(refused);
        report
    }

    /// Checks verified claims against the session and the pending call, opens its sealed
    /// arguments (for an approval), consumes the pending call (only the first resume gets
    /// it), then writes the decision's audit line. A decision whose line cannot be written is
    /// put back, so it can be handed back again once the trail works; one refused before it
    /// is consumed (the store could not be read, the arguments could not be opened) too.
    async fn claim(
        &self,
        session: &Session,
        keys: &DecisionKeys,
        claims: DecisionClaims,
    ) -> Result<(PendingApproval, Claimed), ToolError> {
        let invalid = |why: &str| {
            ToolError::new(
                ErrorKind::InvalidDecision,
                format!("the decision was refused: {why}"),
            )
        };
        if claims.session != session.id() {
            return Err(invalid("it belongs to another session"));
        }
        let principal = session.principal().map(|principal| principal.id());
        if claims.principal.as_deref() != principal {
            return Err(invalid("it was made for another user"));
        }
        let store = &self.shared.gates.store;
        let unavailable = |error: std::io::Error| {
            tracing::error!(%error, "the approval store could not be read");
            invalid("the approval store is unavailable; try again")
        };
        let Some(pending) = store
            .pending(session.id())
            .await
            .map_err(unavailable)?
            .into_iter()
            .find(|pending| pending.request_id == claims.request_id)
        else {
            return Err(invalid(
                "no call waits for it (it was used already, or never existed)",
            ));
        };
        if pending.call_id != claims.call_id
            || pending.tool != claims.tool
            || pending.arguments_digest != claims.arguments_digest
        {
            return Err(invalid("it was made for another call or other arguments"));
        }
        let redactor = &self.shared.redactor;
        // What the decision makes of the call, and its audit line: (reason, digest, arguments).
        let (claimed, line) = match claims.approval {
            Approval::Deny(reason) => {
                let why = format!("denied: {reason}");
                (Claimed::Denied { reason }, (why, None))
            }
            approval => {
                // A denial needs nothing of the arguments; an approval runs them, opened.
                let kept = seal::open(keys, &pending).map_err(|error| {
                    tracing::error!(%error, "the arguments of a pending call could not be opened");
                    invalid(
                        "the pending call's arguments cannot be opened with this runtime's keys, \
                         or were changed in the approval store",
                    )
                })?;
                match approval {
                    // Edited from the redacted arguments a person was shown: what they left
                    // as shown is the real value again; a placeholder left elsewhere stands
                    // for nothing and is the person's mistake, as for an edit given at once.
                    Approval::ApproveWith(edits) => {
                        let edits = crate::gates::restore_redacted(edits, &kept, redactor);
                        match crate::gates::placeholder_left(&edits, &kept) {
                            Some(field) => {
                                let reason = format!(
                                    "the edited arguments hold a redacted placeholder at \
                                     `{field}`, which stands for nothing there: edit the whole \
                                     value or leave it as shown"
                                );
                                let why = format!("denied: {reason}");
                                (Claimed::Denied { reason }, (why, None))
                            }
                            None => {
                                // Named as the call that runs will be: its canonical form.
                                let schema = self
                                    .shared
                                    .registry
                                    .get(&pending.tool)
                                    .map_or(&Value::Null, |tool| tool.spec().input_schema());
                                let digest = CallArguments::digest_of(schema, edits.clone());
                                let line = ("approved with edits".to_owned(), Some(digest));
                                let claimed = Claimed::Approved {
                                    arguments: edits,
                                    edited: true,
                                };
                                (claimed, line)
                            }
                        }
                    }
                    _ => (
                        Claimed::Approved {
                            arguments: kept,
                            edited: false,
                        },
                        ("approved".to_owned(), None),
                    ),
                }
            }
        };
        // Consumed first (the store's take is atomic): two resumes of one decision at once
        // write one line, and run once.
        // What was checked is what runs and is audited: the store's answer to `take` only says
        // whether this resume got the request.
        if store
            .take(session.id(), &claims.request_id)
            .await
            .map_err(unavailable)?
            .is_none()
        {
            return Err(invalid("it was used already"));
        }
        let identity = CallIdentity {
            session,
            call_id: &pending.call_id,
            tool: &pending.tool,
            version: pending.version.as_deref(),
            awaited: None,
        };
        let (why, edited_digest) = line;
        let ran_with = match &claimed {
            Claimed::Approved {
                arguments,
                edited: true,
            } => Some(arguments),
            _ => None,
        };
        // A person's decision is on the trail before anything follows from it; a decision
        // whose line cannot be written goes back to the store, and nothing runs.
        let written = self
            .shared
            .gates
            .record(
                &identity,
                Some(
                    edited_digest
                        .as_deref()
                        .unwrap_or(&pending.arguments_digest),
                ),
                ran_with,
                redactor,
                AuditDecision::Resume,
                &why,
                Some(&pending.request_id),
            )
            .await;
        if let Err(error) = written {
            if let Err(put_back) = store.put(pending.clone()).await {
                tracing::error!(%put_back, "a decision that could not be audited could not be put back");
            }
            return Err(error);
        }
        Ok((pending, claimed))
    }
}

/// What a checked decision makes of its pending call.
enum Claimed {
    /// A person denied the call.
    Denied { reason: String },
    /// A person approved it; it runs with `arguments` (edited or not).
    Approved { arguments: Value, edited: bool },
}
