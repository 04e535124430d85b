//! The router's layers, from outside: strong rules, the classifier and each check of its
//! answer (every signal), the model classifier's request and answer, the evidence each entity
//! takes (a value the classifier invented is asked about, an alias is looked up), and a
//! decision kept once per request (reused by another router over the same store, decided
//! again by a new version).

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tool_runtime::core::BoxFuture;
use tool_runtime::model::{
    self, Message, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, ScriptedModel,
};
use tool_runtime::routing::{
    Classification, Classifier, ClassifierError, ClassifierInput, Entity, MODEL_INPUT_CHARS,
    MemoryDecisionStore, ModelClassifier, RouteDecision, RouteRequest, RouteSource, Router, Rule,
    RuleSignal, Signal,
};
use tool_runtime::{Session, intents, tool};

/// Looks an order up.
#[tool(read_only)]
async fn route_order(
    /// The order id.
    order_id: String,
) -> String {
    order_id
}

/// Refunds an order.
#[tool(stateful)]
async fn route_refund(
    /// The order id.
    order_id: String,
) -> String {
    order_id
}

intents! {
    /// What a support request is about.
    enum Desk {
        OrderStatus = "order_status" => [route_order],
        Refund = "refund" => [route_order, route_refund],
        FollowUp = "follow_up" => [route_order],
    }
}

/// What a classifier was asked, kept to assert on.
#[derive(Debug, Clone, PartialEq)]
struct Asked {
    text: String,
    has_history: bool,
    intents: Vec<String>,
    weak: Vec<RuleSignal>,
    follow_up: Option<String>,
    entities: Vec<String>,
}

type Answer = dyn Fn(&str) -> Result<Classification, ClassifierError> + Send + Sync;

/// A classifier that answers with a closure of the text, and counts and keeps what it is
/// asked.
#[derive(Clone)]
struct Counted {
    answer: Arc<Answer>,
    asked: Arc<Mutex<Vec<Asked>>>,
}

impl Counted {
    fn new(
        answer: impl Fn(&str) -> Result<Classification, ClassifierError> + Send + Sync + 'static,
    ) -> Self {
        Self {
            answer: Arc::new(answer),
            asked: Arc::default(),
        }
    }

    /// Always `answer`.
    fn always(answer: Result<Classification, ClassifierError>) -> Self {
        Self::new(move |_| answer.clone())
    }

    fn asked(&self) -> Vec<Asked> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn calls(&self) -> usize {
        self.asked().len()
    }
}

impl Classifier for Counted {
    fn classify<'a>(
        &'a self,
        input: ClassifierInput<'a>,
    ) -> BoxFuture<'a, Result<Classification, ClassifierError>> {
        self.asked
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(Asked {
                text: input.text.to_owned(),
                has_history: input.has_history,
                intents: input.intents.iter().map(|s| (*s).to_owned()).collect(),
                weak: input.weak.to_vec(),
                follow_up: input.follow_up.map(str::to_owned),
                entities: input.entities.iter().map(|s| (*s).to_owned()).collect(),
            });
        let answer = (self.answer)(input.text);
        Box::pin(std::future::ready(answer))
    }
}

fn order_rule(confidence: f64) -> Rule {
    Rule::pattern(
        Desk::OrderStatus,
        r"where is (?P<order_id>A-\d+)",
        confidence,
    )
    .expect("the pattern compiles")
}

fn refund_rule(confidence: f64) -> Rule {
    Rule::pattern(Desk::Refund, r"(?i)refund", confidence).expect("the pattern compiles")
}

/// A decision's signals, by stable name.
fn signals(decision: &RouteDecision) -> Vec<&'static str> {
    decision.signals.iter().map(Signal::as_str).collect()
}

#[tokio::test]
async fn a_strong_rule_decides_without_the_classifier() {
    let classifier = Counted::always(Ok(Classification::new("refund", 0.99)));
    let router = Router::new::<Desk>()
        .rule(order_rule(0.9))
        .classifier(classifier.clone());
    let decision = router.decide("where is A-17?", false).await;
    assert_eq!(decision.intent.as_deref(), Some("order_status"));
    assert_eq!(decision.source, RouteSource::Rule);
    assert_eq!(decision.confidence, 0.9);
    assert!(decision.signals.is_empty());
    assert_eq!(classifier.calls(), 0);
    assert!(router.scope(&decision).allows("route_order"));
    assert!(!router.scope(&decision).allows("route_refund"));
}

#[tokio::test]
async fn without_a_classifier_a_weak_rule_leaves_the_intent_unknown() {
    let router = Router::new::<Desk>().rule(refund_rule(0.5));
    let decision = router.decide("a refund maybe", false).await;
    assert_eq!(decision.intent, None);
    assert_eq!(decision.source, RouteSource::Fallback);
    assert_eq!(signals(&decision), ["weak_rule"]);
    assert!(router.scope(&decision).is_empty());

    // No rule matching at all is the same: nothing established the intent.
    let decision = router.decide("hello", false).await;
    assert_eq!(signals(&decision), ["weak_rule"]);
    assert_eq!(decision.intent, None);
}

#[tokio::test]
async fn the_classifier_is_asked_with_the_weak_rules_as_hints() {
    let classifier = Counted::always(Ok(
        Classification::new("refund", 0.8).reason("asks for money back")
    ));
    let router = Router::new::<Desk>()
        .rule(order_rule(1.0))
        .rule(refund_rule(0.4))
        .follow_up(Desk::FollowUp)
        .classifier(classifier.clone());
    let decision = router.decide("I want a refund", true).await;
    assert_eq!(decision.intent.as_deref(), Some("refund"));
    assert_eq!(decision.source, RouteSource::Classifier);
    assert_eq!(decision.confidence, 0.8);
    assert_eq!(decision.reason.as_deref(), Some("asks for money back"));
    assert!(decision.signals.is_empty());
    assert!(router.scope(&decision).allows("route_refund"));

    let asked = classifier.asked();
    assert_eq!(
        asked,
        [Asked {
            text: "I want a refund".to_owned(),
            has_history: true,
            intents: vec!["order_status".into(), "refund".into(), "follow_up".into()],
            weak: vec![RuleSignal::new("refund", 0.4)],
            follow_up: Some("follow_up".into()),
            entities: Vec::new(),
        }]
    );
}

#[tokio::test]
async fn each_bad_answer_of_the_classifier_has_its_signal() {
    let cases: Vec<(&str, Result<Classification, ClassifierError>, bool, &str)> = vec![
        (
            "a failure",
            Err(ClassifierError::Failed("down".into())),
            false,
            "classifier_error",
        ),
        (
            "a malformed answer",
            Err(ClassifierError::Malformed("not JSON".into())),
            false,
            "classifier_error",
        ),
        (
            "an intent outside the set",
            Ok(Classification::new("weather", 0.9)),
            false,
            "classifier_invalid",
        ),
        (
            "a confidence over 1",
            Ok(Classification::new("refund", 1.5)),
            false,
            "classifier_invalid",
        ),
        (
            "a negative confidence",
            Ok(Classification::new("refund", -0.1)),
            false,
            "classifier_invalid",
        ),
        (
            "a NaN confidence",
            Ok(Classification::new("refund", f64::NAN)),
            false,
            "classifier_invalid",
        ),
        (
            "unknown with a NaN confidence",
            Ok(Classification::unknown(f64::NAN)),
            false,
            "classifier_invalid",
        ),
        (
            "a confidence under the threshold",
            Ok(Classification::new("refund", 0.6)),
            false,
            "classifier_low_confidence",
        ),
        (
            "a follow-up without history",
            Ok(Classification::new("follow_up", 0.95)),
            false,
            "follow_up_without_history",
        ),
    ];
    for (case, answer, has_history, signal) in cases {
        let router = Router::new::<Desk>()
            .follow_up(Desk::FollowUp)
            .classifier(Counted::always(answer));
        let decision = router.decide("something", has_history).await;
        assert_eq!(decision.intent, None, "{case}");
        assert_eq!(decision.source, RouteSource::Fallback, "{case}");
        assert_eq!(signals(&decision), [signal], "{case}");
        assert_eq!(decision.confidence, 0.0, "{case}");
        assert!(router.scope(&decision).is_empty(), "{case}");
    }
}

#[tokio::test]
async fn a_follow_up_with_history_and_a_confident_unknown_hold() {
    let router = Router::new::<Desk>()
        .follow_up(Desk::FollowUp)
        .classifier(Counted::always(Ok(Classification::new("follow_up", 0.95))));
    let decision = router.decide("yes, do that", true).await;
    assert_eq!(decision.intent.as_deref(), Some("follow_up"));
    assert_eq!(decision.source, RouteSource::Classifier);
    assert!(decision.is_routed());

    // "unknown" is an answer, not a failure: the classifier decided, with no signal.
    let router = Router::new::<Desk>()
        .classifier(Counted::always(Ok(
            Classification::unknown(0.9).reason("small talk")
        )));
    let decision = router.decide("nice weather", false).await;
    assert_eq!(decision.intent, None);
    assert_eq!(decision.source, RouteSource::Classifier);
    assert!(decision.signals.is_empty());
    assert_eq!(decision.reason.as_deref(), Some("small talk"));
    assert!(router.scope(&decision).is_empty());
}

#[tokio::test]
async fn the_threshold_applies_to_rules_and_to_the_classifier() {
    let router = Router::new::<Desk>()
        .threshold(0.5)
        .rule(refund_rule(0.5))
        .classifier(Counted::always(Ok(Classification::new(
            "order_status",
            0.6,
        ))));
    let decision = router.decide("refund", false).await;
    assert_eq!(decision.source, RouteSource::Rule);
    let decision = router.decide("where", false).await;
    assert_eq!(decision.source, RouteSource::Classifier);
    assert_eq!(decision.intent.as_deref(), Some("order_status"));
}

/// What a model was asked: the messages, the number of tools, the answer's schema.
type Seen = (Vec<Message>, usize, Option<Value>);

/// A model that keeps the request it was asked and answers `answer`.
struct Recording {
    answer: Result<ModelResponse, ModelError>,
    seen: Mutex<Option<Seen>>,
}

impl Recording {
    fn new(answer: Result<ModelResponse, ModelError>) -> Arc<Self> {
        Arc::new(Self {
            answer,
            seen: Mutex::new(None),
        })
    }

    fn seen(&self) -> Seen {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .expect("the model was asked")
    }
}

impl Model for Recording {
    fn respond<'a>(
        &'a self,
        request: ModelRequest<'a>,
    ) -> BoxFuture<'a, Result<ModelResponse, ModelError>> {
        *self.seen.lock().unwrap_or_else(PoisonError::into_inner) = Some((
            request.messages.to_vec(),
            request.tools.len(),
            request.response_schema.cloned(),
        ));
        Box::pin(std::future::ready(self.answer.clone()))
    }
}

const LABELS: &[&str] = &["order_status", "refund", "follow_up"];

#[tokio::test]
async fn the_model_classifier_asks_for_a_strict_answer_without_tools() {
    let model = Recording::new(Ok(ModelResponse::text(
        r#"{"intent":"refund","confidence":0.9,"reason":null,"entities":[{"name":"order_id","value":"A-1"}]}"#,
    )));
    let classifier = ModelClassifier::new(Arc::clone(&model));
    let long = "é".repeat(MODEL_INPUT_CHARS + 10);
    let weak = [RuleSignal::new("refund", 0.4)];
    let input = ClassifierInput::new(&long, LABELS)
        .with_history(true)
        .with_weak(&weak)
        .with_follow_up(Some("follow_up"))
        .with_entities(&["order_id"]);
    let answer = classifier.classify(input).await;
    assert_eq!(
        answer,
        Ok(Classification::new("refund", 0.9).entity("order_id", "A-1"))
    );

    let (messages, tools, schema) = model.seen();
    assert_eq!(tools, 0, "the classifier is shown no tool");
    let [
        Message::System { text: system },
        Message::User { text: user },
    ] = messages.as_slice()
    else {
        panic!("a system and a user message: {messages:?}");
    };
    assert!(system.contains("You do not pick tools"), "{system}");
    assert!(
        system.contains("Answer \"follow_up\" only when has_history is true"),
        "{system}"
    );
    let user: Value = serde_json::from_str(user).expect("the user message is JSON");
    let input = user["input"].as_str().expect("the input is text");
    assert_eq!(input.chars().count(), MODEL_INPUT_CHARS);
    assert_eq!(user["has_history"], json!(true));
    assert_eq!(
        user["rule_signals"],
        json!([{"intent": "refund", "confidence": 0.4}])
    );
    assert_eq!(
        schema,
        Some(json!({
            "type": "object",
            "properties": {
                "intent": {"type": "string", "enum": ["order_status", "refund", "follow_up", "unknown"]},
                "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                "reason": {"type": ["string", "null"]},
                "entities": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "enum": ["order_id"]},
                            "value": {"type": "string"},
                        },
                        "required": ["name", "value"],
                        "additionalProperties": false,
                    },
                },
            },
            "required": ["intent", "confidence", "reason", "entities"],
            "additionalProperties": false,
        }))
    );
}

#[tokio::test]
async fn the_model_classifier_reads_entities_as_an_object_too() {
    let classifier = ModelClassifier::new(ScriptedModel::new([ModelResponse::text(
        r#" {"intent":"unknown","confidence":0.3,"reason":"chat","entities":{"order_id":"A-2","email":null}} "#,
    )]));
    let answer = classifier
        .classify(ClassifierInput::new("hi", LABELS))
        .await;
    assert_eq!(
        answer,
        Ok(Classification::unknown(0.3)
            .reason("chat")
            .entity("order_id", "A-2"))
    );
}

#[tokio::test]
async fn the_model_classifier_reports_failures_and_malformed_answers() {
    let failing = ModelClassifier::new(model::from_fn(|_, _| {
        Err(ModelError::new(ModelErrorKind::Timeout, "no answer"))
    }));
    let answer = failing.classify(ClassifierInput::new("hi", LABELS)).await;
    assert!(
        matches!(&answer, Err(ClassifierError::Failed(message)) if message.contains("no answer")),
        "{answer:?}"
    );

    for text in [
        "refund",
        "```json\n{\"intent\":\"refund\",\"confidence\":0.9,\"reason\":null,\"entities\":[]}\n```",
        r#"{"intent":"refund"}"#,
        r#"{"intent":"refund","confidence":"high","reason":null,"entities":[]}"#,
    ] {
        let classifier = ModelClassifier::new(ScriptedModel::new([ModelResponse::text(text)]));
        let answer = classifier
            .classify(ClassifierInput::new("hi", LABELS))
            .await;
        assert!(
            matches!(answer, Err(ClassifierError::Malformed(_))),
            "{text}: {answer:?}"
        );
    }

    let silent = ModelClassifier::new(ScriptedModel::new([ModelResponse::calls([])]));
    let answer = silent.classify(ClassifierInput::new("hi", LABELS)).await;
    assert!(
        matches!(answer, Err(ClassifierError::Malformed(_))),
        "{answer:?}"
    );

    // Through a router, a malformed answer is a classifier error.
    let router = Router::new::<Desk>().classifier(ModelClassifier::new(ScriptedModel::new([
        ModelResponse::text("order_status"),
    ])));
    let decision = router.decide("where is my order", false).await;
    assert_eq!(signals(&decision), ["classifier_error"]);
    assert_eq!(decision.intent, None);
}

#[tokio::test]
async fn a_router_over_a_model_classifier_routes_by_its_answer() {
    let router = Router::new::<Desk>().classifier(ModelClassifier::new(ScriptedModel::new([
        ModelResponse::text(
            r#"{"intent":"order_status","confidence":0.92,"reason":"asks where an order is","entities":[]}"#,
        ),
    ])));
    let decision = router.decide("where's my parcel", false).await;
    assert_eq!(decision.intent.as_deref(), Some("order_status"));
    assert_eq!(decision.source, RouteSource::Classifier);
    assert_eq!(decision.reason.as_deref(), Some("asks where an order is"));
    assert!(router.scope(&decision).allows("route_order"));
}

#[tokio::test]
async fn a_decision_is_reused_by_another_router_over_the_same_store() {
    let store = Arc::new(MemoryDecisionStore::default());
    let first = Counted::always(Ok(Classification::new("refund", 0.9)));
    let second = Counted::always(Ok(Classification::new("order_status", 0.9)));
    let session = Session::new("s-1");
    let request = RouteRequest::new(&session, "r-1", "money back please");

    let router = Router::new::<Desk>()
        .store(Arc::clone(&store))
        .classifier(first.clone());
    let decided = router.route(&request).await.expect("the store answers");
    assert_eq!(decided.intent.as_deref(), Some("refund"));
    assert_eq!(decided.step, "route:intent:v1");

    let other = Router::new::<Desk>()
        .store(Arc::clone(&store))
        .classifier(second.clone());
    let reused = other.route(&request).await.expect("the store answers");
    assert_eq!(reused, decided);
    assert_eq!(first.calls(), 1);
    assert_eq!(second.calls(), 0, "the kept decision is reused");

    // Another request of the session is decided on its own.
    let next = RouteRequest::new(&session, "r-2", "where is it");
    let decided = other.route(&next).await.expect("the store answers");
    assert_eq!(decided.intent.as_deref(), Some("order_status"));
    assert_eq!(second.calls(), 1);

    // A new version decides again, and records under its own step.
    let bumped = Router::new::<Desk>()
        .store(Arc::clone(&store))
        .version(2)
        .classifier(second.clone());
    let redecided = bumped.route(&request).await.expect("the store answers");
    assert_eq!(redecided.intent.as_deref(), Some("order_status"));
    assert_eq!(redecided.step, "route:intent:v2");
    assert_eq!(second.calls(), 2);
    // The first version's decision is still the one it reads.
    let again = other.route(&request).await.expect("the store answers");
    assert_eq!(again.intent.as_deref(), Some("refund"));
    assert_eq!(second.calls(), 2);
}

#[tokio::test]
async fn the_route_future_with_a_classifier_is_send() {
    let router =
        Router::new::<Desk>().classifier(Counted::always(Ok(Classification::unknown(1.0))));
    let session = Session::new("s");
    let request = RouteRequest::new(&session, "r", "x");
    let route = router.route(&request);
    tests::assert_send(&route);
    let decision = route.await.expect("the store answers");
    assert_eq!(decision.source, RouteSource::Classifier);
}

fn order_id() -> Entity {
    Entity::in_text("order_id", r"A-\d+").expect("the pattern compiles")
}

/// Knows the products by what customers call them.
fn product() -> Entity {
    Entity::linked("product", |value: &str, _text: &str| {
        match value.trim().to_lowercase().as_str() {
            "blue kettle" | "the blue one" | "kettle-b" => Some("KETTLE-B".to_owned()),
            "toaster" => Some("TOASTER-2".to_owned()),
            _ => None,
        }
    })
    .ask("Which product? The kettle or the toaster?")
}

/// A router for refunds that need an order id, with `classifier`.
fn refunds(classifier: Counted) -> Router {
    Router::new::<Desk>()
        .entity(order_id())
        .entity(product())
        .requires(Desk::Refund, ["order_id"])
        .classifier(classifier)
}

#[tokio::test]
async fn an_order_id_the_classifier_invented_is_asked_about() {
    let classifier = Counted::always(Ok(
        Classification::new("refund", 0.9).entity("order_id", "A-1008")
    ));
    let router = refunds(classifier.clone());
    let decision = router.decide("please refund my last order", false).await;
    assert_eq!(decision.intent.as_deref(), Some("refund"));
    assert_eq!(decision.source, RouteSource::Classifier);
    assert!(decision.entities.is_empty(), "{:?}", decision.entities);
    assert_eq!(signals(&decision), ["entity_unverified"]);
    assert_eq!(
        decision.clarify.as_deref(),
        Some("Which order id? Please write it as it appears, so I can check it.")
    );
    assert!(!decision.is_routed());
    assert!(router.scope(&decision).is_empty(), "no tool while asking");
    // The classifier was told which entities count.
    assert_eq!(classifier.asked()[0].entities, ["order_id", "product"]);

    // Another id than the one the user wrote is no evidence either, and the one written is not
    // swapped in behind the classifier's back.
    let router = refunds(Counted::always(Ok(
        Classification::new("refund", 0.9).entity("order_id", "A-1009")
    )));
    let decision = router.decide("refund A-1008 please", false).await;
    assert_eq!(signals(&decision), ["entity_unverified"]);
    assert!(decision.clarify.is_some());

    // Part of a value, or more than one, does not match the pattern as a whole.
    for given in ["A-", "A-1008 A-1009", "xA-1008"] {
        let router = refunds(Counted::always(Ok(
            Classification::new("refund", 0.9).entity("order_id", given)
        )));
        let decision = router.decide("refund A-1008 A-1009 xA-1008", false).await;
        assert!(decision.entities.is_empty(), "{given}: {decision:?}");
        assert!(decision.clarify.is_some(), "{given}");
    }
}

#[tokio::test]
async fn an_order_id_written_by_the_user_holds() {
    let router = refunds(Counted::always(Ok(
        Classification::new("refund", 0.9).entity("order_id", " A-1008 ")
    )));
    let decision = router.decide("refund A-1008 please", false).await;
    assert_eq!(
        decision.entities.get("order_id").map(String::as_str),
        Some("A-1008")
    );
    assert_eq!(decision.clarify, None);
    assert!(decision.signals.is_empty());
    assert!(decision.is_routed());
    assert!(router.scope(&decision).allows("route_refund"));
}

#[tokio::test]
async fn a_missing_order_id_is_read_from_the_text_when_there_is_one() {
    let router = refunds(Counted::always(Ok(Classification::new("refund", 0.9))));
    let decision = router.decide("refund A-1008, yes A-1008", false).await;
    assert_eq!(
        decision.entities.get("order_id").map(String::as_str),
        Some("A-1008")
    );
    assert!(decision.is_routed());

    // Two different ids: which one is the user's to say.
    let decision = router.decide("refund A-1008 or A-1009", false).await;
    assert!(decision.entities.is_empty());
    assert_eq!(signals(&decision), ["entity_unverified"]);

    // None at all.
    let decision = router.decide("refund it", false).await;
    assert_eq!(signals(&decision), ["entity_unverified"]);
}

#[tokio::test]
async fn an_alias_is_looked_up_and_kept_canonical() {
    let router = Router::new::<Desk>()
        .entity(product())
        .requires(Desk::Refund, ["product"])
        .classifier(Counted::new(|text| {
            let named = if text.contains("blue") {
                "the blue one"
            } else {
                "the red one"
            };
            Ok(Classification::new("refund", 0.9).entity("product", named))
        }));
    let decision = router.decide("refund the blue one", false).await;
    assert_eq!(
        decision.entities.get("product").map(String::as_str),
        Some("KETTLE-B")
    );
    assert!(decision.is_routed());

    // An alias the lookup does not know: the entity's own question.
    let decision = router.decide("refund the red one", false).await;
    assert!(decision.entities.is_empty());
    assert_eq!(
        decision.clarify.as_deref(),
        Some("Which product? The kettle or the toaster?")
    );
    assert_eq!(signals(&decision), ["entity_unverified"]);

    // A linked entity nobody named has no evidence.
    let router = Router::new::<Desk>()
        .entity(product())
        .requires(Desk::Refund, ["product"])
        .classifier(Counted::always(Ok(Classification::new("refund", 0.9))));
    let decision = router.decide("refund the toaster", false).await;
    assert_eq!(signals(&decision), ["entity_unverified"]);
}

#[tokio::test]
async fn entities_nobody_declared_are_dropped() {
    let router = refunds(Counted::always(Ok(Classification::new(
        "order_status",
        0.9,
    )
    .entity("order_id", "A-7")
    .entity("email", "someone@example.com"))));
    let decision = router.decide("where is A-7", false).await;
    assert_eq!(
        decision.entities.into_iter().collect::<Vec<_>>(),
        [("order_id".to_owned(), "A-7".to_owned())]
    );

    // An intent that needs no entity goes on without one.
    let decision = router.decide("where is my order", false).await;
    assert!(decision.is_routed());
    assert!(decision.entities.is_empty());
}

#[tokio::test]
async fn a_strong_rule_entities_are_checked_too() {
    let router = Router::new::<Desk>()
        .entity(product())
        .requires(Desk::Refund, ["product", "order_id"])
        .rule(
            Rule::pattern(
                Desk::Refund,
                r"refund the (?P<product>\w+ \w+)(?: from (?P<order_id>A-\d+))?",
                1.0,
            )
            .expect("the pattern compiles"),
        );
    let decision = router
        .decide("refund the blue kettle from A-3", false)
        .await;
    assert_eq!(decision.source, RouteSource::Rule);
    assert_eq!(
        decision.entities.get("product").map(String::as_str),
        Some("KETTLE-B")
    );
    // `order_id` is declared by no entity: the rule's own reading of the text stays.
    assert_eq!(
        decision.entities.get("order_id").map(String::as_str),
        Some("A-3")
    );
    assert!(decision.is_routed());

    // A product the lookup does not know is asked about, though the rule was sure.
    let decision = router
        .decide("refund the green teapot from A-3", false)
        .await;
    assert_eq!(decision.intent.as_deref(), Some("refund"));
    assert_eq!(
        decision.clarify.as_deref(),
        Some("Which product? The kettle or the toaster?")
    );
    assert!(!decision.entities.contains_key("product"));

    // A required entity that no entity declares and the rule did not read: its default
    // question.
    let decision = router.decide("refund the blue kettle", false).await;
    assert_eq!(
        decision.clarify.as_deref(),
        Some("Which order id? Please write it as it appears, so I can check it.")
    );
    assert_eq!(signals(&decision), ["entity_unverified"]);
}

#[tokio::test]
async fn an_entity_declared_again_replaces_the_first() {
    let router = Router::new::<Desk>()
        .entity(Entity::in_text("order_id", r"B-\d+").expect("the pattern compiles"))
        .entity(order_id().ask("Which order (A-...)?"))
        .requires(Desk::Refund, ["order_id"])
        .classifier(Counted::always(Ok(Classification::new("refund", 0.9))));
    let decision = router.decide("refund B-1", false).await;
    assert_eq!(decision.clarify.as_deref(), Some("Which order (A-...)?"));
    let decision = router.decide("refund A-1", false).await;
    assert_eq!(
        decision.entities.get("order_id").map(String::as_str),
        Some("A-1")
    );

    assert!(Entity::in_text("order_id", r"A-(\d+").is_err());
}

#[tokio::test]
async fn a_decision_that_asks_is_kept_and_asks_again() {
    let store = Arc::new(MemoryDecisionStore::default());
    let classifier = Counted::always(Ok(
        Classification::new("refund", 0.9).entity("order_id", "A-42")
    ));
    let router = refunds(classifier.clone()).store(Arc::clone(&store));
    let session = Session::new("s-ask");
    let request = RouteRequest::new(&session, "r-ask", "refund my order");
    let decided = router.route(&request).await.expect("the store answers");
    assert!(decided.clarify.is_some());
    assert!(router.scope(&decided).is_empty());
    let kept = router.route(&request).await.expect("the store answers");
    assert_eq!(kept, decided);
    assert_eq!(classifier.calls(), 1);
}
