//! Runs: the loop between a model and the tools, each budget's stop, duplicate detection's
//! invariances, nested calls counted, routing by strong rules, and a run continued from its
//! record (after a model failure, and after a crash between a write and the next round).

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::json;
use tool_runtime::model::{
    self, Message, ModelError, ModelErrorKind, ModelResponse, ScriptedModel, Usage,
};
use tool_runtime::routing::{Router, Rule, Signal};
use tool_runtime::run::{
    Agent, Budget, MemoryRunStore, RunEnd, RunError, RunEvent, RunKey, RunRequest, RunStore,
    StopReason,
};
use tool_runtime::{
    Observation, RunContext, Runtime, Session, ToolCall, ToolError, intents, tool, tools,
};

#[derive(Default)]
struct Desk {
    writes: AtomicU32,
    reads: AtomicU32,
}

/// Looks up one order.
#[tool(read_only)]
fn run_order(
    ctx: RunContext<Desk>,
    /// The order id.
    order_id: String,
    /// Whether to list the items.
    #[serde(default)]
    items: bool,
) -> String {
    ctx.deps().reads.fetch_add(1, Ordering::SeqCst);
    format!(
        "{order_id}: shipped{}",
        if items { " (2 items)" } else { "" }
    )
}

/// Lists orders, a page at a time.
#[tool(read_only)]
fn run_orders(
    /// Where the page starts.
    cursor: Option<String>,
) -> String {
    format!("page after {}", cursor.unwrap_or_default())
}

/// Opens a ticket.
#[tool(stateful)]
fn run_ticket(
    ctx: RunContext<Desk>,
    /// What it is about.
    subject: String,
) -> String {
    let number = ctx.deps().writes.fetch_add(1, Ordering::SeqCst) + 1;
    format!("ticket T-{number}: {subject}")
}

/// Always fails.
#[tool(read_only)]
fn run_broken() -> Result<String, ToolError> {
    Err(ToolError::failed("the backend is down"))
}

/// Takes its time.
#[tool(read_only)]
async fn run_slow() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "done".to_owned()
}

/// Looks up an order through the order tool.
#[tool(read_only)]
async fn run_nested(ctx: RunContext<Desk>) -> Result<String, ToolError> {
    let output = ctx
        .call_tool("run_order", json!({"order_id": "A-1"}))
        .await?;
    Ok(format!("via: {}", output.text()))
}

intents! {
    enum RunIntent {
        OrderStatus = "order_status" => [run_order],
        Complaint = "complaint" => [run_order, run_ticket],
    }
}

fn runtime(desk: Arc<Desk>) -> Runtime<Desk> {
    Runtime::builder_shared(desk)
        .inventory(false)
        .tools(tools![
            run_order, run_orders, run_ticket, run_broken, run_slow, run_nested
        ])
        .build()
        .expect("the runtime builds")
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

fn request(id: &str, input: &str) -> RunRequest {
    RunRequest::new(id, Session::new("s-runs"), input)
}

/// How many answers the model gave in `messages`: the round it is asked for next, from 0.
fn answered(messages: &[Message]) -> usize {
    messages
        .iter()
        .filter(|message| matches!(message, Message::Assistant { .. }))
        .count()
}

fn stop_reason(observation: &Observation) -> Option<String> {
    observation
        .error()
        .filter(|error| error.kind().as_str() == "budget_exceeded")
        .and_then(|error| error.details())
        .and_then(|details| details["reason"].as_str())
        .map(str::to_owned)
}

#[tokio::test]
async fn a_run_asks_executes_and_answers() {
    let desk = Arc::new(Desk::default());
    let model = ScriptedModel::new([
        ModelResponse::calls([
            call("c1", "run_order", r#"{"order_id":"A-1"}"#),
            call("c2", "run_ticket", r#"{"subject":"late"}"#),
        ]),
        ModelResponse::text("A-1 shipped; ticket T-1 is open."),
    ]);
    let agent = Agent::new(runtime(Arc::clone(&desk)), model);
    let report = agent
        .run(request("r-1", "Where is A-1?"))
        .await
        .expect("the run ends");
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(report.answer(), Some("A-1 shipped; ticket T-1 is open."));
    assert_eq!(report.rounds.len(), 2);
    assert_eq!(report.spent.rounds, 2);
    assert_eq!(report.spent.calls, 2);
    assert!(!report.resumed);
    assert_eq!(desk.writes.load(Ordering::SeqCst), 1);
    // The conversation: the request, the calls, their answers, the final text.
    assert!(matches!(&report.messages[0], Message::User { text } if text == "Where is A-1?"));
    assert!(
        matches!(&report.messages[2], Message::Tool { content, .. } if content == "A-1: shipped")
    );
    assert!(
        matches!(&report.messages[3], Message::Tool { content, .. } if content == "ticket T-1: late")
    );
    // Tokens were counted although the scripted model reports none.
    assert!(report.spent.usage.input_tokens > 0);

    // Started again with the same id, the run is answered from its record: nothing runs.
    let again = agent
        .run(request("r-1", "Where is A-1?"))
        .await
        .expect("the record answers");
    assert!(again.resumed);
    assert_eq!(again.answer(), report.answer());
    assert_eq!(desk.writes.load(Ordering::SeqCst), 1);
    // Another request under the same id is refused.
    let other = agent.run(request("r-1", "Something else")).await;
    assert!(matches!(other, Err(RunError::Conflict { .. })), "{other:?}");
}

#[tokio::test]
async fn the_call_past_the_tool_call_limit_is_refused_and_ends_the_run() {
    let desk = Arc::new(Desk::default());
    let model = ScriptedModel::new([
        ModelResponse::calls([
            call("c1", "run_order", r#"{"order_id":"A-1"}"#),
            call("c2", "run_order", r#"{"order_id":"A-2"}"#),
            call("c3", "run_ticket", r#"{"subject":"late"}"#),
        ]),
        ModelResponse::text("never asked"),
    ]);
    let agent =
        Agent::new(runtime(Arc::clone(&desk)), model).budget(Budget::default().max_tool_calls(2));
    let report = agent
        .run(request("r-calls", "go"))
        .await
        .expect("the run ends");
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::MaxToolCalls
        }
    );
    let observations = report.rounds[0]
        .report
        .as_ref()
        .expect("ran here")
        .observations();
    assert!(observations[0].is_success() && observations[1].is_success());
    assert_eq!(
        stop_reason(&observations[2]).as_deref(),
        Some("max_tool_calls")
    );
    assert_eq!(
        desk.writes.load(Ordering::SeqCst),
        0,
        "the refused write did not run"
    );
    assert_eq!(report.rounds.len(), 1, "the model was not asked again");
}

#[tokio::test]
async fn a_tool_limit_refuses_the_next_call_of_that_tool() {
    let model = ScriptedModel::new([ModelResponse::calls([
        call("c1", "run_ticket", r#"{"subject":"one"}"#),
        call("c2", "run_ticket", r#"{"subject":"two"}"#),
    ])]);
    let agent = Agent::new(runtime(Arc::default()), model)
        .budget(Budget::default().max_calls_of("run_ticket", 1));
    let report = agent
        .run(request("r-tool", "go"))
        .await
        .expect("the run ends");
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::MaxCallsPerTool
        }
    );
    let observations = report.rounds[0]
        .report
        .as_ref()
        .expect("ran here")
        .observations();
    assert!(observations[0].is_success());
    assert_eq!(
        stop_reason(&observations[1]).as_deref(),
        Some("max_calls_per_tool")
    );
}

#[tokio::test]
async fn duplicates_ignore_key_order_and_defaults_but_not_a_new_cursor() {
    let desk = Arc::new(Desk::default());
    let model = ScriptedModel::new([
        ModelResponse::calls([
            call("c1", "run_order", r#"{"order_id":"A-1","items":false}"#),
            // Another cursor: a new call.
            call("c2", "run_orders", r#"{"cursor":"offset:3"}"#),
            call("c3", "run_orders", r#"{"cursor":"offset:6"}"#),
            // The first call again: the default left out.
            call("c4", "run_order", r#"{"order_id":"A-1"}"#),
        ]),
        ModelResponse::calls([
            // And again, keys reordered: one duplicate too many.
            call("c5", "run_order", r#"{"items":false,"order_id":"A-1"}"#),
        ]),
        ModelResponse::text("never asked"),
    ]);
    let agent = Agent::new(runtime(Arc::clone(&desk)), model)
        .budget(Budget::default().max_duplicate_calls(1));
    let report = agent
        .run(request("r-dup", "go"))
        .await
        .expect("the run ends");
    let first = report.rounds[0]
        .report
        .as_ref()
        .expect("ran here")
        .observations();
    assert!(first.iter().all(Observation::is_success), "{first:?}");
    assert_eq!(report.spent.duplicates, 1);
    let second = report.rounds[1]
        .report
        .as_ref()
        .expect("ran here")
        .observations();
    assert_eq!(stop_reason(&second[0]).as_deref(), Some("duplicate_calls"));
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::DuplicateCalls
        }
    );
    assert_eq!(
        desk.reads.load(Ordering::SeqCst),
        2,
        "the refused repeat did not run"
    );
}

#[tokio::test]
async fn a_model_that_loops_forever_is_stopped_by_the_no_progress_guard() {
    let asked = Arc::new(AtomicU32::new(0));
    let counter = Arc::clone(&asked);
    // Every round the same failing call, for ever.
    let looping = model::from_fn(move |_messages, _tools| {
        let round = counter.fetch_add(1, Ordering::SeqCst);
        Ok(ModelResponse::calls([call(
            &format!("c{round}"),
            "run_broken",
            "{}",
        )]))
    });
    let agent = Agent::new(runtime(Arc::default()), looping)
        .budget(Budget::default().max_rounds(100).max_duplicate_calls(100));
    let report = agent
        .run(request("r-loop", "go"))
        .await
        .expect("the run ends");
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::NoProgress
        }
    );
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "two rounds without progress, then stop"
    );
}

#[tokio::test]
async fn repeating_a_successful_call_is_no_progress_either() {
    let looping = model::from_fn(|messages, _tools| {
        let round = answered(messages);
        Ok(ModelResponse::calls([call(
            &format!("c{round}"),
            "run_order",
            r#"{"order_id":"A-1"}"#,
        )]))
    });
    let agent = Agent::new(runtime(Arc::default()), looping)
        .budget(Budget::default().max_rounds(100).max_duplicate_calls(100));
    let report = agent
        .run(request("r-repeat", "go"))
        .await
        .expect("the run ends");
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::NoProgress
        }
    );
    // The first round made progress; the next two repeated it.
    assert_eq!(report.rounds.len(), 3);
}

#[tokio::test]
async fn the_round_limit_stops_the_run() {
    let model = model::from_fn(|messages, _tools| {
        let round = answered(messages);
        Ok(ModelResponse::calls([call(
            &format!("c{round}"),
            "run_order",
            &format!(r#"{{"order_id":"A-{round}"}}"#),
        )]))
    });
    let agent = Agent::new(runtime(Arc::default()), model).budget(Budget::default().max_rounds(3));
    let report = agent
        .run(request("r-rounds", "go"))
        .await
        .expect("the run ends");
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::MaxRounds
        }
    );
    assert_eq!(report.spent.rounds, 3);
}

#[tokio::test]
async fn the_token_budget_counts_the_models_usage() {
    let model = model::from_fn(|messages, _tools| {
        let round = answered(messages);
        Ok(ModelResponse::calls([call(
            &format!("c{round}"),
            "run_order",
            &format!(r#"{{"order_id":"A-{round}"}}"#),
        )])
        .with_usage(Usage::new(600, 100)))
    });
    let agent = Agent::new(runtime(Arc::default()), model)
        .budget(Budget::default().max_total_tokens(1_500));
    let report = agent
        .run(request("r-tokens", "go"))
        .await
        .expect("the run ends");
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::TokenBudget
        }
    );
    assert_eq!(report.spent.rounds, 3, "700 + 700 < 1,500 <= 2,100");
    assert_eq!(report.spent.usage, Usage::new(1_800, 300));
}

#[tokio::test]
async fn the_run_time_limit_cancels_what_still_runs() {
    let model = ScriptedModel::new([
        ModelResponse::calls([call("c1", "run_slow", "{}")]),
        ModelResponse::text("never asked"),
    ]);
    let agent = Agent::new(runtime(Arc::default()), model)
        .budget(Budget::default().max_wall_time(Duration::from_millis(200)));
    let report = agent
        .run(request("r-time", "go"))
        .await
        .expect("the run ends");
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::RunTimeout
        }
    );
    let observations = report.rounds[0]
        .report
        .as_ref()
        .expect("ran here")
        .observations();
    assert_eq!(observations[0].error_kind(), Some("cancelled"));
}

#[tokio::test]
async fn nested_calls_count_against_the_budget() {
    let desk = Arc::new(Desk::default());
    let model = ScriptedModel::new([
        ModelResponse::calls([call("c1", "run_nested", "{}")]),
        ModelResponse::text("never asked"),
    ]);
    let agent =
        Agent::new(runtime(Arc::clone(&desk)), model).budget(Budget::default().max_tool_calls(1));
    let report = agent
        .run(request("r-nested", "go"))
        .await
        .expect("the run ends");
    let observations = report.rounds[0]
        .report
        .as_ref()
        .expect("ran here")
        .observations();
    assert_eq!(
        observations[0].error_kind(),
        Some("budget_exceeded"),
        "{observations:?}"
    );
    assert_eq!(
        desk.reads.load(Ordering::SeqCst),
        0,
        "the nested call did not run"
    );
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::MaxToolCalls
        }
    );

    // With room for both, both count.
    let model = ScriptedModel::new([
        ModelResponse::calls([call("c1", "run_nested", "{}")]),
        ModelResponse::text("done"),
    ]);
    let agent = Agent::new(runtime(Arc::clone(&desk)), model);
    let report = agent
        .run(request("r-nested-2", "go"))
        .await
        .expect("the run ends");
    assert_eq!(report.spent.calls, 2);
    assert_eq!(report.spent.per_tool.get("run_order"), Some(&1));
}

#[tokio::test]
async fn a_strong_rule_routes_the_request_to_its_scope() {
    let router = || {
        Router::new::<RunIntent>().rule(
            Rule::pattern(RunIntent::OrderStatus, r"where is (?P<order_id>A-\d+)", 1.0)
                .expect("the pattern compiles"),
        )
    };
    // The model tries a write the intent does not allow.
    let model = ScriptedModel::new([
        ModelResponse::calls([
            call("c1", "run_order", r#"{"order_id":"A-7"}"#),
            call("c2", "run_ticket", r#"{"subject":"x"}"#),
        ]),
        ModelResponse::text("A-7 shipped."),
    ]);
    let desk = Arc::new(Desk::default());
    let agent = Agent::new(runtime(Arc::clone(&desk)), model).router(router());
    let report = agent
        .run(request("r-route", "where is A-7?"))
        .await
        .expect("the run ends");
    let route = report.route.as_ref().expect("routed");
    assert_eq!(route.intent.as_deref(), Some("order_status"));
    assert_eq!(
        route.entities.get("order_id").map(String::as_str),
        Some("A-7")
    );
    let observations = report.rounds[0]
        .report
        .as_ref()
        .expect("ran here")
        .observations();
    assert!(observations[0].is_success());
    assert_eq!(observations[1].error_kind(), Some("out_of_scope"));
    assert_eq!(desk.writes.load(Ordering::SeqCst), 0);

    // A request no rule recognizes: the empty scope, with its signal.
    let blind = model::from_fn(|_messages, tools| {
        assert!(tools.is_empty(), "no tool is shown: {tools:?}");
        Ok(ModelResponse::text("How can I help?"))
    });
    let agent = Agent::new(runtime(Arc::default()), blind).router(router());
    let report = agent
        .run(request("r-unknown", "hmm"))
        .await
        .expect("the run ends");
    let route = report.route.as_ref().expect("routed");
    assert_eq!(route.intent, None);
    assert_eq!(route.signals, vec![Signal::WeakRule]);
}

#[tokio::test]
async fn a_run_the_model_failed_continues_from_its_record() {
    let desk = Arc::new(Desk::default());
    let store = Arc::new(MemoryRunStore::default());
    let fail = Arc::new(AtomicU32::new(1));
    let failing = Arc::clone(&fail);
    let model = model::from_fn(move |messages, _tools| {
        let answered = answered(messages);
        if answered == 1 && failing.swap(0, Ordering::SeqCst) == 1 {
            return Err(ModelError::new(
                ModelErrorKind::Server,
                "the endpoint failed",
            ));
        }
        // The scripted answers, by round.
        match answered {
            0 => Ok(ModelResponse::calls([call(
                "c1",
                "run_ticket",
                r#"{"subject":"late"}"#,
            )])),
            _ => Ok(ModelResponse::text("Ticket T-1 is open.")),
        }
    });
    let agent = Agent::new(runtime(Arc::clone(&desk)), model).store(Arc::clone(&store));
    let failed = agent.run(request("r-fail", "open a ticket")).await;
    assert!(matches!(failed, Err(RunError::Model { .. })), "{failed:?}");
    assert_eq!(desk.writes.load(Ordering::SeqCst), 1);

    let report = agent
        .run(request("r-fail", "open a ticket"))
        .await
        .expect("the run goes on");
    assert!(report.resumed);
    assert_eq!(report.answer(), Some("Ticket T-1 is open."));
    assert_eq!(
        desk.writes.load(Ordering::SeqCst),
        1,
        "the write did not run again"
    );
    assert!(
        report.rounds[0].report.is_none(),
        "round 1 came from the record"
    );
    assert_eq!(report.spent.rounds, 2);
}

#[tokio::test]
async fn a_write_the_model_repeats_word_for_word_runs_once() {
    let desk = Arc::new(Desk::default());
    let model = ScriptedModel::new([
        ModelResponse::calls([call("c1", "run_ticket", r#"{"subject":"late"}"#)]),
        // Unsure the ticket went through, the model opens it again with the same arguments.
        ModelResponse::calls([call("c2", "run_ticket", r#"{"subject":"late"}"#)]),
        ModelResponse::text("Ticket T-1 is open."),
    ]);
    let agent = Agent::new(runtime(Arc::clone(&desk)), model);
    let report = agent
        .run(request("r-repeat", "open a ticket"))
        .await
        .expect("the run ends");
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(desk.writes.load(Ordering::SeqCst), 1, "the write ran once");
    let repeat = &report.rounds[1]
        .report
        .as_ref()
        .expect("ran here")
        .observations()[0];
    assert!(repeat.replayed(), "answered from the idempotency layer");
    assert_eq!(repeat.content(), Some("ticket T-1: late"));
    assert_eq!(report.spent.duplicates, 1);
}

#[tokio::test]
async fn a_round_recorded_but_not_answered_runs_its_write_once() {
    // A process recorded the model's answer, ran the write, and died before recording the
    // answer the write got. The record and the idempotency store say so.
    let desk = Arc::new(Desk::default());
    let runtime = runtime(Arc::clone(&desk));
    let session = Session::new("s-runs");
    let first = runtime
        .execute(
            &session,
            [call("c1", "run_ticket", r#"{"subject":"late"}"#)],
        )
        .await;
    assert!(first.observations()[0].is_success());
    let store = Arc::new(MemoryRunStore::default());
    let key = RunKey::new("s-runs", "r-crash");
    store
        .append(
            &key,
            0,
            &RunEvent::Started {
                input: "open a ticket".to_owned(),
                history: Vec::new(),
            },
        )
        .await
        .expect("appended");
    store
        .append(
            &key,
            1,
            &RunEvent::Answered {
                round: 1,
                response: ModelResponse::calls([call("c1", "run_ticket", r#"{"subject":"late"}"#)]),
            },
        )
        .await
        .expect("appended");
    // The same position again is refused: one writer per run.
    let taken = store
        .append(
            &key,
            1,
            &RunEvent::Started {
                input: String::new(),
                history: Vec::new(),
            },
        )
        .await
        .expect_err("taken");
    assert_eq!(taken.kind(), std::io::ErrorKind::AlreadyExists);

    let model = ScriptedModel::new([
        ModelResponse::text("unused: round 1 is in the record"),
        ModelResponse::text("Ticket T-1 is open."),
    ]);
    let agent = Agent::new(runtime, model).store(Arc::clone(&store));
    let report = agent
        .run(request("r-crash", "open a ticket"))
        .await
        .expect("the run goes on");
    assert_eq!(desk.writes.load(Ordering::SeqCst), 1, "the write ran once");
    let observations = report.rounds[0]
        .report
        .as_ref()
        .expect("ran here")
        .observations();
    assert!(
        observations[0].replayed(),
        "answered from the idempotency layer"
    );
    assert_eq!(observations[0].content(), Some("ticket T-1: late"));
    assert_eq!(report.answer(), Some("Ticket T-1 is open."));
    let events = store.load(&key).await.expect("loaded");
    assert!(matches!(
        events.last(),
        Some(RunEvent::Ended {
            end: RunEnd::Answered,
            ..
        })
    ));
}

/// Every public future of a run is `Send`: applications spawn runs.
#[test]
fn run_futures_are_send() {
    fn send<T: Send>(_: &T) {}
    let agent = Agent::new(runtime(Arc::default()), ScriptedModel::new([]));
    let run = agent.run(request("r-send", "go"));
    send(&run);
    let router = Router::new::<RunIntent>();
    let session = Session::new("s");
    let routing = tool_runtime::routing::RouteRequest::new(&session, "r", "x");
    let route = router.route(&routing);
    send(&route);
}

#[tokio::test]
async fn the_readmes_run_answers_as_it_says() -> Result<(), Box<dyn std::error::Error>> {
    // README.md, "Runs: a model, routing, budgets": the support desk's tools and intents.
    use examples::support::{SupportDeps, SupportIntent};
    use tool_runtime::routing::Entity;

    let runtime = Runtime::builder(SupportDeps::demo()).build()?;
    let router = Router::new::<SupportIntent>()
        .rule(Rule::pattern(
            SupportIntent::OrderStatus,
            r"(?i)\bwhere is\b",
            0.9,
        )?)
        .entity(Entity::in_text("order_id", r"\bA-\d{4}\b")?)
        .requires(SupportIntent::OrderStatus, ["order_id"]);
    let model = ScriptedModel::new([
        ModelResponse::calls([ToolCall::new(
            "c1",
            "get_order_status",
            r#"{"order_id":"A-1024"}"#,
        )]),
        ModelResponse::text("A-1024 was cancelled."),
    ]);
    let agent = Agent::new(runtime, model)
        .router(router)
        .budget(Budget::default().max_rounds(6).max_tool_calls(20));

    let report = agent
        .run(RunRequest::new(
            "run-1",
            Session::new("s-1"),
            "Where is my order A-1024?",
        ))
        .await?;
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(report.answer(), Some("A-1024 was cancelled."));
    assert_eq!(
        report
            .route
            .as_ref()
            .and_then(|route| route.intent.as_deref()),
        Some("order_status")
    );
    assert_eq!(report.spent.calls, 1);
    // The call ran: its answer is the order's status.
    let observation = &report.rounds[0]
        .report
        .as_ref()
        .expect("ran here")
        .observations()[0];
    assert!(
        observation
            .content()
            .is_some_and(|content| content.contains("cancelled")),
        "{observation:?}"
    );

    // Without the order id the same agent asks back, and no model is asked.
    let unclear = agent
        .run(RunRequest::new(
            "run-2",
            Session::new("s-1"),
            "Where is my order?",
        ))
        .await?;
    assert!(
        matches!(unclear.end, RunEnd::Clarify { .. }),
        "{:?}",
        unclear.end
    );
    assert!(unclear.rounds.is_empty());
    Ok(())
}
