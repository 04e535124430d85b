//! What an agent's run records in its trace, step by step (the agent calls these where each
//! step happens).

use std::borrow::Cow;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::Duration;

use tokio::time::Instant;
use tool_core::{ErrorKind, Registry};

use super::{CatalogTool, TraceEvent, TraceSink};
use crate::arguments::CallArguments;
use crate::model::Usage;
use crate::observation::Observation;
use crate::routing::{RouteDecision, RouteSource};
use crate::run::{RunEnd, Spent, StopReason};
use crate::{ToolCall, TurnReport};

/// A call a tool made through `ctx.call_tool` during a run that is traced, as the stack
/// answered it (the run's meter keeps it until the round's events are written).
pub(crate) struct NestedCall {
    pub(crate) call_id: String,
    pub(crate) tool: String,
    pub(crate) arguments_digest: Option<String>,
    pub(crate) gate: Option<crate::observation::Gate>,
    pub(crate) attempts: u32,
    pub(crate) elapsed: Duration,
    pub(crate) error_kind: Option<String>,
    pub(crate) invalid_field: Option<String>,
    pub(crate) replayed: bool,
    pub(crate) redactions: u32,
}

/// One run's side of its trace: the sink (none: every step costs a branch), who the events
/// name, and the run's clock.
pub(crate) struct Tracer<'a> {
    sink: Option<&'a dyn TraceSink>,
    run: &'a str,
    session: &'a str,
    clock: Instant,
    /// The time the run took before this process continued it.
    already: Duration,
    /// The run's repeated calls at the end of the last round, to count a round's own.
    duplicates: u32,
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn whole_millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl<'a> Tracer<'a> {
    /// The tracer of the run `run` in `session`, whose clock started at `clock`, having taken
    /// `spent` before (a run continued from its record).
    pub(crate) fn new(
        sink: Option<&'a dyn TraceSink>,
        run: &'a str,
        session: &'a str,
        clock: Instant,
        spent: &Spent,
    ) -> Self {
        Self {
            sink,
            run,
            session,
            clock,
            already: Duration::from_millis(spent.elapsed_ms),
            duplicates: spent.duplicates,
        }
    }

    /// The run's time so far.
    fn elapsed(&self) -> Duration {
        self.already + self.clock.elapsed()
    }

    /// Hands an event to the sink, if there is one. A sink that panics is logged: the run
    /// goes on.
    fn emit(&self, event: impl FnOnce(String, String, u64) -> TraceEvent) {
        let Some(sink) = self.sink else {
            return;
        };
        let event = event(
            self.run.to_owned(),
            self.session.to_owned(),
            whole_millis(self.elapsed()),
        );
        if catch_unwind(AssertUnwindSafe(|| sink.record(&event))).is_err() {
            tracing::error!(
                run = self.run,
                event = event.name(),
                "the trace sink panicked; the run goes on"
            );
        }
    }

    /// `run_started`: the tools of the catalog the model is shown, with their tokens, made
    /// only when traced.
    pub(crate) fn started(
        &self,
        input: &str,
        resumed: bool,
        catalog: impl FnOnce() -> Vec<CatalogTool>,
    ) {
        if self.sink.is_none() {
            return;
        }
        let catalog = catalog();
        self.emit(|run, session, at_ms| TraceEvent::RunStarted {
            run,
            session,
            at_ms,
            input: input.to_owned(),
            resumed,
            catalog,
        });
    }

    /// `routed`: the router's decision.
    pub(crate) fn routed(&self, decision: &RouteDecision) {
        self.emit(|run, session, at_ms| TraceEvent::Routed {
            run,
            session,
            at_ms,
            intent: decision.intent.clone(),
            confidence: decision.confidence,
            source: match decision.source {
                RouteSource::Rule => "rule",
                RouteSource::Classifier => "classifier",
                RouteSource::Fallback => "fallback",
            }
            .to_owned(),
            signals: decision
                .signals
                .iter()
                .map(|signal| signal.as_str().to_owned())
                .collect(),
            clarify: decision.clarify.is_some(),
        });
    }

    /// `model_answered`: round `round`'s answer, its usage, how many calls it made and the
    /// model's time.
    pub(crate) fn answered(&self, round: u32, usage: Usage, calls: usize, elapsed: Duration) {
        self.emit(|run, session, at_ms| TraceEvent::ModelAnswered {
            run,
            session,
            at_ms,
            round,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            calls: count(calls),
            elapsed_ms: millis(elapsed),
        });
    }

    /// One `call` per observation of the round, one per call its tools made (`nested`),
    /// then `round_ended`; `spent`: what the run has spent at the round's end.
    pub(crate) fn round(
        &mut self,
        round: u32,
        calls: &[ToolCall],
        report: &TurnReport,
        nested: Vec<NestedCall>,
        spent: &Spent,
        registry: &Registry,
    ) {
        let duplicates = spent.duplicates.saturating_sub(self.duplicates);
        self.duplicates = spent.duplicates;
        if self.sink.is_none() {
            return;
        }
        for (position, observation) in report.observations().iter().enumerate() {
            // Observations answer the calls in call order; the search only guards that.
            let answers = |call: &&ToolCall| *call.id == *observation.call_id();
            let call = calls
                .get(position)
                .filter(answers)
                .or_else(|| calls.iter().find(answers));
            let digest = call.and_then(|call| digest(call, observation, registry));
            let error = observation.error();
            let invalid_field = error
                .filter(|error| *error.kind() == ErrorKind::InvalidArguments)
                .and_then(|error| error.details())
                .and_then(|details| details.get("field"))
                .and_then(|field| field.as_str())
                .map(str::to_owned);
            self.emit(|run, session, at_ms| TraceEvent::Call {
                run,
                session,
                at_ms,
                round,
                call_id: observation.call_id().to_owned(),
                tool: observation.tool().to_owned(),
                arguments_digest: digest,
                gate: observation.gate(),
                attempts: observation.attempts(),
                elapsed_ms: millis(observation.elapsed()),
                error_kind: observation.error_kind().map(str::to_owned),
                invalid_field,
                replayed: observation.replayed(),
                truncated: observation.truncated(),
                redactions: observation.redactions(),
                nested: false,
            });
        }
        for call in nested {
            self.emit(|run, session, at_ms| TraceEvent::Call {
                run,
                session,
                at_ms,
                round,
                call_id: call.call_id,
                tool: call.tool,
                arguments_digest: call.arguments_digest,
                gate: call.gate,
                attempts: call.attempts,
                elapsed_ms: millis(call.elapsed),
                error_kind: call.error_kind,
                invalid_field: call.invalid_field,
                replayed: call.replayed,
                truncated: false,
                redactions: call.redactions,
                nested: true,
            });
        }
        self.emit(|run, session, at_ms| TraceEvent::RoundEnded {
            run,
            session,
            at_ms,
            round,
            calls: count(report.observations().len()),
            duplicates,
            progress: spent.no_progress == 0,
        });
    }

    /// `budget_stopped`.
    pub(crate) fn stopped(&self, reason: StopReason) {
        self.emit(|run, session, at_ms| TraceEvent::BudgetStopped {
            run,
            session,
            at_ms,
            reason: reason.as_str().to_owned(),
        });
    }

    /// `run_ended`: how the run ended and what it spent.
    pub(crate) fn ended(&self, end: &RunEnd, spent: &Spent) {
        let (end, reason) = match end {
            RunEnd::Answered => ("answered", None),
            RunEnd::Clarify { .. } => ("clarify", None),
            RunEnd::Stopped { reason } => ("stopped", Some(reason.as_str().to_owned())),
        };
        let elapsed = self.elapsed();
        self.emit(|run, session, at_ms| TraceEvent::RunEnded {
            run,
            session,
            at_ms,
            end: end.to_owned(),
            reason,
            rounds: spent.rounds,
            calls: spent.calls,
            duplicates: spent.duplicates,
            input_tokens: spent.usage.input_tokens,
            output_tokens: spent.usage.output_tokens,
            elapsed_ms: millis(elapsed),
        });
    }
}

/// The digest of the canonical arguments the model sent, as the run's budget counts repeats
/// by (the tool's schema fills defaults in); `None` for a call whose arguments were never
/// validated: its tool is unknown or not the session's, or they were invalid.
fn digest(call: &ToolCall, observation: &Observation, registry: &Registry) -> Option<String> {
    let never_validated = observation.error().is_some_and(|error| {
        matches!(
            error.kind(),
            ErrorKind::UnknownTool
                | ErrorKind::InvalidArguments
                | ErrorKind::OutOfScope
                | ErrorKind::NotPermitted
        )
    });
    if never_validated {
        return None;
    }
    let found = registry.lookup(&call.name)?;
    let schema = found.tool.spec().input_schema();
    Some(
        CallArguments::new(Cow::Borrowed(&call.arguments), schema)
            .digest()
            .to_owned(),
    )
}
