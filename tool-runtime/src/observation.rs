//! What the runtime answers: one [`Observation`] per call, and the [`TurnReport`] of a turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tool_core::{ErrorKind, PageInfo, ToolError};

/// What the gate decided about a call that reached it (stage 3 of the call's path: the policy
/// and, when it asks, a person).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Gate {
    /// The policy let the call run without asking anyone.
    Auto,
    /// A person approved the call as it was sent (at once, or by a signed decision).
    Approved,
    /// A person approved the call with arguments they edited (at once, or by a signed
    /// decision); it ran with the edited arguments.
    Edited,
    /// The policy, a person or the refusal breaker refused the call.
    Denied,
    /// The call waits for a person's decision.
    Pending,
}

impl Gate {
    /// The stable name: `auto`, `approved`, `edited`, `denied`, `pending`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Gate::Auto => "auto",
            Gate::Approved => "approved",
            Gate::Edited => "edited",
            Gate::Denied => "denied",
            Gate::Pending => "pending",
        }
    }

    /// The gate's answer to a call refused before it ran, told by the error's kind: only the
    /// gate answers `denied`, `too_many_denials` (its breaker) and `approval_pending`; any
    /// other refusal (unknown tool, invalid arguments, out of scope, a budget) came before it.
    pub(crate) fn of_refusal(kind: &ErrorKind) -> Option<Gate> {
        match kind {
            ErrorKind::Denied | ErrorKind::TooManyDenials => Some(Gate::Denied),
            ErrorKind::ApprovalPending => Some(Gate::Pending),
            _ => None,
        }
    }

    fn from_u8(value: u8) -> Option<Gate> {
        Some(match value {
            1 => Gate::Auto,
            2 => Gate::Approved,
            3 => Gate::Edited,
            4 => Gate::Denied,
            5 => Gate::Pending,
            _ => return None,
        })
    }

    const fn to_u8(self) -> u8 {
        match self {
            Gate::Auto => 1,
            Gate::Approved => 2,
            Gate::Edited => 3,
            Gate::Denied => 4,
            Gate::Pending => 5,
        }
    }
}

impl std::fmt::Display for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a planned call keeps the gate's decision until its observation is made. Atomic: the
/// gate decides through a shared reference, and a planned call is shared while it runs.
#[derive(Debug, Default)]
pub(crate) struct GateCell(AtomicU8);

impl GateCell {
    pub(crate) fn set(&self, gate: Gate) {
        self.0.store(gate.to_u8(), Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> Option<Gate> {
        Gate::from_u8(self.0.load(Ordering::Relaxed))
    }
}

/// How one call ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Outcome {
    /// The tool succeeded; `content` is what the model reads (redacted, truncated with a
    /// notice when too long, with a page notice for a pagination tool).
    Success {
        /// The text for the model.
        content: String,
    },
    /// The call failed; the error says why, in a form the model can act on.
    Error {
        /// The error, with its stable `kind`.
        error: ToolError,
    },
}

/// The answer to one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct Observation {
    /// The id of the call this answers.
    pub(crate) call_id: Arc<str>,
    /// The tool the model named.
    pub(crate) tool: Arc<str>,
    /// The tool's version, when it declares one (and the tool exists).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) tool_version: Option<Arc<str>>,
    /// Success or error.
    pub(crate) outcome: Outcome,
    /// Whether the content was cut to fit the output limit.
    pub(crate) truncated: bool,
    /// How many secrets were redacted from the content.
    pub(crate) redactions: u32,
    /// The id under which the full output was kept, when it was cut.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) artifact: Option<String>,
    /// Page metadata, for a pagination tool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) page: Option<Box<PageInfo>>,
    /// Time from the start of the call to its answer (all attempts and backoff included). For
    /// calls answered at their first poll, the time their batch took to start them: one clock
    /// reading serves them all, so it is an upper bound, within microseconds.
    #[serde(rename = "elapsed_ms", serialize_with = "millis")]
    pub(crate) elapsed: Duration,
    /// How many times the tool ran (0 when the call was rejected before running).
    pub(crate) attempts: u32,
    /// The batch the call ran in, when it ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) batch: Option<u32>,
    /// Whether the answer is the result of an earlier execution of the same write, kept by
    /// the idempotency layer (the tool did not run again).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) replayed: bool,
    /// Whether the content is the JSON of content blocks (the tool returned
    /// [`Contents`](crate::Contents)).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub(crate) content_blocks: bool,
    /// What the gate decided, when the call reached it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) gate: Option<Gate>,
}

fn millis<S: serde::Serializer>(duration: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}

impl Observation {
    /// The id of the call this answers.
    pub fn call_id(&self) -> &str {
        &self.call_id
    }

    /// The tool the model named.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The tool's version, when it declares one (and the tool exists).
    pub fn tool_version(&self) -> Option<&str> {
        self.tool_version.as_deref()
    }

    /// Success or error.
    pub fn outcome(&self) -> &Outcome {
        &self.outcome
    }

    /// Whether the content was cut to fit the output limit.
    pub fn truncated(&self) -> bool {
        self.truncated
    }

    /// How many secrets were redacted from what the model receives. A replay counts none:
    /// the result it answers with was kept with its secrets redacted already.
    pub fn redactions(&self) -> u32 {
        self.redactions
    }

    /// The id under which the full output was kept, when it was cut.
    pub fn artifact(&self) -> Option<&str> {
        self.artifact.as_deref()
    }

    /// Page metadata, for a pagination tool.
    pub fn page(&self) -> Option<&PageInfo> {
        self.page.as_deref()
    }

    /// Time from the start of the call to its answer, all attempts and backoff included.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// Whether the answer is an earlier execution's result, replayed by the idempotency layer
    /// (the tool did not run again).
    pub fn replayed(&self) -> bool {
        self.replayed
    }

    /// How many times the tool ran (0 when the call was answered before running).
    pub fn attempts(&self) -> u32 {
        self.attempts
    }

    /// The batch the call ran in, when it ran.
    pub fn batch(&self) -> Option<usize> {
        self.batch.map(|batch| batch as usize)
    }

    /// What the gate decided about the call: `auto`, `approved`, `edited` for a call that
    /// ran; `denied` or `pending` for one it stopped. `None` when the call never reached the
    /// gate: an unknown tool, invalid arguments, a tool out of scope or a missing role, a
    /// run's budget refusing it before the policy.
    pub fn gate(&self) -> Option<Gate> {
        self.gate
    }

    /// Whether the call succeeded.
    pub fn is_success(&self) -> bool {
        matches!(self.outcome, Outcome::Success { .. })
    }

    /// The content, when the call succeeded.
    pub fn content(&self) -> Option<&str> {
        match &self.outcome {
            Outcome::Success { content } => Some(content),
            Outcome::Error { .. } => None,
        }
    }

    /// The content blocks, when the call succeeded and the tool returned
    /// [`Contents`](crate::Contents) (its texts shaped by the output policy); the content is
    /// then their JSON.
    pub fn content_blocks(&self) -> Option<Vec<tool_core::Content>> {
        if !self.content_blocks {
            return None;
        }
        serde_json::from_str(self.content()?).ok()
    }

    /// The error, when the call failed.
    pub fn error(&self) -> Option<&ToolError> {
        match &self.outcome {
            Outcome::Success { .. } => None,
            Outcome::Error { error } => Some(error),
        }
    }

    /// The error's kind (`"timeout"`, ...), when the call failed.
    pub fn error_kind(&self) -> Option<&str> {
        self.error().map(|error| error.kind().as_str())
    }

    /// What the model reads: the content, or the error rendered as JSON.
    pub fn text_for_model(&self) -> String {
        match &self.outcome {
            Outcome::Success { content } => content.clone(),
            Outcome::Error { error } => {
                serde_json::to_string(&serde_json::json!({ "error": error }))
                    .unwrap_or_else(|_| error.to_string())
            }
        }
    }
}

/// Calls that ran together.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Batch {
    /// The batch's position in the turn.
    pub(crate) index: usize,
    /// The positions of its calls in the turn (and of their observations in the report), in
    /// call order.
    pub(crate) calls: Vec<usize>,
    /// Whether its calls ran concurrently (a batch of parallel-safe calls) or it is one
    /// serial call.
    pub(crate) concurrent: bool,
}

/// Everything a turn produced.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TurnReport {
    /// One observation per call, in the order the model issued the calls.
    pub(crate) observations: Vec<Observation>,
    /// Which calls ran together, in order. Calls rejected while planning are in no batch.
    pub(crate) batches: Vec<Batch>,
    /// Wall time of the whole turn.
    #[serde(rename = "elapsed_ms", serialize_with = "millis")]
    pub(crate) elapsed: Duration,
}

impl Batch {
    /// The batch's position in the turn.
    pub fn index(&self) -> usize {
        self.index
    }

    /// The positions of its calls in the turn (and of their observations in the report), in
    /// call order.
    pub fn calls(&self) -> &[usize] {
        &self.calls
    }

    /// Whether its calls ran concurrently (a batch of parallel-safe calls) or it is one
    /// serial call.
    pub fn concurrent(&self) -> bool {
        self.concurrent
    }
}

impl TurnReport {
    /// One observation per call, in the order the model issued the calls.
    pub fn observations(&self) -> &[Observation] {
        &self.observations
    }

    /// Which calls ran together, in order. Calls answered while planning are in no batch.
    pub fn batches(&self) -> &[Batch] {
        &self.batches
    }

    /// Wall time of the whole turn.
    pub fn elapsed(&self) -> Duration {
        self.elapsed
    }

    /// The observation answering `call_id`.
    pub fn get(&self, call_id: &str) -> Option<&Observation> {
        self.observations
            .iter()
            .find(|observation| &*observation.call_id == call_id)
    }

    /// The ids of a batch's calls, in call order.
    pub fn batch_call_ids<'a>(&'a self, batch: &'a Batch) -> impl Iterator<Item = &'a str> + 'a {
        batch
            .calls
            .iter()
            .filter_map(|&position| self.observations.get(position))
            .map(|observation| &*observation.call_id)
    }

    /// The batches as lists of call ids, for a compact view of the schedule.
    pub fn schedule(&self) -> Vec<Vec<&str>> {
        self.batches
            .iter()
            .map(|batch| self.batch_call_ids(batch).collect())
            .collect()
    }
}

impl IntoIterator for TurnReport {
    type Item = Observation;
    type IntoIter = std::vec::IntoIter<Observation>;

    fn into_iter(self) -> Self::IntoIter {
        self.observations.into_iter()
    }
}
