//! What the runtime hands a sink: the [`AuditRecord`] of one decision, and the [`AuditSink`]
//! contract for making it durable.

use std::io;

use serde::Serialize;
use serde_json::Value;

use super::ticket::AuditTicket;

/// What was decided about a call (or, for [`AuditDecision::Outcome`], how a write ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum AuditDecision {
    /// The policy let a call that is not read-only run.
    Auto,
    /// The policy asked a person.
    Ask,
    /// A person approved the call as it was.
    Approve,
    /// A person approved the call with edited arguments.
    Edit,
    /// The policy or a person refused the call.
    Deny,
    /// A person will decide later.
    Pending,
    /// A signed decision resumed a pending call (or was refused).
    Resume,
    /// The tool is outside the session's scope.
    OutOfScope,
    /// The principal lacks a role the tool requires.
    NotPermitted,
    /// The session's refusal breaker stopped the call.
    Breaker,
    /// How an executed write ended.
    Outcome,
}

/// One decision, as the runtime reports it to an [`AuditSink`].
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord<'a> {
    /// The session.
    pub session: &'a str,
    /// The principal acting in the session.
    pub principal: Option<&'a str>,
    /// The call's id.
    pub call_id: &'a str,
    /// The tool the call named.
    pub tool: &'a str,
    /// The tool's version.
    pub version: Option<&'a str>,
    /// SHA-256 (hex) of the canonical validated arguments, when they were validated.
    pub arguments_digest: Option<&'a str>,
    /// The arguments (redacted), only when the sink asks for them.
    pub arguments: Option<&'a Value>,
    /// What was decided.
    pub decision: AuditDecision,
    /// Why.
    pub reason: Option<&'a str>,
    /// The approval request the decision belongs to.
    pub approval_id: Option<&'a str>,
    /// For [`AuditDecision::Outcome`]: `success` or the error kind.
    pub outcome: Option<&'a str>,
}

/// Where the runtime writes its decisions.
///
/// # The contract
///
/// The runtime hands every line to [`submit`](AuditSink::submit), in the order of the trail
/// (a sink keeps lines in the order they were submitted), from the task that plans the turn.
/// `submit` answers at once with an [`AuditTicket`] that resolves once the line is durable:
/// planning goes on to the next call without waiting, so a sink can make the lines of many
/// calls durable together. A ticket resolves `Ok` only once its line is durable, and `Err`
/// when it never will be.
///
/// - A call's decision line (`auto` for a write the policy lets run) is waited for on the
///   call's path right before the call's tool would start: a call never runs before its line
///   is durable, and a call whose ticket fails is answered `audit_unavailable` and never runs.
///   The lines about a person's decision (`ask`, `approve`, `edit`, `pending`) are waited for
///   where they are written, before the approver is asked or the answer acted on.
/// - Refusals (`deny`, `out_of_scope`, `not_permitted`, `breaker`), resumes and outcomes are
///   not waited for (their tickets are dropped), but they are lines of the trail like any
///   other: a sink writes them, in order.
/// - Reads the policy lets run write no line.
///
/// # Writing a sink
///
/// A sink that writes at once (in memory, to a fast local log) implements only
/// [`record`](AuditSink::record): the default `submit` calls it and answers with its result.
/// Whatever `record` waits for, the planning task waits for too, once per audited call. A sink
/// that waits on a disk or a network implements `submit` as well: it queues the line, returns
/// the ticket from [`AuditTicket::pending`], and completes the [`AuditCompleter`] once the line
/// is durable, for many lines at a time ([`JsonlAudit`] does this, with a group commit); its
/// `record` can be `self.submit(record).wait()`.
///
/// [`AuditCompleter`]: super::ticket::AuditCompleter
/// [`JsonlAudit`]: super::jsonl::JsonlAudit
pub trait AuditSink: Send + Sync + 'static {
    /// Writes one record; returns once it is durable. An error refuses the write the record
    /// was about (`audit_unavailable`); reads go on.
    fn record(&self, record: &AuditRecord<'_>) -> io::Result<()>;

    /// Submits one record, to be made durable after every record submitted before it; the
    /// ticket resolves once it is. Must not wait on I/O: it is called on the task that plans
    /// the turn. Default: [`record`](AuditSink::record), answered at once.
    fn submit(&self, record: &AuditRecord<'_>) -> AuditTicket {
        AuditTicket::ready(self.record(record))
    }

    /// A ticket that resolves once every record submitted before this call is durable or
    /// failed: `Ok` when none of the records submitted since the last flush failed, `Err`
    /// (saying how many were lost) when any did, including those whose tickets nobody waited
    /// for (refusals, outcomes). A flush answers each lost line once: the next flush answers
    /// `Ok` again unless more were lost. Default: resolved `Ok` at once, as it is for a sink
    /// whose `submit` writes at once (a failed line was answered to its ticket).
    fn flush(&self) -> AuditTicket {
        AuditTicket::ready(Ok(()))
    }

    /// Whether records should carry the (redacted) arguments.
    fn wants_arguments(&self) -> bool {
        false
    }
}
