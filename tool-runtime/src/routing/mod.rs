//! Routing a request to an intent, and the intent to its scope, before the model sees any
//! tool.
//!
//! A [`Router`] decides in layers: strong rules first (patterns or closures that yield an
//! intent, a confidence and the entities they extracted); when none matches with the
//! threshold's confidence, the [`Classifier`] if one is set (its answer checked: an intent
//! outside the set, a confidence out of range or under the threshold, a follow-up without
//! history or a failure make the intent unknown, each with its [`Signal`]); then evidence:
//! each [`Entity`] the router declares is kept only with evidence for it (written in the
//! user's text, or known to a lookup), an entity the classifier names that nobody declared is
//! dropped (a strong rule's own entities, the application's reading of the text, stay as the
//! rule gave them unless an [`Entity`] of that name checks them), and an intent
//! that [requires](Router::requires) an entity left without evidence asks the user
//! ([`RouteDecision::clarify`], the empty scope) instead of guessing. The decision
//! selects the intent's [`Scope`] (an unknown intent: the empty scope, fail-closed) and is
//! recorded once per request under a step key in a [`DecisionStore`], so a later stage and a
//! run resumed after a crash reuse it instead of deciding again.
//!
//! ```
//! use tool_runtime::model::{ModelResponse, ScriptedModel};
//! use tool_runtime::routing::{Entity, ModelClassifier, Router, Rule, Signal};
//! use tool_runtime::{intents, tool};
//!
//! /// Looks an order up.
//! #[tool(read_only)]
//! async fn route_order_status(
//!     /// The order id.
//!     order_id: String,
//! ) -> String {
//!     order_id
//! }
//!
//! intents! {
//!     /// What a support request is about.
//!     enum Support {
//!         OrderStatus = "order_status" => [route_order_status],
//!     }
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! // The classifier names an order id the user never wrote.
//! let model = ScriptedModel::new([ModelResponse::text(
//!     r#"{"intent":"order_status","confidence":0.9,"reason":null,
//!         "entities":[{"name":"order_id","value":"A-1"}]}"#,
//! )]);
//! let router = Router::new::<Support>()
//!     .rule(Rule::pattern(Support::OrderStatus, r"where is (?P<order_id>A-\d+)", 1.0)?)
//!     .classifier(ModelClassifier::new(model))
//!     .entity(Entity::in_text("order_id", r"A-\d+")?.ask("Which order? It starts with A-."))
//!     .requires(Support::OrderStatus, ["order_id"]);
//!
//! // A strong rule decides alone.
//! let decision = router.decide("where is A-7?", false).await;
//! assert!(decision.is_routed());
//! assert!(router.scope(&decision).allows("route_order_status"));
//!
//! // The classifier's guess is no evidence: the user is asked, and shown no tool.
//! let decision = router.decide("my parcel is late", false).await;
//! assert_eq!(decision.intent.as_deref(), Some("order_status"));
//! assert_eq!(decision.clarify.as_deref(), Some("Which order? It starts with A-."));
//! assert_eq!(decision.signals, [Signal::EntityUnverified]);
//! assert!(router.scope(&decision).is_empty());
//! # Ok::<(), regex::Error>(())
//! # }).unwrap();
//! ```

mod classifier;
mod decision;
mod evidence;

use std::collections::BTreeMap;
use std::fmt;
use std::io;
use std::sync::Arc;

pub use classifier::{
    Classification, Classifier, ClassifierError, ClassifierInput, MODEL_INPUT_CHARS,
    ModelClassifier, RuleSignal, UNKNOWN,
};
pub use decision::{
    DecisionKey, DecisionStore, MemoryDecisionStore, RouteDecision, RouteSource, Signal,
};
pub use evidence::{Entity, EntityLookup};

use crate::session::{Scope, Session};

/// An intent a request can have: what [`intents!`](crate::intents) declares. Its label names it
/// in decisions and stores; its scope is the tools it may see and call.
pub trait Intent: Copy + Send + Sync + 'static {
    /// Every intent of the set, in declaration order.
    fn all() -> &'static [Self];
    /// The intent's label.
    fn label(&self) -> &'static str;
    /// The tools the intent may see and call.
    fn scope(&self) -> Scope;
}

/// What a rule yields when it matches: an intent, how sure the rule is, and the entities it
/// extracted from the text.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleMatch {
    label: &'static str,
    confidence: f64,
    entities: BTreeMap<String, String>,
}

impl RuleMatch {
    /// A match of `intent` with `confidence` (in [0, 1]).
    pub fn new(intent: impl Intent, confidence: f64) -> Self {
        Self {
            label: intent.label(),
            confidence,
            entities: BTreeMap::new(),
        }
    }

    /// The match, with an entity it extracted.
    #[must_use]
    pub fn entity(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.entities.insert(name.into(), value.into());
        self
    }
}

type RuleFn = dyn Fn(&str) -> Option<RuleMatch> + Send + Sync;

/// A strong rule: a pattern or a closure over the user's text.
#[derive(Clone)]
pub struct Rule {
    matches: Arc<RuleFn>,
}

impl fmt::Debug for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Rule")
    }
}

impl Rule {
    /// A rule that matches when `pattern` finds a match in the text: `intent` with
    /// `confidence`, and each named group that took part as an entity of its name.
    pub fn pattern(
        intent: impl Intent,
        pattern: &str,
        confidence: f64,
    ) -> Result<Self, regex::Error> {
        let regex = regex::Regex::new(pattern)?;
        let label = intent.label();
        Ok(Self {
            matches: Arc::new(move |text: &str| {
                let captures = regex.captures(text)?;
                let entities = regex
                    .capture_names()
                    .flatten()
                    .filter_map(|name| {
                        captures
                            .name(name)
                            .map(|found| (name.to_owned(), found.as_str().to_owned()))
                    })
                    .collect();
                Some(RuleMatch {
                    label,
                    confidence,
                    entities,
                })
            }),
        })
    }

    /// A rule that is a closure: `Some` when it matches.
    pub fn when(rule: impl Fn(&str) -> Option<RuleMatch> + Send + Sync + 'static) -> Self {
        Self {
            matches: Arc::new(rule),
        }
    }
}

/// One request to route.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct RouteRequest<'a> {
    /// The session the request belongs to (the decision is kept in its scope).
    pub session: &'a Session,
    /// The request's id (a run's id): the decision is recorded once under it.
    pub request: &'a str,
    /// What the user wrote.
    pub input: &'a str,
    /// Whether the request follows earlier messages.
    pub has_history: bool,
}

impl<'a> RouteRequest<'a> {
    /// The request `request` of `session`, saying `input`.
    pub fn new(session: &'a Session, request: &'a str, input: &'a str) -> Self {
        Self {
            session,
            request,
            input,
            has_history: false,
        }
    }

    /// The request, following earlier messages (or not).
    #[must_use]
    pub fn with_history(mut self, has_history: bool) -> Self {
        self.has_history = has_history;
        self
    }
}

/// Routes requests to intents (see the [module](self)).
pub struct Router {
    /// The intents' labels, in declaration order.
    labels: Vec<&'static str>,
    scopes: BTreeMap<&'static str, Scope>,
    rules: Vec<Rule>,
    threshold: f64,
    version: u32,
    store: Arc<dyn DecisionStore>,
    classifier: Option<Arc<dyn Classifier>>,
    follow_up: Option<&'static str>,
    /// The declared entities, in declaration order, names unique.
    entities: Vec<Entity>,
    /// The entities each intent needs, by the intent's label.
    required: BTreeMap<&'static str, Vec<String>>,
}

impl fmt::Debug for Router {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Router")
            .field("intents", &self.scopes.keys().collect::<Vec<_>>())
            .field("rules", &self.rules.len())
            .field("threshold", &self.threshold)
            .field("version", &self.version)
            .field("classifier", &self.classifier.is_some())
            .field("follow_up", &self.follow_up)
            .field("entities", &self.entities)
            .field("required", &self.required)
            .finish_non_exhaustive()
    }
}

/// The confidence a rule or the classifier must reach unless [`Router::threshold`] says
/// otherwise.
pub const DEFAULT_THRESHOLD: f64 = 0.75;

impl Router {
    /// A router over the intents of `I` (an [`intents!`](crate::intents) enum), with no rule,
    /// decisions kept in memory.
    pub fn new<I: Intent>() -> Self {
        Self {
            labels: I::all().iter().map(Intent::label).collect(),
            scopes: I::all()
                .iter()
                .map(|intent| (intent.label(), intent.scope()))
                .collect(),
            rules: Vec::new(),
            threshold: DEFAULT_THRESHOLD,
            version: 1,
            store: Arc::new(MemoryDecisionStore::default()),
            classifier: None,
            follow_up: None,
            entities: Vec::new(),
            required: BTreeMap::new(),
        }
    }

    /// The router, looking for `entity` in requests (an entity declared again under the same
    /// name replaces the first). A declared entity reaches a decision only with evidence; of
    /// the entities nobody declared, a strong rule's stay and the classifier's are dropped.
    #[must_use]
    pub fn entity(mut self, entity: Entity) -> Self {
        match self
            .entities
            .iter_mut()
            .find(|declared| declared.name() == entity.name())
        {
            Some(declared) => *declared = entity,
            None => self.entities.push(entity),
        }
        self
    }

    /// The router, where `intent` needs the entities `names`: a request of the intent that
    /// gives no evidence for one of them is asked about it (the first missing one's
    /// [`Entity::question`]) and shown no tool. A name no [`entity`](Self::entity) declares
    /// never has evidence, so such a request is always asked.
    #[must_use]
    pub fn requires<S: Into<String>>(
        mut self,
        intent: impl Intent,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.required
            .entry(intent.label())
            .or_default()
            .extend(names.into_iter().map(Into::into));
        self
    }

    /// The router, asking `classifier` when no strong rule matches (without one, such a
    /// request's intent is unknown).
    #[must_use]
    pub fn classifier(mut self, classifier: impl Classifier) -> Self {
        self.classifier = Some(Arc::new(classifier));
        self
    }

    /// The intent that continues an earlier exchange ("yes, do that"): the classifier's
    /// answer of it holds only for a request with history.
    #[must_use]
    pub fn follow_up(mut self, intent: impl Intent) -> Self {
        self.follow_up = Some(intent.label());
        self
    }

    /// The router with one more strong rule; rules are tried in the order they were added.
    #[must_use]
    pub fn rule(mut self, rule: Rule) -> Self {
        self.rules.push(rule);
        self
    }

    /// The confidence a rule or the classifier must reach (default 0.75).
    #[must_use]
    pub fn threshold(mut self, threshold: f64) -> Self {
        self.threshold = threshold;
        self
    }

    /// The router's version, which names its step key (`route:intent:v<version>`): a new
    /// version decides again instead of reusing what an older one recorded.
    #[must_use]
    pub fn version(mut self, version: u32) -> Self {
        self.version = version;
        self
    }

    /// The store decisions are kept in (default: memory).
    #[must_use]
    pub fn store(mut self, store: impl DecisionStore) -> Self {
        self.store = Arc::new(store);
        self
    }

    /// The step key decisions are recorded under: `route:intent:v<version>`.
    pub fn step_key(&self) -> String {
        format!("route:intent:v{}", self.version)
    }

    /// The scope a decision selects: the intent's tools, or the empty scope when the intent
    /// is unknown or the request needs clarifying.
    pub fn scope(&self, decision: &RouteDecision) -> Scope {
        match (&decision.intent, &decision.clarify) {
            (Some(intent), None) => self
                .scopes
                .get(intent.as_str())
                .cloned()
                .unwrap_or_else(Scope::none),
            _ => Scope::none(),
        }
    }

    /// The request's decision: the one recorded for it, or a new one, recorded.
    pub async fn route(&self, request: &RouteRequest<'_>) -> io::Result<RouteDecision> {
        let key = DecisionKey::new(request.session.id(), request.request, self.step_key());
        if let Some(kept) = self.store.get(&key).await? {
            return Ok(kept);
        }
        let decision = self.decide(request.input, request.has_history).await;
        self.store.record(&key, &decision).await
    }

    /// A new decision about `input`, recorded nowhere.
    pub async fn decide(&self, input: &str, has_history: bool) -> RouteDecision {
        let step = self.step_key();
        let mut weak = Vec::new();
        for rule in &self.rules {
            let Some(found) = (rule.matches)(input) else {
                continue;
            };
            // A match naming no intent of the set, or a confidence out of range, is no
            // signal at all.
            let Some(label) = self
                .labels
                .iter()
                .copied()
                .find(|label| *label == found.label)
            else {
                continue;
            };
            if !(0.0..=1.0).contains(&found.confidence) {
                continue;
            }
            if found.confidence >= self.threshold {
                let decision = RouteDecision {
                    intent: Some(label.to_owned()),
                    confidence: found.confidence,
                    source: RouteSource::Rule,
                    signals: Vec::new(),
                    entities: found.entities,
                    reason: None,
                    clarify: None,
                    step,
                };
                return self.evidence(decision, input);
            }
            weak.push(RuleSignal::new(label, found.confidence));
        }
        let Some(classifier) = &self.classifier else {
            return RouteDecision::unknown(RouteSource::Fallback, vec![Signal::WeakRule], step);
        };
        let names: Vec<&str> = self.entities.iter().map(Entity::name).collect();
        let asked = ClassifierInput::new(input, &self.labels)
            .with_history(has_history)
            .with_weak(&weak)
            .with_follow_up(self.follow_up)
            .with_entities(&names);
        let answer = classifier.classify(asked).await;
        let decision = self.check(answer, has_history, step);
        self.evidence(decision, input)
    }

    /// `decision` with only the entities it has evidence for in `input`, and the question
    /// to ask when its intent needs one that has none.
    fn evidence(&self, mut decision: RouteDecision, input: &str) -> RouteDecision {
        let Some(intent) = decision.intent.as_deref() else {
            return decision;
        };
        let mut given = std::mem::take(&mut decision.entities);
        let mut kept: BTreeMap<String, String> = self
            .entities
            .iter()
            .filter_map(|entity| {
                let value = entity.verify(given.remove(entity.name()).as_deref(), input)?;
                Some((entity.name().to_owned(), value))
            })
            .collect();
        // What is left was declared by no one. A strong rule's own entities are the
        // application's reading of the text (a pattern's groups, its closure), so they stay;
        // the classifier's are dropped.
        if decision.source == RouteSource::Rule {
            kept.append(&mut given);
        }
        let missing = self
            .required
            .get(intent)
            .and_then(|names| names.iter().find(|name| !kept.contains_key(name.as_str())));
        if let Some(missing) = missing {
            let question = self
                .entities
                .iter()
                .find(|entity| entity.name() == missing)
                .map_or_else(|| evidence::default_question(missing), Entity::question);
            decision.clarify = Some(question);
            decision.signals.push(Signal::EntityUnverified);
        }
        decision.entities = kept;
        decision
    }

    /// The decision a classifier's answer makes, once checked.
    fn check(
        &self,
        answer: Result<Classification, ClassifierError>,
        has_history: bool,
        step: String,
    ) -> RouteDecision {
        let degraded = |signal: Signal, reason: Option<String>| {
            let mut decision =
                RouteDecision::unknown(RouteSource::Fallback, vec![signal], step.clone());
            decision.reason = reason;
            decision
        };
        let Ok(answer) = answer else {
            return degraded(Signal::ClassifierError, None);
        };
        let known = self.labels.contains(&answer.intent.as_str());
        // `contains` is false for NaN, so a NaN confidence is invalid too.
        if (!known && answer.intent != UNKNOWN) || !(0.0..=1.0).contains(&answer.confidence) {
            return degraded(Signal::ClassifierInvalid, answer.reason);
        }
        if !known {
            let mut decision = RouteDecision::unknown(RouteSource::Classifier, Vec::new(), step);
            decision.reason = answer.reason;
            return decision;
        }
        if self.follow_up == Some(answer.intent.as_str()) && !has_history {
            return degraded(Signal::FollowUpWithoutHistory, answer.reason);
        }
        if answer.confidence < self.threshold {
            return degraded(Signal::ClassifierLowConfidence, answer.reason);
        }
        RouteDecision {
            intent: Some(answer.intent),
            confidence: answer.confidence,
            source: RouteSource::Classifier,
            signals: Vec::new(),
            entities: answer.entities,
            reason: answer.reason,
            clarify: None,
            step,
        }
    }
}
