//! The figures of a set of traces.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::read::{Event, Traces};

/// The figures of a set of traces ([`Report::from`]), serializable as JSON.
///
/// Maps are ordered by key and lists by tool (then by what they count), so the same traces
/// always give the same report.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// How many files were read.
    pub files: usize,
    /// How many events were read.
    pub events: usize,
    /// How many lines or files could not be read.
    pub problems: usize,
    /// The runs and how they ended.
    pub runs: RunFigures,
    /// Policy compliance: calls by the gate's decision.
    pub gates: GateFigures,
    /// Intent-tool match: what routing decided, and the calls refused as out of scope.
    pub routing: RoutingFigures,
    /// Duplicate calls and rounds without progress.
    pub progress: ProgressFigures,
    /// Argument validity per tool.
    pub arguments: Vec<ArgumentFigures>,
    /// Budget stops by reason (a `StopReason` string).
    pub budget_stops: BTreeMap<String, u64>,
    /// Calls the model made per round.
    pub calls_per_round: RoundFigures,
    /// Latency per tool.
    pub latency: Vec<LatencyFigures>,
    /// Token cost per run.
    pub tokens: TokenFigures,
    /// Token cost per tool description (what the catalog shown to the model costs).
    pub catalog: Vec<CatalogFigures>,
    /// Error kinds per tool.
    pub errors: Vec<ErrorFigures>,
}

/// The runs of the traces.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunFigures {
    /// Distinct run ids seen in any event.
    pub runs: u64,
    /// `run_started` events that continued a run from its record.
    pub resumed: u64,
    /// Runs by how they ended (`answered`, `clarify`, `stopped`), from `run_ended`.
    pub ends: BTreeMap<String, u64>,
    /// Runs with no `run_ended` event (still going, or cut off).
    pub unfinished: u64,
}

/// Calls by the gate's decision.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GateFigures {
    /// Allowed by the policy without asking.
    pub auto: u64,
    /// Approved by a person.
    pub approved: u64,
    /// Approved by a person with edited arguments.
    pub edited: u64,
    /// Refused (by the policy or a person).
    pub denied: u64,
    /// Waiting for a person's decision.
    pub pending: u64,
    /// Calls that never reached the gate (`gate` null: unknown tool, invalid arguments, scope).
    pub not_reached: u64,
    /// Calls with a gate value this reader does not know.
    pub other: u64,
}

impl GateFigures {
    /// Every call counted.
    pub fn total(&self) -> u64 {
        self.auto
            + self.approved
            + self.edited
            + self.denied
            + self.pending
            + self.not_reached
            + self.other
    }

    /// The counts with their names, in the order the table shows them.
    pub fn named(&self) -> [(&'static str, u64); 7] {
        [
            ("auto", self.auto),
            ("approved", self.approved),
            ("edited", self.edited),
            ("denied", self.denied),
            ("pending", self.pending),
            ("not_reached", self.not_reached),
            ("other", self.other),
        ]
    }
}

/// What routing decided for each run (its last `routed` event), and the out-of-scope refusals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RoutingFigures {
    /// Runs routed to each intent.
    pub runs_per_intent: BTreeMap<String, u64>,
    /// Runs routed to no intent (`intent` null).
    pub unknown: u64,
    /// Runs whose routing asked the user to clarify.
    pub clarify: u64,
    /// How many runs' routing carried each signal (e.g. `weak_rule`).
    pub signals: BTreeMap<String, u64>,
    /// Calls refused as `out_of_scope`, per the run's routed intent and the tool.
    pub out_of_scope: Vec<OutOfScope>,
}

/// Calls to one tool refused as out of scope for one routed intent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutOfScope {
    /// The run's intent when the call was made (null: none, or not routed).
    pub intent: Option<String>,
    /// The tool the model called.
    pub tool: String,
    /// How many such calls.
    pub refusals: u64,
}

/// Duplicate calls and rounds without progress, from `round_ended`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ProgressFigures {
    /// Rounds that ended.
    pub rounds: u64,
    /// Calls that repeated an earlier call of their run.
    pub duplicate_calls: u64,
    /// Rounds with at least one duplicate.
    pub rounds_with_duplicates: u64,
    /// Rounds in which every call failed or repeated.
    pub rounds_without_progress: u64,
}

/// Argument validity of one tool's calls.
///
/// A call's arguments are valid when it has an `arguments_digest`: the runtime digests only
/// arguments that parsed and validated. Calls refused before their arguments were read (an
/// unknown tool, `out_of_scope`, `not_permitted`) are not counted; a tool none of whose calls
/// got that far has no row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ArgumentFigures {
    /// The tool.
    pub tool: String,
    /// Calls whose arguments were checked.
    pub calls: u64,
    /// Calls with valid arguments.
    pub valid: u64,
    /// `valid / calls`.
    pub rate: f64,
    /// The fields named most often by invalid arguments: at most 3, most frequent first
    /// (ties by name).
    pub invalid_fields: Vec<FieldCount>,
}

/// One field named by invalid arguments, and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldCount {
    /// The field.
    pub field: String,
    /// How many calls named it.
    pub count: u64,
}

/// Calls the model made per round (`model_answered.calls`; its final answer is a round of 0).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RoundFigures {
    /// Rounds the model answered.
    pub rounds: u64,
    /// Calls made in them.
    pub calls: u64,
    /// Calls per round on average (0 without rounds).
    pub mean: f64,
    /// The most calls in one round.
    pub max: u32,
    /// Rounds by how many calls they made, by that number.
    pub histogram: Vec<HistogramBin>,
}

/// Rounds that made the same number of calls.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HistogramBin {
    /// Calls in the round.
    pub calls: u32,
    /// How many rounds made that many.
    pub rounds: u64,
}

/// Latency of one tool's calls (`elapsed_ms`, nearest-rank percentiles).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LatencyFigures {
    /// The tool.
    pub tool: String,
    /// Calls measured.
    pub calls: u64,
    /// Median, in milliseconds.
    pub p50: f64,
    /// 95th percentile, in milliseconds.
    pub p95: f64,
    /// 99th percentile, in milliseconds.
    pub p99: f64,
    /// Slowest, in milliseconds.
    pub max: f64,
}

/// Token cost per run: `run_ended`'s totals, or the sum of its `model_answered` events for a
/// run that did not end.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TokenFigures {
    /// Runs counted.
    pub runs: u64,
    /// Input tokens of all runs.
    pub input_total: u64,
    /// Output tokens of all runs.
    pub output_total: u64,
    /// Input tokens per run on average.
    pub input_mean: f64,
    /// Output tokens per run on average.
    pub output_mean: f64,
}

/// What one tool's description costs in the catalogs shown to the model (`run_started`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CatalogFigures {
    /// The tool.
    pub tool: String,
    /// Its tokens (name, description, schema) as last seen.
    pub tokens: u64,
    /// How many catalogs showed it.
    pub shown: u64,
    /// Tokens spent on it over all those catalogs.
    pub total: u64,
}

/// One error kind of one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ErrorFigures {
    /// The tool.
    pub tool: String,
    /// The error kind (e.g. `invalid_arguments`, `timeout`).
    pub kind: String,
    /// How many calls ended with it.
    pub count: u64,
}

/// What one run accumulates while its events are read.
#[derive(Default)]
struct RunState {
    routed: Option<(Option<String>, bool, Vec<String>)>,
    ended: Option<(u64, u64)>,
    answered: (u64, u64),
}

/// Per tool, while calls are read.
#[derive(Default)]
struct ToolState {
    calls: u64,
    /// Calls whose arguments were checked (not refused before they were read).
    checked: u64,
    valid: u64,
    invalid_fields: HashMap<String, u64>,
    elapsed: Vec<f64>,
    errors: BTreeMap<String, u64>,
}

impl From<&Traces> for Report {
    fn from(traces: &Traces) -> Self {
        let mut runs: HashMap<&str, RunState> = HashMap::new();
        let mut tools: BTreeMap<&str, ToolState> = BTreeMap::new();
        let mut report = Report {
            files: traces.file_count(),
            events: traces.event_count(),
            problems: traces.problems().len(),
            runs: RunFigures::default(),
            gates: GateFigures::default(),
            routing: RoutingFigures::default(),
            progress: ProgressFigures::default(),
            arguments: Vec::new(),
            budget_stops: BTreeMap::new(),
            calls_per_round: RoundFigures::default(),
            latency: Vec::new(),
            tokens: TokenFigures::default(),
            catalog: Vec::new(),
            errors: Vec::new(),
        };
        let mut out_of_scope: BTreeMap<(Option<String>, &str), u64> = BTreeMap::new();
        let mut histogram: BTreeMap<u32, u64> = BTreeMap::new();
        let mut catalog: BTreeMap<&str, (u64, u64)> = BTreeMap::new();

        for line in &traces.events {
            let run = runs.entry(line.run.as_str()).or_default();
            match &line.event {
                Event::RunStarted {
                    resumed,
                    catalog: shown,
                } => {
                    report.runs.resumed += u64::from(*resumed);
                    for entry in shown {
                        let seen = catalog.entry(entry.name.as_str()).or_default();
                        seen.0 = entry.tokens;
                        seen.1 += 1;
                    }
                }
                Event::Routed {
                    intent,
                    signals,
                    clarify,
                } => run.routed = Some((intent.clone(), *clarify, signals.clone())),
                Event::ModelAnswered {
                    input_tokens,
                    output_tokens,
                    calls,
                } => {
                    run.answered.0 += input_tokens;
                    run.answered.1 += output_tokens;
                    *histogram.entry(*calls).or_default() += 1;
                }
                Event::Call {
                    tool,
                    arguments_digest,
                    gate,
                    elapsed_ms,
                    error_kind,
                    invalid_field,
                } => {
                    let gates = &mut report.gates;
                    let count = match gate.as_deref() {
                        Some("auto") => &mut gates.auto,
                        Some("approved") => &mut gates.approved,
                        Some("edited") => &mut gates.edited,
                        Some("denied") => &mut gates.denied,
                        Some("pending") => &mut gates.pending,
                        None => &mut gates.not_reached,
                        Some(_) => &mut gates.other,
                    };
                    *count += 1;
                    let state = tools.entry(tool.as_str()).or_default();
                    state.calls += 1;
                    if !refused_unread(error_kind.as_deref()) {
                        state.checked += 1;
                        state.valid += u64::from(arguments_digest.is_some());
                    }
                    if let Some(field) = invalid_field {
                        *state.invalid_fields.entry(field.clone()).or_default() += 1;
                    }
                    state.elapsed.push(*elapsed_ms);
                    if let Some(kind) = error_kind {
                        *state.errors.entry(kind.clone()).or_default() += 1;
                        if kind == "out_of_scope" {
                            let intent = run
                                .routed
                                .as_ref()
                                .and_then(|(intent, _, _)| intent.clone());
                            *out_of_scope.entry((intent, tool.as_str())).or_default() += 1;
                        }
                    }
                }
                Event::RoundEnded {
                    duplicates,
                    progress,
                } => {
                    let figures = &mut report.progress;
                    figures.rounds += 1;
                    figures.duplicate_calls += u64::from(*duplicates);
                    figures.rounds_with_duplicates += u64::from(*duplicates > 0);
                    figures.rounds_without_progress += u64::from(!*progress);
                }
                Event::BudgetStopped { reason } => {
                    *report.budget_stops.entry(reason.clone()).or_default() += 1;
                }
                Event::RunEnded {
                    end,
                    input_tokens,
                    output_tokens,
                } => {
                    if run.ended.is_none() {
                        *report.runs.ends.entry(end.clone()).or_default() += 1;
                    }
                    run.ended = Some((*input_tokens, *output_tokens));
                }
            }
        }

        report.runs.runs = runs.len() as u64;
        for run in runs.values() {
            if run.ended.is_none() {
                report.runs.unfinished += 1;
            }
            let (input, output) = run.ended.unwrap_or(run.answered);
            report.tokens.input_total += input;
            report.tokens.output_total += output;
            if let Some((intent, clarify, signals)) = &run.routed {
                match intent {
                    Some(intent) => {
                        *report
                            .routing
                            .runs_per_intent
                            .entry(intent.clone())
                            .or_default() += 1;
                    }
                    None => report.routing.unknown += 1,
                }
                report.routing.clarify += u64::from(*clarify);
                for signal in signals {
                    *report.routing.signals.entry(signal.clone()).or_default() += 1;
                }
            }
        }
        report.tokens.runs = report.runs.runs;
        report.tokens.input_mean = mean(report.tokens.input_total, report.tokens.runs);
        report.tokens.output_mean = mean(report.tokens.output_total, report.tokens.runs);

        report.routing.out_of_scope = out_of_scope
            .into_iter()
            .map(|((intent, tool), refusals)| OutOfScope {
                intent,
                tool: tool.to_owned(),
                refusals,
            })
            .collect();

        let rounds = &mut report.calls_per_round;
        for (&calls, &count) in &histogram {
            rounds.rounds += count;
            rounds.calls += u64::from(calls) * count;
            rounds.max = rounds.max.max(calls);
            rounds.histogram.push(HistogramBin {
                calls,
                rounds: count,
            });
        }
        rounds.mean = mean(rounds.calls, rounds.rounds);

        report.catalog = catalog
            .into_iter()
            .map(|(tool, (tokens, shown))| CatalogFigures {
                tool: tool.to_owned(),
                tokens,
                shown,
                total: tokens * shown,
            })
            .collect();

        for (tool, mut state) in tools {
            let mut fields: Vec<FieldCount> = state
                .invalid_fields
                .into_iter()
                .map(|(field, count)| FieldCount { field, count })
                .collect();
            fields.sort_by(|a, b| b.count.cmp(&a.count).then_with(|| a.field.cmp(&b.field)));
            fields.truncate(3);
            if state.checked > 0 {
                report.arguments.push(ArgumentFigures {
                    tool: tool.to_owned(),
                    calls: state.checked,
                    valid: state.valid,
                    rate: state.valid as f64 / state.checked as f64,
                    invalid_fields: fields,
                });
            }
            state.elapsed.sort_by(f64::total_cmp);
            report.latency.push(LatencyFigures {
                tool: tool.to_owned(),
                calls: state.calls,
                p50: nearest_rank(&state.elapsed, 50),
                p95: nearest_rank(&state.elapsed, 95),
                p99: nearest_rank(&state.elapsed, 99),
                max: state.elapsed.last().copied().unwrap_or(0.0),
            });
            report
                .errors
                .extend(state.errors.into_iter().map(|(kind, count)| ErrorFigures {
                    tool: tool.to_owned(),
                    kind,
                    count,
                }));
        }
        report
    }
}

fn mean(total: u64, count: u64) -> f64 {
    if count == 0 {
        0.0
    } else {
        total as f64 / count as f64
    }
}

/// The nearest-rank percentile of sorted values: the smallest value with at least `percent`%
/// of the values at or below it (rank ⌈p·n/100⌉). 0 for no values.
fn nearest_rank(sorted: &[f64], percent: usize) -> f64 {
    let rank = (percent * sorted.len()).div_ceil(100).max(1);
    sorted.get(rank - 1).copied().unwrap_or(0.0)
}

/// Whether a call with this error kind was refused before its arguments were read: they are
/// neither valid nor invalid.
fn refused_unread(kind: Option<&str>) -> bool {
    matches!(
        kind,
        Some("unknown_tool" | "out_of_scope" | "not_permitted")
    )
}

#[cfg(test)]
mod tests {
    use super::nearest_rank;

    #[test]
    fn nearest_rank_takes_the_ceiling_rank() {
        let values: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(nearest_rank(&values, 50), 10.0);
        assert_eq!(nearest_rank(&values, 95), 19.0);
        assert_eq!(nearest_rank(&values, 99), 20.0);
        assert_eq!(nearest_rank(&[3.0], 50), 3.0);
        assert_eq!(nearest_rank(&[], 99), 0.0);
    }
}
