//! Runs: a user's request carried through many turns between a [`Model`] and the tools.
//!
//! An [`Agent`] routes the request to an intent and its scope before the model sees any tool
//! ([`routing`](crate::routing)), then asks the model, executes its calls through the runtime
//! (the same stack as every other call: scope, validation, policy, approvals, idempotency),
//! and hands the answers back, until the model answers without calls or a [`Budget`] stops
//! the run.
//!
//! Each step is recorded in a [`RunStore`] as the run goes: the route decision, each answer
//! of the model (before its calls run), the answers its calls got. A run started again with
//! the same id, after its process died, continues from its record: the route decision is
//! reused, calls already answered are not sent to the model again, and a write that ran is
//! answered by the idempotency layer instead of running twice: the round is sent again as the
//! record holds it, so each write has the key it had (the session, the tool and the canonical
//! arguments), the same key a word-for-word repeat by the model has.
//!
//! An agent given a [`TraceSink`] ([`Agent::trace`]) also records each step as it happens,
//! one event per step, for reading a run afterwards (see [`trace`](crate::trace)).
//!
//! ```
//! use tool_runtime::model::{ModelResponse, ScriptedModel};
//! use tool_runtime::run::{Agent, RunEnd, RunRequest};
//! use tool_runtime::{Runtime, Session, ToolCall, tool, tools};
//!
//! pub struct Deps;
//!
//! /// Looks up the status of one order.
//! #[tool(read_only)]
//! fn order_status(
//!     /// The order id, like "A-1008".
//!     order_id: String,
//! ) -> String {
//!     format!("{order_id}: shipped")
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runtime = Runtime::builder(Deps).inventory(false).tools(tools![order_status]).build()?;
//! let model = ScriptedModel::new([
//!     ModelResponse::calls([ToolCall::new("c1", "order_status", r#"{"order_id":"A-1008"}"#)]),
//!     ModelResponse::text("A-1008 has shipped."),
//! ]);
//! let agent = Agent::new(runtime, model);
//! let report = agent
//!     .run(RunRequest::new("run-1", Session::new("s-1"), "Where is A-1008?"))
//!     .await?;
//! assert_eq!(report.end, RunEnd::Answered);
//! assert_eq!(report.answer(), Some("A-1008 has shipped."));
//! assert_eq!(report.spent.calls, 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```

mod budget;
mod store;
mod tokens;

use std::any::Any;
use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

pub(crate) use budget::Meter;
pub use budget::{Budget, Spent, StopReason};
#[cfg(feature = "redis")]
pub(crate) use store::taken;
pub use store::{MemoryRunStore, RunEvent, RunKey, RunStore};

use crate::model::{Message, Model, ModelError, ModelRequest, ModelResponse, Usage};
use crate::providers::LoweringError;
use crate::routing::{RouteDecision, RouteRequest, Router};
use crate::trace::{CatalogTool, TraceSink, Tracer};
use crate::{Runtime, Session, ToolCall, TurnReport};

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "end", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEnd {
    /// The model answered without calls: its text is the run's answer.
    Answered,
    /// The request needs something the user did not give (an entity its intent needs): the
    /// question is the run's answer, and no model was asked.
    Clarify {
        /// What to ask the user.
        question: String,
    },
    /// A budget stopped the run; what was done is in the report.
    Stopped {
        /// The limit reached.
        reason: StopReason,
    },
}

/// One request to run.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunRequest {
    /// The run's id: a run started again with it continues from its record.
    pub id: String,
    /// The session the run acts in (its principal, its scope before routing).
    pub session: Session,
    /// What the user asked.
    pub input: String,
    /// The conversation before the request, oldest first.
    pub history: Vec<Message>,
}

impl RunRequest {
    /// The run `id` of `input`, in `session`.
    pub fn new(id: impl Into<String>, session: Session, input: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            session,
            input: input.into(),
            history: Vec::new(),
        }
    }

    /// The request, following `history`.
    #[must_use]
    pub fn with_history(mut self, history: Vec<Message>) -> Self {
        self.history = history;
        self
    }
}

/// One round of a run: the model's answer and what its calls got.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Round {
    /// The round's number, from 1.
    pub number: u32,
    /// What the model answered (its usage filled in: reported, or counted).
    pub response: ModelResponse,
    /// One [`Message::Tool`] per call, in call order.
    pub results: Vec<Message>,
    /// The runtime's report of the round's calls, when this process ran them (a round read
    /// back from the record has none).
    pub report: Option<TurnReport>,
}

/// What a run did.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RunReport {
    /// The run's id.
    pub id: String,
    /// The route decision, when the agent has a router.
    pub route: Option<RouteDecision>,
    /// Every round, the ones read back from the record first.
    pub rounds: Vec<Round>,
    /// How the run ended.
    pub end: RunEnd,
    /// What it spent.
    pub spent: Spent,
    /// Whether the run continued from a record (it was started before, in this process or
    /// another).
    pub resumed: bool,
    /// The whole conversation: the history, the request, each answer and each call's result.
    pub messages: Vec<Message>,
}

impl RunReport {
    /// The run's answer: the model's last text when it answered, the question when the
    /// request needs clarifying.
    pub fn answer(&self) -> Option<&str> {
        match &self.end {
            RunEnd::Answered => self
                .rounds
                .last()
                .and_then(|round| round.response.text.as_deref()),
            RunEnd::Clarify { question } => Some(question),
            RunEnd::Stopped { .. } => None,
        }
    }
}

/// Why a run could not go on. The run's record keeps what was done: started again with the
/// same id, it continues from there.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The model gave no answer.
    #[error("run `{run}`: the model gave no answer: {error}")]
    Model {
        /// The run.
        run: String,
        /// The model's error.
        error: ModelError,
    },
    /// The run store or the decision store failed.
    #[error("run `{run}`: the store failed: {error}")]
    Store {
        /// The run.
        run: String,
        /// The store's error (`AlreadyExists`: another process drives the run).
        error: io::Error,
    },
    /// The session's tools cannot be lowered for the model's target.
    #[error("run `{run}`: {error}")]
    Catalog {
        /// The run.
        run: String,
        /// The lowering error, naming the tool.
        error: LoweringError,
    },
    /// The id names a run of another request.
    #[error("run `{run}` was started for another request: {reason}")]
    Conflict {
        /// The run.
        run: String,
        /// What differs.
        reason: String,
    },
}

/// Carries requests through runs: a runtime, a model, and optionally a router, a budget and a
/// run store (see the [module](self)).
pub struct Agent<D> {
    runtime: Runtime<D>,
    model: Arc<dyn Model>,
    router: Option<Arc<Router>>,
    budget: Budget,
    store: Arc<dyn RunStore>,
    instructions: Option<String>,
    trace: Option<Arc<dyn TraceSink>>,
}

impl<D> fmt::Debug for Agent<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Agent")
            .field("model", &self.model.name())
            .field("router", &self.router)
            .field("budget", &self.budget)
            .finish_non_exhaustive()
    }
}

impl<D: Any + Send + Sync> Agent<D> {
    /// An agent running `model`'s calls on `runtime`: no router (the session's scope as
    /// given), the default [`Budget`], records in memory.
    pub fn new(runtime: Runtime<D>, model: impl Model) -> Self {
        Self {
            runtime,
            model: Arc::new(model),
            router: None,
            budget: Budget::default(),
            store: Arc::new(MemoryRunStore::default()),
            instructions: None,
            trace: None,
        }
    }

    /// The agent, routing each request before the model sees a tool: the decision's scope
    /// narrows the session's.
    #[must_use]
    pub fn router(mut self, router: Router) -> Self {
        self.router = Some(Arc::new(router));
        self
    }

    /// The agent, with `budget` for each run.
    #[must_use]
    pub fn budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }

    /// The agent, recording runs in `store`.
    #[must_use]
    pub fn store(mut self, store: impl RunStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The agent, with instructions sent to the model first in every request.
    #[must_use]
    pub fn instructions(mut self, text: impl Into<String>) -> Self {
        self.instructions = Some(text.into());
        self
    }

    /// The agent, recording each run's steps in `sink` (see [`trace`](crate::trace)): its
    /// start and route, each answer of the model, each call with its gate decision, each
    /// round's end, and the run's end.
    #[must_use]
    pub fn trace(mut self, sink: impl TraceSink) -> Self {
        self.trace = Some(Arc::new(sink));
        self
    }

    /// Waits until every trace event recorded so far is written (see [`TraceSink::flush`]);
    /// without a trace, answers at once.
    ///
    /// # Errors
    ///
    /// An event recorded since the last flush could not be written.
    pub async fn flush_trace(&self) -> io::Result<()> {
        match &self.trace {
            Some(sink) => sink.flush().await,
            None => Ok(()),
        }
    }

    /// Runs `request` to its end, or continues it from its record when a run of its id was
    /// started before. A failure of the model or a store is the error; the record keeps what
    /// was done, and the run started again goes on from there.
    pub async fn run(&self, request: RunRequest) -> Result<RunReport, RunError> {
        let clock = Instant::now();
        let RunRequest {
            id,
            session,
            input,
            history,
        } = request;
        let key = RunKey::new(session.id(), id.as_str());
        let store_error = |error| RunError::Store {
            run: id.clone(),
            error,
        };
        let events = self.store.load(&key).await.map_err(store_error)?;
        let mut record = Record::read(&id, events, &input)?;
        let resumed = record.position > 0;
        // The session is scoped again after routing; the trace names it as it came.
        let session_id = session.id().to_owned();
        let mut tracer = Tracer::new(
            self.trace.as_deref(),
            &id,
            &session_id,
            clock,
            &record.spent,
        );
        let mut writer = Writer {
            store: &*self.store,
            key: &key,
            position: record.position,
        };
        if !resumed {
            writer
                .append(&RunEvent::Started {
                    input: input.clone(),
                    history: history.clone(),
                })
                .await
                .map_err(store_error)?;
        }
        let history = record.history.take().unwrap_or(history);

        // A run that ended is answered from its record.
        if let Some((end, spent)) = record.ended.take() {
            tracer.started(&input, true, Vec::new);
            tracer.ended(&end, &spent);
            return Ok(record.report(id, end, spent, history, input, true));
        }

        // The route, decided once per run and reused by every later stage. Routed now, it is
        // traced after the run's start, which names the catalog the route leads to.
        let mut routed_now = false;
        let scope = match &self.router {
            None => session.scope().clone(),
            Some(router) => {
                let decision = match record.route.clone() {
                    Some(decision) => decision,
                    None => {
                        let routed = router
                            .route(
                                &RouteRequest::new(&session, &id, &input)
                                    .with_history(!history.is_empty()),
                            )
                            .await
                            .map_err(store_error)?;
                        writer
                            .append(&RunEvent::Routed {
                                decision: routed.clone(),
                            })
                            .await
                            .map_err(store_error)?;
                        routed_now = true;
                        routed
                    }
                };
                let scope = router.scope(&decision);
                let clarify = decision.clarify.clone();
                record.route = Some(decision);
                if let Some(question) = clarify {
                    tracer.started(&input, resumed, Vec::new);
                    if routed_now && let Some(decision) = &record.route {
                        tracer.routed(decision);
                    }
                    let end = RunEnd::Clarify { question };
                    let spent = record.spent.clone();
                    writer
                        .append(&RunEvent::Ended {
                            end: end.clone(),
                            spent: spent.clone(),
                        })
                        .await
                        .map_err(store_error)?;
                    tracer.ended(&end, &spent);
                    return Ok(record.report(id, end, spent, history, input, resumed));
                }
                session.scope().intersection(&scope)
            }
        };

        let already = Duration::from_millis(record.spent.elapsed_ms);
        let meter = Meter::new(self.budget.clone(), record.spent.clone());
        let meter = Arc::new(if self.trace.is_some() {
            meter.tracing_nested()
        } else {
            meter
        });
        let session = session.with_scope(scope).with_meter(Arc::clone(&meter));
        let catalog = self
            .runtime
            .lowered_catalog(&session, self.model.target())
            .map_err(|error| RunError::Catalog {
                run: id.clone(),
                error,
            })?;
        tracer.started(&input, resumed, || {
            catalog
                .tools()
                .map(|tool| CatalogTool::new(&tool.name, tokens::of_tool(tool)))
                .collect()
        });
        if routed_now && let Some(decision) = &record.route {
            tracer.routed(decision);
        }
        let mut messages = record.messages(self.instructions.as_deref(), &history, &input);
        let mut counter = tokens::Counter::new(&catalog, &messages);
        let elapsed = || already + clock.elapsed();
        let deadline = clock + self.budget.max_wall_time.saturating_sub(already);
        let mut usage = record.spent.usage;

        // A round whose answer was recorded but whose calls were not answered (the process
        // died between): its calls run now, under the keys they had.
        let mut open = record.open.take();
        let end = loop {
            let (number, calls) = match open.take() {
                Some(round) => round,
                None => {
                    if let Some(reason) = self.stop_before_round(&meter, elapsed(), usage) {
                        break RunEnd::Stopped { reason };
                    }
                    meter.count_round();
                    let number = meter.spent().rounds;
                    let request = ModelRequest::new(&messages, &catalog);
                    let asked = Instant::now();
                    let Ok(answer) =
                        tokio::time::timeout_at(deadline, self.model.respond(request)).await
                    else {
                        break RunEnd::Stopped {
                            reason: StopReason::RunTimeout,
                        };
                    };
                    // The model's own time, before anything the agent does with its answer.
                    let responded = asked.elapsed();
                    let mut response = answer.map_err(|error| RunError::Model {
                        run: id.clone(),
                        error,
                    })?;
                    let used = response
                        .usage
                        .unwrap_or_else(|| counter.estimate(&messages, &response));
                    response.usage = Some(used);
                    usage = usage.plus(used);
                    tracer.answered(number, used, response.calls.len(), responded);
                    writer
                        .append(&RunEvent::Answered {
                            round: number,
                            response: response.clone(),
                        })
                        .await
                        .map_err(store_error)?;
                    messages.push(Message::Assistant {
                        text: response.text.clone(),
                        calls: response.calls.clone(),
                    });
                    let calls = response.calls.clone();
                    record.rounds.push(Round {
                        number,
                        response,
                        results: Vec::new(),
                        report: None,
                    });
                    if calls.is_empty() {
                        break RunEnd::Answered;
                    }
                    (number, calls)
                }
            };
            let report = self.execute(&session, &calls, deadline).await;
            let results = Message::tool_results(&report);
            let succeeded: Vec<Arc<str>> = report
                .observations()
                .iter()
                .filter(|observation| observation.is_success())
                .map(|observation| Arc::from(observation.call_id()))
                .collect();
            let spent = meter.end_round(&succeeded, usage, elapsed());
            tracer.round(
                number,
                &calls,
                &report,
                meter.take_nested(),
                &spent,
                self.runtime.registry(),
            );
            writer
                .append(&RunEvent::Observed {
                    round: number,
                    results: results.clone(),
                    spent,
                })
                .await
                .map_err(store_error)?;
            messages.extend(results.iter().cloned());
            if let Some(round) = record.rounds.last_mut() {
                round.results = results;
                round.report = Some(report);
            }
        };

        let spent = meter.finish(usage, elapsed());
        if let RunEnd::Stopped { reason } = &end {
            tracer.stopped(*reason);
        }
        writer
            .append(&RunEvent::Ended {
                end: end.clone(),
                spent: spent.clone(),
            })
            .await
            .map_err(store_error)?;
        tracer.ended(&end, &spent);
        Ok(RunReport {
            id,
            route: record.route,
            rounds: record.rounds,
            end,
            spent,
            resumed,
            messages,
        })
    }

    /// The limit that stops the run before the model is asked again, if one does.
    fn stop_before_round(
        &self,
        meter: &Meter,
        elapsed: Duration,
        usage: Usage,
    ) -> Option<StopReason> {
        let budget = meter.budget();
        let spent = meter.spent();
        if let Some(reason) = meter.stopped() {
            Some(reason)
        } else if spent.no_progress >= budget.max_no_progress_rounds {
            Some(StopReason::NoProgress)
        } else if elapsed >= budget.max_wall_time {
            Some(StopReason::RunTimeout)
        } else if budget.tokens_spent(usage) {
            Some(StopReason::TokenBudget)
        } else if spent.rounds >= budget.max_rounds {
            Some(StopReason::MaxRounds)
        } else {
            None
        }
    }

    /// One round's calls, run through the runtime until the run's time is up. The calls keep
    /// the idempotency keys the runtime gives them (the session, the tool, the canonical
    /// arguments): a write the round ran before a crash, sent again from the record, is
    /// answered from the store, and so is a write the model repeats in a later round.
    async fn execute(
        &self,
        session: &Session,
        calls: &[ToolCall],
        deadline: Instant,
    ) -> TurnReport {
        let cancel = CancellationToken::new();
        let turn = self
            .runtime
            .execute_with_cancel(session, calls, cancel.clone());
        tokio::pin!(turn);
        tokio::select! {
            report = &mut turn => report,
            () = tokio::time::sleep_until(deadline) => {
                // The run's time is up: the calls still running are answered `cancelled`.
                cancel.cancel();
                turn.await
            }
        }
    }
}

/// Appends events at the record's next position.
struct Writer<'a> {
    store: &'a dyn RunStore,
    key: &'a RunKey,
    position: usize,
}

impl Writer<'_> {
    async fn append(&mut self, event: &RunEvent) -> io::Result<()> {
        self.store.append(self.key, self.position, event).await?;
        self.position += 1;
        Ok(())
    }
}

/// A run's record, read back.
#[derive(Default)]
struct Record {
    /// How many events it holds.
    position: usize,
    history: Option<Vec<Message>>,
    route: Option<RouteDecision>,
    rounds: Vec<Round>,
    /// The last round, when its calls were not answered.
    open: Option<(u32, Vec<ToolCall>)>,
    spent: Spent,
    ended: Option<(RunEnd, Spent)>,
}

impl Record {
    fn read(run: &str, events: Vec<RunEvent>, input: &str) -> Result<Self, RunError> {
        let mut record = Record {
            position: events.len(),
            ..Record::default()
        };
        for event in events {
            match event {
                RunEvent::Started {
                    input: started,
                    history,
                } => {
                    if started != input {
                        return Err(RunError::Conflict {
                            run: run.to_owned(),
                            reason: "its record holds another input".to_owned(),
                        });
                    }
                    record.history = Some(history);
                }
                RunEvent::Routed { decision } => record.route = Some(decision),
                RunEvent::Answered { round, response } => {
                    record.open =
                        (!response.calls.is_empty()).then(|| (round, response.calls.clone()));
                    record.rounds.push(Round {
                        number: round,
                        response,
                        results: Vec::new(),
                        report: None,
                    });
                }
                RunEvent::Observed {
                    round: _,
                    results,
                    spent,
                } => {
                    if let Some(last) = record.rounds.last_mut() {
                        last.results = results;
                    }
                    record.open = None;
                    record.spent = spent;
                }
                RunEvent::Ended { end, spent } => {
                    record.open = None;
                    record.ended = Some((end, spent));
                }
            }
        }
        Ok(record)
    }

    /// The conversation the record holds, as the model is shown it.
    fn messages(
        &self,
        instructions: Option<&str>,
        history: &[Message],
        input: &str,
    ) -> Vec<Message> {
        let mut messages: Vec<Message> = instructions.map(Message::system).into_iter().collect();
        messages.extend(history.iter().cloned());
        messages.push(Message::user(input));
        for round in &self.rounds {
            messages.push(Message::Assistant {
                text: round.response.text.clone(),
                calls: round.response.calls.clone(),
            });
            messages.extend(round.results.iter().cloned());
        }
        messages
    }

    /// The report of a run that ended without another round.
    fn report(
        self,
        id: String,
        end: RunEnd,
        spent: Spent,
        history: Vec<Message>,
        input: String,
        resumed: bool,
    ) -> RunReport {
        let messages = self.messages(None, &history, &input);
        RunReport {
            id,
            route: self.route,
            rounds: self.rounds,
            end,
            spent,
            resumed,
            messages,
        }
    }
}
