//! What the router decided about a request, and the store that keeps each decision once.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use tool_core::BoxFuture;

/// The router's decision about one request: its intent (none when it could not be
/// established), how sure it is, which layer decided, the signals of every degrade on the way,
/// the entities it found evidence for, and the question to ask when evidence is missing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RouteDecision {
    /// The intent's label, or `None` when the intent is unknown (the empty scope).
    pub intent: Option<String>,
    /// How sure the deciding layer was, in [0, 1] (0 for an unknown intent).
    pub confidence: f64,
    /// The layer that decided.
    pub source: RouteSource,
    /// Why the decision is weaker than a confident one: each degrade on the way, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Signal>,
    /// The entities found in the request, each with evidence (in the user's text, or through
    /// a lookup), by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub entities: BTreeMap<String, String>,
    /// The classifier's reason, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The question for the user when the intent needs an entity the request gives no
    /// evidence for: the run asks it instead of guessing, and no tool is shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarify: Option<String>,
    /// The step key the decision was recorded under (`route:intent:v1`), which names the
    /// router's version.
    pub step: String,
}

impl RouteDecision {
    /// An unknown intent, decided by `source`, with `signals`.
    pub fn unknown(source: RouteSource, signals: Vec<Signal>, step: impl Into<String>) -> Self {
        Self {
            intent: None,
            confidence: 0.0,
            source,
            signals,
            entities: BTreeMap::new(),
            reason: None,
            clarify: None,
            step: step.into(),
        }
    }

    /// Whether the request goes on to the model with the intent's tools: the intent is known
    /// and nothing needs clarifying.
    pub fn is_routed(&self) -> bool {
        self.intent.is_some() && self.clarify.is_none()
    }
}

/// The layer that made a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RouteSource {
    /// A strong rule matched.
    Rule,
    /// The classifier answered, and its answer held.
    Classifier,
    /// Neither could establish the intent: it is unknown.
    Fallback,
}

/// Why a decision degraded, as a stable name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Signal {
    /// No strong rule matched and no classifier is configured (only weak rules, or none).
    WeakRule,
    /// The classifier named an intent outside the declared set, or a confidence outside
    /// [0, 1].
    ClassifierInvalid,
    /// The classifier's confidence was under the threshold.
    ClassifierLowConfidence,
    /// The classifier said follow-up, but the request has no history to follow.
    FollowUpWithoutHistory,
    /// The classifier failed, or its answer was not the JSON asked for.
    ClassifierError,
    /// An entity the intent needs has no evidence in the request: the user is asked.
    EntityUnverified,
}

impl Signal {
    /// The stable name: `weak_rule`, `classifier_invalid`, `classifier_low_confidence`,
    /// `follow_up_without_history`, `classifier_error`, `entity_unverified`.
    pub const fn as_str(&self) -> &'static str {
        match self {
            Signal::WeakRule => "weak_rule",
            Signal::ClassifierInvalid => "classifier_invalid",
            Signal::ClassifierLowConfidence => "classifier_low_confidence",
            Signal::FollowUpWithoutHistory => "follow_up_without_history",
            Signal::ClassifierError => "classifier_error",
            Signal::EntityUnverified => "entity_unverified",
        }
    }
}

impl std::fmt::Display for Signal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a decision is kept: the request's scope (the session), the request, and the step.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct DecisionKey {
    /// The session the request belongs to: decisions are never read across sessions.
    pub session: String,
    /// The request (a run's id).
    pub request: String,
    /// The step key (`route:intent:v1`).
    pub step: String,
}

impl DecisionKey {
    /// The key of `step` for `request` in `session`.
    pub fn new(
        session: impl Into<String>,
        request: impl Into<String>,
        step: impl Into<String>,
    ) -> Self {
        Self {
            session: session.into(),
            request: request.into(),
            step: step.into(),
        }
    }
}

/// Keeps each request's route decision once, so a later stage and a run resumed after a crash
/// reuse it instead of deciding again: [`MemoryDecisionStore`] in one process, `RedisStore`
/// (feature `redis`) when instances share the work.
///
/// A store reports a [`std::io::Error`]; its kind says what happened (`TimedOut`,
/// `ConnectionRefused`, `InvalidData` for a record it cannot read).
pub trait DecisionStore: Send + Sync + 'static {
    /// The decision kept under `key`, if any.
    fn get<'a>(&'a self, key: &'a DecisionKey) -> BoxFuture<'a, io::Result<Option<RouteDecision>>>;

    /// Keeps `decision` under `key` unless a decision is kept there already, and returns the
    /// decision kept: the first one recorded wins, so two instances that decided at the same
    /// time go on with the same decision.
    fn record<'a>(
        &'a self,
        key: &'a DecisionKey,
        decision: &'a RouteDecision,
    ) -> BoxFuture<'a, io::Result<RouteDecision>>;
}

/// Decisions in this process's memory (the default).
#[derive(Debug, Default)]
pub struct MemoryDecisionStore {
    decisions: Mutex<HashMap<DecisionKey, RouteDecision>>,
}

impl DecisionStore for MemoryDecisionStore {
    fn get<'a>(&'a self, key: &'a DecisionKey) -> BoxFuture<'a, io::Result<Option<RouteDecision>>> {
        let kept = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned();
        Box::pin(std::future::ready(Ok(kept)))
    }

    fn record<'a>(
        &'a self,
        key: &'a DecisionKey,
        decision: &'a RouteDecision,
    ) -> BoxFuture<'a, io::Result<RouteDecision>> {
        let kept = self
            .decisions
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(key.clone())
            .or_insert_with(|| decision.clone())
            .clone();
        Box::pin(std::future::ready(Ok(kept)))
    }
}

impl<S: DecisionStore + ?Sized> DecisionStore for std::sync::Arc<S> {
    fn get<'a>(&'a self, key: &'a DecisionKey) -> BoxFuture<'a, io::Result<Option<RouteDecision>>> {
        (**self).get(key)
    }

    fn record<'a>(
        &'a self,
        key: &'a DecisionKey,
        decision: &'a RouteDecision,
    ) -> BoxFuture<'a, io::Result<RouteDecision>> {
        (**self).record(key, decision)
    }
}
