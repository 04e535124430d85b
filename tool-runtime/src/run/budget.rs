//! What a run may spend: the [`Budget`], the [`StopReason`] of each limit, and the meter that
//! counts a run's calls at the gate, where every call passes (the model's and the ones tools
//! make).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::json;
use tool_core::{ErrorKind, ToolError};

use crate::model::Usage;
use crate::trace::NestedCall;

/// The limits of one run. Every limit has a default, so a model that loops is stopped even
/// when nobody set one.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::run::Budget;
///
/// let budget = Budget::default()
///     .max_rounds(6)
///     .max_tool_calls(20)
///     .max_wall_time(Duration::from_secs(60))
///     .max_total_tokens(50_000)
///     .max_calls_of("create_ticket", 1);
/// # let _ = budget;
/// ```
///
/// A budget also reads from configuration (serde; every field optional, unknown fields
/// refused, the wall time in milliseconds, `per_tool` by tool name):
///
/// ```
/// use tool_runtime::run::Budget;
///
/// let budget: Budget = serde_json::from_str(
///     r#"{"max_rounds": 6, "max_wall_time_ms": 60000, "per_tool": {"create_ticket": 1}}"#,
/// )?;
/// assert_eq!(budget, Budget::default().max_rounds(6)
///     .max_wall_time(std::time::Duration::from_secs(60))
///     .max_calls_of("create_ticket", 1));
/// # Ok::<(), serde_json::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[must_use]
pub struct Budget {
    pub(crate) max_rounds: u32,
    pub(crate) max_tool_calls: u32,
    #[serde(rename = "max_wall_time_ms", with = "millis")]
    pub(crate) max_wall_time: Duration,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_input_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) max_total_tokens: Option<u64>,
    pub(crate) max_duplicate_calls: u32,
    pub(crate) max_no_progress_rounds: u32,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) per_tool: BTreeMap<String, u32>,
}

/// A duration as whole milliseconds.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        time: &Duration,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_u64(u64::try_from(time.as_millis()).unwrap_or(u64::MAX))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Duration, D::Error> {
        u64::deserialize(deserializer).map(Duration::from_millis)
    }
}

impl Default for Budget {
    /// 10 model rounds, 50 tool calls, 5 minutes, no token limit, 2 duplicate calls, 2
    /// consecutive rounds without progress, no limit per tool.
    fn default() -> Self {
        Self {
            max_rounds: 10,
            max_tool_calls: 50,
            max_wall_time: Duration::from_secs(300),
            max_input_tokens: None,
            max_output_tokens: None,
            max_total_tokens: None,
            max_duplicate_calls: 2,
            max_no_progress_rounds: 2,
            per_tool: BTreeMap::new(),
        }
    }
}

impl Budget {
    /// How many times the model is asked (the answer that ends the run included).
    pub fn max_rounds(mut self, rounds: u32) -> Self {
        self.max_rounds = rounds;
        self
    }

    /// How many tool calls run, the calls tools make through `ctx.call_tool` included.
    pub fn max_tool_calls(mut self, calls: u32) -> Self {
        self.max_tool_calls = calls;
        self
    }

    /// How long the run may take, counted while it runs (a run resumed after a crash goes on
    /// from the time it had used).
    pub fn max_wall_time(mut self, time: Duration) -> Self {
        self.max_wall_time = time;
        self
    }

    /// The tokens all the model's requests may take in.
    pub fn max_input_tokens(mut self, tokens: u64) -> Self {
        self.max_input_tokens = Some(tokens);
        self
    }

    /// The tokens all the model's answers may take.
    pub fn max_output_tokens(mut self, tokens: u64) -> Self {
        self.max_output_tokens = Some(tokens);
        self
    }

    /// The tokens in and out together.
    pub fn max_total_tokens(mut self, tokens: u64) -> Self {
        self.max_total_tokens = Some(tokens);
        self
    }

    /// How many calls may repeat an earlier call of the run (the same tool and the same
    /// canonical arguments: key order and filled-in defaults do not make a call new; another
    /// pagination cursor does). The call past the limit is refused.
    pub fn max_duplicate_calls(mut self, calls: u32) -> Self {
        self.max_duplicate_calls = calls;
        self
    }

    /// How many rounds in a row may make no progress (every call failed, or repeated an
    /// earlier one).
    pub fn max_no_progress_rounds(mut self, rounds: u32) -> Self {
        self.max_no_progress_rounds = rounds;
        self
    }

    /// How many times `tool` may be called in the run.
    pub fn max_calls_of(mut self, tool: impl Into<String>, calls: u32) -> Self {
        self.per_tool.insert(tool.into(), calls);
        self
    }

    /// The token limit `usage` is at or past, if any.
    pub(crate) fn tokens_spent(&self, usage: Usage) -> bool {
        self.max_input_tokens
            .is_some_and(|limit| usage.input_tokens >= limit)
            || self
                .max_output_tokens
                .is_some_and(|limit| usage.output_tokens >= limit)
            || self
                .max_total_tokens
                .is_some_and(|limit| usage.total() >= limit)
    }
}

/// Why a budget stopped a run, as a stable name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// The model was asked [`Budget::max_rounds`] times without ending the run.
    MaxRounds,
    /// The run made [`Budget::max_tool_calls`] calls; the next was refused.
    MaxToolCalls,
    /// A tool was called as often as [`Budget::max_calls_of`] allows; the next call was
    /// refused.
    MaxCallsPerTool,
    /// More calls repeated earlier ones than [`Budget::max_duplicate_calls`] allows.
    DuplicateCalls,
    /// [`Budget::max_no_progress_rounds`] rounds in a row made no progress.
    NoProgress,
    /// The run used [`Budget::max_wall_time`]; calls still running were cancelled.
    RunTimeout,
    /// The run's tokens reached a token limit.
    TokenBudget,
}

impl StopReason {
    /// The stable name: `max_rounds`, `max_tool_calls`, `max_calls_per_tool`,
    /// `duplicate_calls`, `no_progress`, `run_timeout`, `token_budget`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            StopReason::MaxRounds => "max_rounds",
            StopReason::MaxToolCalls => "max_tool_calls",
            StopReason::MaxCallsPerTool => "max_calls_per_tool",
            StopReason::DuplicateCalls => "duplicate_calls",
            StopReason::NoProgress => "no_progress",
            StopReason::RunTimeout => "run_timeout",
            StopReason::TokenBudget => "token_budget",
        }
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a run has spent, as its record keeps it after each round.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Spent {
    /// Model rounds.
    pub rounds: u32,
    /// Tool calls that reached the gate (nested ones, and those it refused or left pending,
    /// included).
    pub calls: u32,
    /// Calls per tool.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub per_tool: BTreeMap<String, u32>,
    /// Calls that repeated an earlier one.
    pub duplicates: u32,
    /// Rounds in a row without progress, at the end of the last round.
    pub no_progress: u32,
    /// Tokens in and out.
    pub usage: Usage,
    /// Time the run has taken, in milliseconds.
    pub elapsed_ms: u64,
    /// Every distinct call made: its tool and the digest of its canonical arguments.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub(crate) seen: BTreeSet<(String, String)>,
}

/// Counts a run's calls where the gate decides them. Shared by the run and its session.
pub(crate) struct Meter {
    budget: Budget,
    state: Mutex<MeterState>,
    /// The calls tools made this round, kept only when the run is traced.
    nested: Option<Mutex<Vec<NestedCall>>>,
}

struct MeterState {
    spent: Spent,
    /// The call ids of this round's calls that repeated an earlier call.
    repeated: Vec<Arc<str>>,
    /// The limit a call hit, when one did: every later call is refused with it.
    stop: Option<StopReason>,
}

impl std::fmt::Debug for Meter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Meter").finish_non_exhaustive()
    }
}

impl Meter {
    /// A meter for `budget`, from what the run spent already.
    pub(crate) fn new(budget: Budget, spent: Spent) -> Self {
        Self {
            budget,
            state: Mutex::new(MeterState {
                spent,
                repeated: Vec::new(),
                stop: None,
            }),
            nested: None,
        }
    }

    /// The meter, keeping the calls tools make for the run's trace.
    pub(crate) fn tracing_nested(mut self) -> Self {
        self.nested = Some(Mutex::new(Vec::new()));
        self
    }

    /// Keeps a call a tool made, for the trace; `call` is made only when the run is traced.
    pub(crate) fn record_nested(&self, call: impl FnOnce() -> NestedCall) {
        if let Some(nested) = &self.nested {
            nested
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(call());
        }
    }

    /// The calls tools made since the last time.
    pub(crate) fn take_nested(&self) -> Vec<NestedCall> {
        self.nested.as_ref().map_or_else(Vec::new, |nested| {
            std::mem::take(&mut *nested.lock().unwrap_or_else(PoisonError::into_inner))
        })
    }

    fn state(&self) -> std::sync::MutexGuard<'_, MeterState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts a call at the gate, or refuses it with the limit it hits. `digest`: the digest
    /// of its canonical arguments, computed only here.
    pub(crate) fn admit(
        &self,
        call_id: &Arc<str>,
        tool: &str,
        digest: impl FnOnce() -> String,
    ) -> Result<(), ToolError> {
        let mut state = self.state();
        if let Some(reason) = state.stop {
            return Err(budget_exceeded(reason, None));
        }
        if state.spent.calls >= self.budget.max_tool_calls {
            return Err(state.stop_at(StopReason::MaxToolCalls, self.budget.max_tool_calls));
        }
        let of_tool = state.spent.per_tool.get(tool).copied().unwrap_or(0);
        if let Some(&limit) = self.budget.per_tool.get(tool)
            && of_tool >= limit
        {
            return Err(state.stop_at(StopReason::MaxCallsPerTool, limit));
        }
        let seen = (tool.to_owned(), digest());
        if state.spent.seen.contains(&seen) {
            if state.spent.duplicates >= self.budget.max_duplicate_calls {
                return Err(
                    state.stop_at(StopReason::DuplicateCalls, self.budget.max_duplicate_calls)
                );
            }
            state.spent.duplicates += 1;
            state.repeated.push(Arc::clone(call_id));
        } else {
            state.spent.seen.insert(seen);
        }
        state.spent.calls += 1;
        *state.spent.per_tool.entry(tool.to_owned()).or_insert(0) += 1;
        Ok(())
    }

    /// The limit a call hit this run, if one did.
    pub(crate) fn stopped(&self) -> Option<StopReason> {
        self.state().stop
    }

    /// Ends a round: whether it made progress, given which of its calls succeeded; the
    /// tokens it took and the time the run has taken. Returns what the run has spent.
    pub(crate) fn end_round(
        &self,
        succeeded: &[Arc<str>],
        usage: Usage,
        elapsed: Duration,
    ) -> Spent {
        let mut state = self.state();
        let repeated = std::mem::take(&mut state.repeated);
        let progress = succeeded.iter().any(|id| !repeated.contains(id));
        state.spent.no_progress = if progress {
            0
        } else {
            state.spent.no_progress + 1
        };
        state.spent.usage = usage;
        state.spent.elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        state.spent.clone()
    }

    /// What the run has spent at its end: the tokens and the time.
    pub(crate) fn finish(&self, usage: Usage, elapsed: Duration) -> Spent {
        let mut state = self.state();
        state.spent.usage = usage;
        state.spent.elapsed_ms = u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX);
        state.spent.clone()
    }

    /// A round asked of the model.
    pub(crate) fn count_round(&self) {
        self.state().spent.rounds += 1;
    }

    /// What the run has spent so far.
    pub(crate) fn spent(&self) -> Spent {
        self.state().spent.clone()
    }

    /// The budget counted against.
    pub(crate) fn budget(&self) -> &Budget {
        &self.budget
    }
}

impl MeterState {
    fn stop_at(&mut self, reason: StopReason, limit: u32) -> ToolError {
        self.stop = Some(reason);
        budget_exceeded(reason, Some(limit))
    }
}

/// The answer to a call a budget refused: it did not run, and the run ends after this round.
pub(crate) fn budget_exceeded(reason: StopReason, limit: Option<u32>) -> ToolError {
    let mut details = json!({ "reason": reason.as_str() });
    if let Some(limit) = limit {
        details["limit"] = json!(limit);
    }
    ToolError::new(
        ErrorKind::BudgetExceeded,
        format!("the run's budget is spent ({reason}): the call did not run"),
    )
    .with_hint("do not call more tools; answer with what you have")
    .with_details(details)
}
