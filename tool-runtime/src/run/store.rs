//! The record of a run as it goes, and the store that keeps it: what a run started again with
//! the same id continues from.

use std::collections::HashMap;
use std::io;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use tool_core::BoxFuture;

use super::RunEnd;
use super::budget::Spent;
use crate::model::{Message, ModelResponse};
use crate::routing::RouteDecision;

/// Where a run's record is kept: the run's session and its id. Records are never read across
/// sessions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct RunKey {
    /// The session the run belongs to.
    pub session: String,
    /// The run's id.
    pub run: String,
}

impl RunKey {
    /// The key of run `run` in `session`.
    pub fn new(session: impl Into<String>, run: impl Into<String>) -> Self {
        Self {
            session: session.into(),
            run: run.into(),
        }
    }
}

/// One step of a run, as its record keeps it. A record holds what the model saw and said:
/// the user's request, the route decision, each answer of the model, and the answers its
/// calls got (redacted and shaped, as the model read them), never a secret the model may not
/// see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunEvent {
    /// The run began: the request and the conversation before it.
    Started {
        /// What the user asked.
        input: String,
        /// The messages before it, oldest first.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        history: Vec<Message>,
    },
    /// The router decided the request's intent.
    Routed {
        /// The decision.
        decision: RouteDecision,
    },
    /// The model answered round `round` (from 1). Recorded before any of its calls runs.
    Answered {
        /// The round.
        round: u32,
        /// The answer, with the tokens it took.
        response: ModelResponse,
    },
    /// The calls of round `round` were answered.
    Observed {
        /// The round.
        round: u32,
        /// One [`Message::Tool`] per call, in call order.
        results: Vec<Message>,
        /// What the run had spent at the end of the round.
        spent: Spent,
    },
    /// The run ended.
    Ended {
        /// How.
        end: RunEnd,
        /// What it had spent.
        spent: Spent,
    },
}

/// Keeps runs' records: [`MemoryRunStore`] in one process, `RedisStore` (feature `redis`) when
/// another process may continue a run.
///
/// A store reports a [`std::io::Error`]; its kind says what happened (`AlreadyExists` for an
/// append at a position taken already, `TimedOut`, `ConnectionRefused`, `InvalidData` for a
/// record it cannot read).
pub trait RunStore: Send + Sync + 'static {
    /// The record of the run `key` names, oldest event first (empty: no such run).
    fn load<'a>(&'a self, key: &'a RunKey) -> BoxFuture<'a, io::Result<Vec<RunEvent>>>;

    /// Appends `event` as event number `position` (from 0) of the record. When the record
    /// does not hold exactly `position` events (another process drives the run too) the store
    /// appends nothing and answers an error of kind `AlreadyExists`.
    fn append<'a>(
        &'a self,
        key: &'a RunKey,
        position: usize,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, io::Result<()>>;
}

/// Runs' records in this process's memory (the default).
#[derive(Debug, Default)]
pub struct MemoryRunStore {
    runs: Mutex<HashMap<RunKey, Vec<RunEvent>>>,
}

impl RunStore for MemoryRunStore {
    fn load<'a>(&'a self, key: &'a RunKey) -> BoxFuture<'a, io::Result<Vec<RunEvent>>> {
        let events = self
            .runs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
            .unwrap_or_default();
        Box::pin(std::future::ready(Ok(events)))
    }

    fn append<'a>(
        &'a self,
        key: &'a RunKey,
        position: usize,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, io::Result<()>> {
        let mut runs = self.runs.lock().unwrap_or_else(PoisonError::into_inner);
        let events = runs.entry(key.clone()).or_default();
        let appended = if events.len() == position {
            events.push(event.clone());
            Ok(())
        } else {
            Err(taken(key, position, events.len()))
        };
        Box::pin(std::future::ready(appended))
    }
}

impl<S: RunStore + ?Sized> RunStore for std::sync::Arc<S> {
    fn load<'a>(&'a self, key: &'a RunKey) -> BoxFuture<'a, io::Result<Vec<RunEvent>>> {
        (**self).load(key)
    }

    fn append<'a>(
        &'a self,
        key: &'a RunKey,
        position: usize,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, io::Result<()>> {
        (**self).append(key, position, event)
    }
}

/// The error of an append at a position another writer took.
pub(crate) fn taken(key: &RunKey, position: usize, held: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!(
            "run `{}` of session `{}` holds {held} events, not {position}: another process drives it",
            key.run, key.session
        ),
    )
}
