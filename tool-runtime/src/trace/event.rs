//! The events of a run's trace, one per step, as the JSON lines of the trace format.

use serde::{Deserialize, Serialize};

use crate::observation::Gate;

/// One step of a run, as one line of its trace: the event's name under `"event"`, the run's
/// id, the session's id and the run's time in milliseconds when the event was recorded
/// (`at_ms`: a run continued from its record goes on from the time it had used, leaving out
/// the time between the processes; a round's `call` events are recorded when the round has
/// ended, so they share its time), then the event's own fields.
///
/// Reading a trace, unknown fields are ignored (a later version may add some); a line that
/// does not parse should be skipped, not fail the whole trace.
///
/// ```
/// use tool_runtime::trace::TraceEvent;
///
/// let line = r#"{"event":"round_ended","run":"r1","session":"s1","at_ms":3,"round":1,"calls":2,"duplicates":0,"progress":true,"later":1}"#;
/// let event: TraceEvent = serde_json::from_str(line)?;
/// assert_eq!(event.name(), "round_ended");
/// assert_eq!(event.run(), "r1");
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TraceEvent {
    /// The run started, or continued from its record (`resumed`).
    RunStarted {
        /// The run's id.
        run: String,
        /// The session's id.
        session: String,
        /// Milliseconds since the run started.
        at_ms: u64,
        /// What the user asked.
        input: String,
        /// Whether the run continued from its record.
        resumed: bool,
        /// The tools the model is shown, after routing (none when the run asks the user to
        /// clarify, or was answered from its record).
        catalog: Vec<CatalogTool>,
    },
    /// The router decided the request's intent.
    Routed {
        /// The run's id.
        run: String,
        /// The session's id.
        session: String,
        /// Milliseconds since the run started.
        at_ms: u64,
        /// The intent's label, or `None` when it is unknown.
        intent: Option<String>,
        /// How sure the deciding layer was, in [0, 1].
        confidence: f64,
        /// The layer that decided: `rule`, `classifier` or `fallback`.
        source: String,
        /// Why the decision is weaker than a confident one (`weak_rule`, ...), in order.
        signals: Vec<String>,
        /// Whether the user is asked a question instead of the model.
        clarify: bool,
    },
    /// The model answered one round.
    ModelAnswered {
        /// The run's id.
        run: String,
        /// The session's id.
        session: String,
        /// Milliseconds since the run started.
        at_ms: u64,
        /// The round, from 1.
        round: u32,
        /// Tokens of the request (reported by the model, or the runtime's estimate).
        input_tokens: u64,
        /// Tokens of the answer.
        output_tokens: u64,
        /// How many calls the answer made.
        calls: u32,
        /// The model's own time, in milliseconds.
        elapsed_ms: f64,
    },
    /// One call of a round was answered.
    Call {
        /// The run's id.
        run: String,
        /// The session's id.
        session: String,
        /// Milliseconds since the run started.
        at_ms: u64,
        /// The round the call belongs to.
        round: u32,
        /// The call's id.
        call_id: String,
        /// The tool the model named.
        tool: String,
        /// The hex SHA-256 of the canonical arguments the model sent (the digest the run's
        /// budget counts repeats by); `None` when they did not parse or validate.
        arguments_digest: Option<String>,
        /// What the gate decided; `None` when the call never reached it.
        gate: Option<Gate>,
        /// How many times the tool ran.
        attempts: u32,
        /// Time from the start of the call to its answer, in milliseconds.
        elapsed_ms: f64,
        /// The error's kind, when the call failed.
        error_kind: Option<String>,
        /// For `invalid_arguments`, the field the error names.
        invalid_field: Option<String>,
        /// Whether the answer was replayed by the idempotency layer.
        replayed: bool,
        /// Whether the output was cut to fit the limit.
        truncated: bool,
        /// How many secrets were redacted.
        redactions: u32,
        /// Whether a tool made the call through `ctx.call_tool` (its id is the calling call's,
        /// then `/` and the tool's name; a nested call's output is never cut, so
        /// `truncated` is `false`).
        nested: bool,
    },
    /// A round's calls were all answered.
    RoundEnded {
        /// The run's id.
        run: String,
        /// The session's id.
        session: String,
        /// Milliseconds since the run started.
        at_ms: u64,
        /// The round.
        round: u32,
        /// How many calls it made.
        calls: u32,
        /// How many of them repeated an earlier call of the run.
        duplicates: u32,
        /// Whether it made progress: `false` when every call failed or repeated.
        progress: bool,
    },
    /// A budget stopped the run.
    BudgetStopped {
        /// The run's id.
        run: String,
        /// The session's id.
        session: String,
        /// Milliseconds since the run started.
        at_ms: u64,
        /// The limit reached, a [`StopReason`](crate::run::StopReason) name.
        reason: String,
    },
    /// The run ended.
    RunEnded {
        /// The run's id.
        run: String,
        /// The session's id.
        session: String,
        /// Milliseconds since the run started.
        at_ms: u64,
        /// How: `answered`, `clarify` or `stopped`.
        end: String,
        /// The stop reason, for a stopped run.
        reason: Option<String>,
        /// Rounds asked of the model.
        rounds: u32,
        /// Calls that reached the gate (nested ones, and those it refused or left pending,
        /// included).
        calls: u32,
        /// Calls that repeated an earlier one.
        duplicates: u32,
        /// Tokens in, over the run.
        input_tokens: u64,
        /// Tokens out, over the run.
        output_tokens: u64,
        /// The run's time, in milliseconds.
        elapsed_ms: f64,
    },
}

/// One tool of the catalog a run's model is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct CatalogTool {
    /// The tool's name.
    pub name: String,
    /// Its name, description and schema, in tokens (the runtime's estimate).
    pub tokens: u64,
}

impl CatalogTool {
    /// The tool `name`, costing `tokens`.
    pub fn new(name: impl Into<String>, tokens: u64) -> Self {
        Self {
            name: name.into(),
            tokens,
        }
    }
}

impl TraceEvent {
    /// The event's name, as in its line's `"event"`: `run_started`, `routed`,
    /// `model_answered`, `call`, `round_ended`, `budget_stopped`, `run_ended`.
    pub fn name(&self) -> &'static str {
        match self {
            TraceEvent::RunStarted { .. } => "run_started",
            TraceEvent::Routed { .. } => "routed",
            TraceEvent::ModelAnswered { .. } => "model_answered",
            TraceEvent::Call { .. } => "call",
            TraceEvent::RoundEnded { .. } => "round_ended",
            TraceEvent::BudgetStopped { .. } => "budget_stopped",
            TraceEvent::RunEnded { .. } => "run_ended",
        }
    }

    /// The run's id.
    pub fn run(&self) -> &str {
        match self {
            TraceEvent::RunStarted { run, .. }
            | TraceEvent::Routed { run, .. }
            | TraceEvent::ModelAnswered { run, .. }
            | TraceEvent::Call { run, .. }
            | TraceEvent::RoundEnded { run, .. }
            | TraceEvent::BudgetStopped { run, .. }
            | TraceEvent::RunEnded { run, .. } => run,
        }
    }

    /// The session's id.
    pub fn session(&self) -> &str {
        match self {
            TraceEvent::RunStarted { session, .. }
            | TraceEvent::Routed { session, .. }
            | TraceEvent::ModelAnswered { session, .. }
            | TraceEvent::Call { session, .. }
            | TraceEvent::RoundEnded { session, .. }
            | TraceEvent::BudgetStopped { session, .. }
            | TraceEvent::RunEnded { session, .. } => session,
        }
    }

    /// Milliseconds since the run started.
    pub fn at_ms(&self) -> u64 {
        match self {
            TraceEvent::RunStarted { at_ms, .. }
            | TraceEvent::Routed { at_ms, .. }
            | TraceEvent::ModelAnswered { at_ms, .. }
            | TraceEvent::Call { at_ms, .. }
            | TraceEvent::RoundEnded { at_ms, .. }
            | TraceEvent::BudgetStopped { at_ms, .. }
            | TraceEvent::RunEnded { at_ms, .. } => *at_ms,
        }
    }
}
