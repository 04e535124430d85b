//! A run's trace: the gate decision on each observation, the events an agent records for each
//! step of a run (in order, with their fields), the JSON lines file and its errors, and sinks
//! that panic or are stuck, which never break or stall a run.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tests::approver::Scripted;
use tests::assert_send;
use tests::decisions::{keys, signed};
use tool_runtime::approvals::{Approval, MemoryApprovalStore};
use tool_runtime::gates::{Action, Policy};
use tool_runtime::model::{
    self, Message, ModelError, ModelErrorKind, ModelResponse, ScriptedModel, Usage,
};
use tool_runtime::routing::{Router, Rule};
use tool_runtime::run::{Agent, Budget, MemoryRunStore, RunEnd, RunError, RunRequest, StopReason};
use tool_runtime::trace::{Gate, JsonlTrace, MemoryTrace, TraceEvent, TraceSink};
use tool_runtime::{Runtime, Session, ToolCall, intents, tool, tools};

/// What the tools did.
#[derive(Default)]
pub struct Shop {
    refunds: AtomicU32,
}

/// Looks up one order.
#[tool(read_only)]
fn tr_lookup(
    /// The order id.
    order_id: String,
) -> String {
    format!("{order_id}: shipped")
}

/// Refunds part of an order.
#[tool(stateful)]
fn tr_refund(
    ctx: tool_runtime::RunContext<Shop>,
    /// The order id.
    order: String,
    /// How much.
    amount: u32,
) -> String {
    ctx.deps().refunds.fetch_add(1, Ordering::SeqCst);
    format!("refunded {amount} on {order}")
}

/// Sums up an order: looks it up through `tr_lookup`, and asks a tool that does not exist.
#[tool(read_only)]
async fn tr_summary(
    ctx: tool_runtime::RunContext<Shop>,
) -> Result<String, tool_runtime::ToolError> {
    let found = ctx
        .call_tool("tr_lookup", json!({"order_id": "A-1"}))
        .await?;
    let missing = ctx.call_tool("tr_missing", json!({})).await;
    Ok(format!("{}; {}", found.text(), missing.is_err()))
}

intents! {
    enum TraceIntent {
        Lookup = "lookup" => [tr_lookup],
    }
}

fn runtime(
    configure: impl FnOnce(tool_runtime::RuntimeBuilder<Shop>) -> tool_runtime::RuntimeBuilder<Shop>,
) -> Runtime<Shop> {
    let builder = Runtime::builder(Shop::default())
        .inventory(false)
        .tools(tools![tr_lookup, tr_refund]);
    match configure(builder).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("the runtime builds: {error}"),
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall::new(id, name, arguments)
}

fn request(id: &str, input: &str) -> RunRequest {
    RunRequest::new(id, Session::new("s-trace"), input)
}

// ---- the gate decision on each observation ------------------------------------------------

#[tokio::test]
async fn each_observation_carries_the_gate_decision() {
    let approver = Scripted::new([
        Approval::Approve,
        Approval::ApproveWith(json!({ "order": "A-1", "amount": 2 })),
        Approval::Deny("not today".into()),
        Approval::Pending,
        Approval::Pending,
    ]);
    let store = Arc::new(MemoryApprovalStore::default());
    let runtime = runtime(|builder| {
        builder
            .policy(Policy::new().tool("tr_refund", Action::Ask))
            .approver(approver.clone())
            .approval_store(Arc::clone(&store) as Arc<dyn tool_runtime::approvals::ApprovalStore>)
            .decision_keys(keys())
    });
    let session = Session::new("s-gates");
    let report = runtime
        .execute(
            &session,
            [
                call("auto", "tr_lookup", r#"{"order_id":"A-1"}"#),
                call("approved", "tr_refund", r#"{"order":"A-1","amount":1}"#),
                call("edited", "tr_refund", r#"{"order":"A-1","amount":20}"#),
                call("denied", "tr_refund", r#"{"order":"A-1","amount":30}"#),
                call("pending", "tr_refund", r#"{"order":"A-1","amount":40}"#),
                call("later", "tr_refund", r#"{"order":"A-1","amount":50}"#),
                call("unknown", "tr_lokup", r#"{"order_id":"A-1"}"#),
                call("invalid", "tr_lookup", r#"{"order_id":5}"#),
            ],
        )
        .await;
    let gates: Vec<Option<Gate>> = report.observations().iter().map(|o| o.gate()).collect();
    assert_eq!(
        gates,
        [
            Some(Gate::Auto),
            Some(Gate::Approved),
            Some(Gate::Edited),
            Some(Gate::Denied),
            Some(Gate::Pending),
            Some(Gate::Pending),
            None,
            None,
        ]
    );
    assert_eq!(runtime.deps().refunds.load(Ordering::SeqCst), 2);

    // In the report's JSON only when there is one; the rest of the JSON is as it was.
    let Ok(serialized) = serde_json::to_value(&report) else {
        panic!("the report serializes");
    };
    let observations = &serialized["observations"];
    assert_eq!(observations[0]["gate"], "auto");
    assert_eq!(observations[2]["gate"], "edited");
    assert_eq!(observations[4]["gate"], "pending");
    assert!(observations[6].get("gate").is_none(), "{}", observations[6]);
    assert_eq!(observations[6]["call_id"], "unknown");

    // A signed decision resumes a pending call: approved as sent, or with an edit.
    let pending = match runtime.pending_approvals(&session).await {
        Ok(pending) => pending,
        Err(error) => panic!("the store answers: {error}"),
    };
    let of = |call_id: &str| {
        pending
            .iter()
            .find(|pending| pending.call_id == call_id)
            .unwrap_or_else(|| panic!("{call_id} is pending"))
    };
    let decisions = [
        signed(&runtime, of("pending"), Approval::Approve),
        signed(
            &runtime,
            of("later"),
            Approval::ApproveWith(json!({ "order": "A-1", "amount": 5 })),
        ),
    ];
    let resumed = runtime.resume(&session, decisions).await;
    let resumed: Vec<(&str, Option<Gate>, Option<&str>)> = resumed
        .observations()
        .iter()
        .map(|o| (o.call_id(), o.gate(), o.error_kind()))
        .collect();
    assert_eq!(
        resumed,
        [
            ("pending", Some(Gate::Approved), None),
            ("later", Some(Gate::Edited), None)
        ]
    );
    assert_eq!(runtime.deps().refunds.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_call_the_policy_denies_is_denied_at_the_gate() {
    let runtime = runtime(|builder| builder.policy(Policy::new().tool("tr_refund", Action::Deny)));
    let report = runtime
        .execute(
            &Session::new("s-deny"),
            [call("c1", "tr_refund", r#"{"order":"A-1","amount":1}"#)],
        )
        .await;
    let observation = &report.observations()[0];
    assert_eq!(observation.error_kind(), Some("denied"));
    assert_eq!(observation.gate(), Some(Gate::Denied));
    assert_eq!(observation.gate().map(|gate| gate.as_str()), Some("denied"));
}

#[tokio::test]
async fn a_call_the_budget_refuses_never_reached_the_gate() {
    let model = ScriptedModel::new([
        ModelResponse::calls([
            call("c1", "tr_lookup", r#"{"order_id":"A-1"}"#),
            call("c2", "tr_lookup", r#"{"order_id":"A-2"}"#),
        ]),
        ModelResponse::text("done"),
    ]);
    let agent =
        Agent::new(runtime(|builder| builder), model).budget(Budget::default().max_tool_calls(1));
    let report = match agent.run(request("r-budget-gate", "look")).await {
        Ok(report) => report,
        Err(error) => panic!("the run ends: {error}"),
    };
    let Some(turn) = report.rounds[0].report.as_ref() else {
        panic!("the round ran here");
    };
    let gates: Vec<(Option<&str>, Option<Gate>)> = turn
        .observations()
        .iter()
        .map(|o| (o.error_kind(), o.gate()))
        .collect();
    assert_eq!(
        gates,
        [(None, Some(Gate::Auto)), (Some("budget_exceeded"), None)]
    );
}

// ---- the events of a run -------------------------------------------------------------------

/// The events as JSON, with what varies from run to run replaced once checked: the times
/// (numbers), the digests (64 hex digits), the catalog's token counts (more than 0).
fn normalized(events: &[TraceEvent]) -> Vec<Value> {
    events
        .iter()
        .map(|event| {
            let Ok(mut value) = serde_json::to_value(event) else {
                panic!("an event serializes: {event:?}");
            };
            let Some(fields) = value.as_object_mut() else {
                panic!("an event is an object: {event:?}");
            };
            for time in ["at_ms", "elapsed_ms"] {
                if let Some(field) = fields.get_mut(time) {
                    assert!(
                        field.as_f64().is_some_and(|ms| ms >= 0.0),
                        "{time}: {field}"
                    );
                    *field = json!(0);
                }
            }
            if let Some(digest) = fields.get_mut("arguments_digest")
                && let Some(hex) = digest.as_str()
            {
                assert_eq!(hex.len(), 64, "{hex}");
                assert!(hex.bytes().all(|byte| byte.is_ascii_hexdigit()), "{hex}");
                *digest = json!("<digest>");
            }
            if let Some(Value::Array(catalog)) = fields.get_mut("catalog") {
                for tool in catalog {
                    assert!(
                        tool["tokens"].as_u64().is_some_and(|tokens| tokens > 0),
                        "{tool}"
                    );
                    tool["tokens"] = json!(0);
                }
            }
            value
        })
        .collect()
}

fn digest_of<'e>(events: &'e [TraceEvent], id: &str) -> Option<&'e str> {
    events.iter().find_map(|event| match event {
        TraceEvent::Call {
            call_id,
            arguments_digest,
            ..
        } if call_id == id => arguments_digest.as_deref(),
        _ => None,
    })
}

#[tokio::test]
async fn a_run_records_each_step_in_order() {
    let router = match Rule::pattern(TraceIntent::Lookup, r"where is (?P<order_id>A-\d+)", 1.0) {
        Ok(rule) => Router::new::<TraceIntent>().rule(rule),
        Err(error) => panic!("the pattern compiles: {error}"),
    };
    let model = ScriptedModel::new([
        ModelResponse::calls([
            call("c1", "tr_lookup", r#"{"order_id":"A-1"}"#),
            call("c2", "tr_lookup", r#"{"order_id":5}"#),
            call("c3", "tr_refund", r#"{"order":"A-1","amount":1}"#),
        ])
        .with_usage(Usage::new(100, 20)),
        // The same lookup again: a duplicate, and no progress.
        ModelResponse::calls([call("c4", "tr_lookup", r#"{ "order_id" : "A-1" }"#)])
            .with_usage(Usage::new(150, 10)),
        ModelResponse::text("A-1 has shipped.").with_usage(Usage::new(170, 5)),
    ]);
    let trace = Arc::new(MemoryTrace::default());
    let agent = Agent::new(runtime(|builder| builder), model)
        .router(router)
        .trace(Arc::clone(&trace));
    let report = match agent.run(request("r-steps", "where is A-1?")).await {
        Ok(report) => report,
        Err(error) => panic!("the run ends: {error}"),
    };
    assert_eq!(report.end, RunEnd::Answered);
    assert!(agent.flush_trace().await.is_ok());

    let events = trace.events();
    assert!(
        events
            .iter()
            .all(|event| event.run() == "r-steps" && event.session() == "s-trace")
    );
    assert!(
        events
            .windows(2)
            .all(|pair| pair[0].at_ms() <= pair[1].at_ms()),
        "times only go forward"
    );
    // The same arguments, spaced otherwise, have the same canonical digest.
    assert_eq!(digest_of(&events, "c1"), digest_of(&events, "c4"));
    let call_of = |round: u32, id: &str, gate: Value, error: Value, field: Value, digest: Value| {
        json!({
            "event": "call", "run": "r-steps", "session": "s-trace", "at_ms": 0,
            "round": round, "call_id": id,
            "tool": if id == "c3" { "tr_refund" } else { "tr_lookup" },
            "arguments_digest": digest, "gate": gate,
            "attempts": if error.is_null() { 1 } else { 0 },
            "elapsed_ms": 0, "error_kind": error, "invalid_field": field,
            "replayed": false, "truncated": false, "redactions": 0, "nested": false,
        })
    };
    let expected = vec![
        json!({
            "event": "run_started", "run": "r-steps", "session": "s-trace", "at_ms": 0,
            "input": "where is A-1?", "resumed": false,
            // The built-in `read_artifact` is shown with the intent's tools.
            "catalog": [{ "name": "read_artifact", "tokens": 0 }, { "name": "tr_lookup", "tokens": 0 }],
        }),
        json!({
            "event": "routed", "run": "r-steps", "session": "s-trace", "at_ms": 0,
            "intent": "lookup", "confidence": 1.0, "source": "rule", "signals": [],
            "clarify": false,
        }),
        json!({
            "event": "model_answered", "run": "r-steps", "session": "s-trace", "at_ms": 0,
            "round": 1, "input_tokens": 100, "output_tokens": 20, "calls": 3, "elapsed_ms": 0,
        }),
        call_of(
            1,
            "c1",
            json!("auto"),
            Value::Null,
            Value::Null,
            json!("<digest>"),
        ),
        call_of(
            1,
            "c2",
            Value::Null,
            json!("invalid_arguments"),
            json!("order_id"),
            Value::Null,
        ),
        call_of(
            1,
            "c3",
            Value::Null,
            json!("out_of_scope"),
            Value::Null,
            Value::Null,
        ),
        json!({
            "event": "round_ended", "run": "r-steps", "session": "s-trace", "at_ms": 0,
            "round": 1, "calls": 3, "duplicates": 0, "progress": true,
        }),
        json!({
            "event": "model_answered", "run": "r-steps", "session": "s-trace", "at_ms": 0,
            "round": 2, "input_tokens": 150, "output_tokens": 10, "calls": 1, "elapsed_ms": 0,
        }),
        call_of(
            2,
            "c4",
            json!("auto"),
            Value::Null,
            Value::Null,
            json!("<digest>"),
        ),
        json!({
            "event": "round_ended", "run": "r-steps", "session": "s-trace", "at_ms": 0,
            "round": 2, "calls": 1, "duplicates": 1, "progress": false,
        }),
        json!({
            "event": "model_answered", "run": "r-steps", "session": "s-trace", "at_ms": 0,
            "round": 3, "input_tokens": 170, "output_tokens": 5, "calls": 0, "elapsed_ms": 0,
        }),
        json!({
            "event": "run_ended", "run": "r-steps", "session": "s-trace", "at_ms": 0,
            "end": "answered", "reason": null, "rounds": 3, "calls": 2, "duplicates": 1,
            "input_tokens": 420, "output_tokens": 35, "elapsed_ms": 0,
        }),
    ];
    assert_eq!(normalized(&events), expected);
    // Each event reads back as itself.
    for event in &events {
        let Ok(line) = serde_json::to_string(event) else {
            panic!("serializes");
        };
        assert_eq!(
            serde_json::from_str::<TraceEvent>(&line).ok().as_ref(),
            Some(event)
        );
    }
}

#[tokio::test]
async fn a_budget_stop_is_traced_before_the_end() {
    let model = model::from_fn(|_messages, _tools| {
        Ok(ModelResponse::calls([call(
            "c",
            "tr_lookup",
            r#"{"order_id":"A-9"}"#,
        )]))
    });
    let trace = Arc::new(MemoryTrace::default());
    let agent = Agent::new(runtime(|builder| builder), model)
        .budget(Budget::default().max_rounds(1))
        .trace(Arc::clone(&trace));
    let report = match agent.run(request("r-stop", "loop")).await {
        Ok(report) => report,
        Err(error) => panic!("the run ends: {error}"),
    };
    assert_eq!(
        report.end,
        RunEnd::Stopped {
            reason: StopReason::MaxRounds
        }
    );
    let events = trace.events();
    let names: Vec<&str> = events.iter().map(TraceEvent::name).collect();
    assert_eq!(
        names,
        [
            "run_started",
            "model_answered",
            "call",
            "round_ended",
            "budget_stopped",
            "run_ended"
        ]
    );
    let tail = normalized(&events[4..]);
    assert_eq!(tail[0]["reason"], "max_rounds");
    assert_eq!(tail[1]["end"], "stopped");
    assert_eq!(tail[1]["reason"], "max_rounds");
    assert_eq!(tail[1]["rounds"], 1);
    assert_eq!(tail[1]["calls"], 1);
}

#[tokio::test]
async fn a_continued_run_traces_only_the_steps_it_takes_now() {
    let store = Arc::new(MemoryRunStore::default());
    let fail = Arc::new(AtomicU32::new(1));
    let failing = Arc::clone(&fail);
    let model = model::from_fn(move |messages: &[Message], _tools| {
        let answered = messages
            .iter()
            .filter(|message| matches!(message, Message::Assistant { .. }))
            .count();
        if answered == 1 && failing.swap(0, Ordering::SeqCst) == 1 {
            return Err(ModelError::new(
                ModelErrorKind::Server,
                "the endpoint failed",
            ));
        }
        match answered {
            0 => Ok(ModelResponse::calls([call(
                "c1",
                "tr_lookup",
                r#"{"order_id":"A-3"}"#,
            )])),
            _ => Ok(ModelResponse::text("A-3 has shipped.")),
        }
    });
    let trace = Arc::new(MemoryTrace::default());
    let agent = Agent::new(runtime(|builder| builder), model)
        .store(Arc::clone(&store))
        .trace(Arc::clone(&trace));
    let failed = agent.run(request("r-again", "where is A-3?")).await;
    assert!(matches!(failed, Err(RunError::Model { .. })), "{failed:?}");
    // A failed run has no end in its trace.
    let first: Vec<&str> = trace
        .events()
        .iter()
        .map(TraceEvent::name)
        .collect::<Vec<_>>()
        .into_iter()
        .collect();
    assert_eq!(
        first,
        ["run_started", "model_answered", "call", "round_ended"]
    );
    trace.clear();

    let report = match agent.run(request("r-again", "where is A-3?")).await {
        Ok(report) => report,
        Err(error) => panic!("the run goes on: {error}"),
    };
    assert!(report.resumed);
    let events = normalized(&trace.events());
    let names: Vec<&str> = events
        .iter()
        .filter_map(|event| event["event"].as_str())
        .collect();
    assert_eq!(names, ["run_started", "model_answered", "run_ended"]);
    assert_eq!(events[0]["resumed"], true);
    assert_eq!(events[1]["round"], 2);
    assert_eq!(events[2]["rounds"], 2);
    assert_eq!(events[2]["calls"], 1);

    // Ended already: answered from its record, nothing done now but the start and the end.
    trace.clear();
    let again = agent.run(request("r-again", "where is A-3?")).await;
    assert!(again.is_ok(), "{again:?}");
    let names: Vec<&'static str> = trace.events().iter().map(TraceEvent::name).collect();
    assert_eq!(names, ["run_started", "run_ended"]);
}

// ---- the JSON lines file -------------------------------------------------------------------

/// A path of its own under the temporary directory, removed first.
fn temp_path(name: &str) -> PathBuf {
    let path =
        std::env::temp_dir().join(format!("tool-runtime-trace-{}-{name}", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

fn looking_up() -> ScriptedModel {
    ScriptedModel::new([
        ModelResponse::calls([call("c1", "tr_lookup", r#"{"order_id":"A-1"}"#)]),
        ModelResponse::text("A-1 has shipped."),
    ])
}

#[tokio::test]
async fn a_jsonl_trace_writes_one_parseable_line_per_event() {
    let path = temp_path("lines.jsonl");
    let trace = match JsonlTrace::create(&path) {
        Ok(trace) => trace,
        Err(error) => panic!("the file is created: {error}"),
    };
    let agent = Agent::new(runtime(|builder| builder), looking_up()).trace(trace);
    let run = agent.run(request("r-file", "where is A-1?")).await;
    assert!(run.is_ok(), "{run:?}");
    let flushed = agent.flush_trace().await;
    assert!(flushed.is_ok(), "{flushed:?}");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    let events: Vec<TraceEvent> = text
        .lines()
        .map(|line| match serde_json::from_str(line) {
            Ok(event) => event,
            Err(error) => panic!("{line}: {error}"),
        })
        .collect();
    let names: Vec<&str> = events.iter().map(TraceEvent::name).collect();
    assert_eq!(
        names,
        [
            "run_started",
            "model_answered",
            "call",
            "round_ended",
            "model_answered",
            "run_ended"
        ]
    );
    // Each line is one object with the common fields first named.
    for line in text.lines() {
        let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(line) else {
            panic!("{line}");
        };
        assert_eq!(
            fields.keys().take(4).collect::<Vec<_>>(),
            ["event", "run", "session", "at_ms"]
        );
    }
    // `append` adds to what is there.
    let appended = match JsonlTrace::append(&path) {
        Ok(trace) => trace,
        Err(error) => panic!("{error}"),
    };
    let agent = Agent::new(runtime(|builder| builder), looking_up()).trace(appended);
    assert!(
        agent
            .run(request("r-file-2", "where is A-1?"))
            .await
            .is_ok()
    );
    assert!(agent.flush_trace().await.is_ok());
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    assert_eq!(text.lines().count(), 6);
}

#[tokio::test]
async fn a_trace_that_cannot_be_written_fails_at_create_or_at_flush() {
    // A directory that does not exist: the file cannot be created, and `create` says so.
    let missing = temp_path("no-such-directory").join("trace.jsonl");
    let created = JsonlTrace::create(&missing);
    assert_eq!(
        created.err().map(|error| error.kind()),
        Some(std::io::ErrorKind::NotFound)
    );

    // A device that refuses every write: the run goes on, and the flush reports the loss.
    let full = std::path::Path::new("/dev/full");
    if !full.exists() {
        return;
    }
    let trace = match JsonlTrace::append(full) {
        Ok(trace) => trace,
        Err(error) => panic!("/dev/full opens: {error}"),
    };
    let agent = Agent::new(runtime(|builder| builder), looking_up()).trace(trace);
    let run = agent.run(request("r-full", "where is A-1?")).await;
    assert_eq!(run.map(|report| report.end).ok(), Some(RunEnd::Answered));
    let flushed = agent.flush_trace().await;
    let Err(error) = flushed else {
        panic!("the flush reports the lines it lost");
    };
    assert!(
        error.to_string().contains("could not be written"),
        "{error}"
    );
    // Reported once: nothing was recorded since.
    assert!(agent.flush_trace().await.is_ok());
}

// ---- sinks that misbehave --------------------------------------------------------------------

/// Panics on every event.
struct Panics;

impl TraceSink for Panics {
    fn record(&self, event: &TraceEvent) {
        panic!("a sink that fails on {}", event.name());
    }
}

#[tokio::test]
async fn a_sink_that_panics_does_not_break_the_run() {
    let agent = Agent::new(runtime(|builder| builder), looking_up()).trace(Panics);
    let report = match agent.run(request("r-panics", "where is A-1?")).await {
        Ok(report) => report,
        Err(error) => panic!("the run ends: {error}"),
    };
    assert_eq!(report.answer(), Some("A-1 has shipped."));
    assert_eq!(report.spent.calls, 1);
}

/// A file nobody reads: a pipe whose reader never reads, so the writer thread is stuck once
/// the pipe is full. The run must not wait for it.
#[cfg(unix)]
#[tokio::test]
async fn a_stuck_trace_file_does_not_stall_the_run() {
    let path = temp_path("stuck.fifo");
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    if !made.is_ok_and(|status| status.success()) {
        return;
    }
    // Opening a pipe waits for its other end: the reader opens on a thread of its own.
    let reader_path = path.clone();
    let reader = std::thread::spawn(move || std::fs::File::open(reader_path));
    let trace = match JsonlTrace::append(&path) {
        Ok(trace) => trace,
        Err(error) => panic!("the pipe opens: {error}"),
    };
    let Ok(Ok(reader)) = reader.join() else {
        panic!("the reader opens");
    };
    // An input over the pipe's capacity (64 KiB on Linux): the first line fills it.
    let input = format!("where is A-1? {}", "x".repeat(256 * 1024));
    let agent = Agent::new(runtime(|builder| builder), looking_up()).trace(trace);
    let run = tokio::time::timeout(
        Duration::from_secs(10),
        agent.run(request("r-stuck", &input)),
    )
    .await;
    let _ = std::fs::remove_file(&path);
    let Ok(Ok(report)) = run else {
        panic!("the run ends without waiting for the trace: {run:?}");
    };
    assert_eq!(report.answer(), Some("A-1 has shipped."));
    // The flush waits for the stuck writer: it has not answered.
    let flushed = tokio::time::timeout(Duration::from_millis(200), agent.flush_trace()).await;
    assert!(flushed.is_err(), "{flushed:?}");
    // The reader goes: the writer's next write fails, and the thread goes on.
    drop(reader);
}

// ---- the run's future -----------------------------------------------------------------------

#[test]
fn a_traced_run_is_send() {
    let agent = Agent::new(runtime(|builder| builder), looking_up())
        .trace(Arc::new(MemoryTrace::default()));
    let run = agent.run(request("r-send", "where is A-1?"));
    assert_send(&run);
    let flush = agent.flush_trace();
    assert_send(&flush);
}

/// A runtime with the summing tool and its lookup, and a model that calls the summary once.
fn summary_run() -> (Runtime<Shop>, ScriptedModel) {
    let runtime = match Runtime::builder(Shop::default())
        .inventory(false)
        .tools(tools![tr_lookup, tr_summary])
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("the runtime builds: {error}"),
    };
    let model = ScriptedModel::new([
        ModelResponse::calls([call("c1", "tr_summary", "{}")]),
        ModelResponse::text("done"),
    ]);
    (runtime, model)
}

#[tokio::test]
async fn the_calls_a_tool_makes_are_in_the_trace_as_nested() {
    let (runtime, model) = summary_run();
    let trace = Arc::new(MemoryTrace::default());
    let agent = Agent::new(runtime, model).trace(Arc::clone(&trace));
    let report = agent
        .run(request("r-nested", "sum up A-1"))
        .await
        .expect("the run ends");
    assert_eq!(report.end, RunEnd::Answered);
    let calls: Vec<Value> = trace
        .events()
        .iter()
        .filter(|event| event.name() == "call")
        .map(|event| serde_json::to_value(event).expect("serializes"))
        .collect();
    // The model's call first, then the two its tool made, in the order they were answered.
    let ids: Vec<(&str, bool)> = calls
        .iter()
        .map(|call| {
            (
                call["call_id"].as_str().unwrap_or_default(),
                call["nested"].as_bool().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("c1", false),
            ("c1/tr_lookup", true),
            ("c1/tr_missing", true)
        ]
    );
    let lookup = &calls[1];
    assert_eq!(lookup["tool"], "tr_lookup");
    assert_eq!(lookup["gate"], "auto");
    assert_eq!(lookup["round"], 1);
    assert_eq!(lookup["attempts"], 1);
    assert!(lookup["error_kind"].is_null(), "{lookup}");
    assert_eq!(
        lookup["arguments_digest"].as_str().map(str::len),
        Some(64),
        "{lookup}"
    );
    let missing = &calls[2];
    assert_eq!(missing["error_kind"], "unknown_tool");
    assert!(missing["gate"].is_null(), "{missing}");
    assert!(missing["arguments_digest"].is_null(), "{missing}");
    assert_eq!(missing["attempts"], 0);
    // The round's own count is the model's calls; the run's counts every call at the gate.
    let ended = trace
        .events()
        .iter()
        .find(|event| event.name() == "round_ended")
        .map(|event| serde_json::to_value(event).expect("serializes"))
        .expect("the round ended");
    assert_eq!(ended["calls"], 1);
    assert_eq!(
        report.spent.calls, 2,
        "the model's call and the lookup reached the gate"
    );
}

#[tokio::test]
async fn an_untraced_run_keeps_no_nested_calls() {
    // Without a sink the meter keeps nothing: the same run, no trace, the same answer.
    let (runtime, model) = summary_run();
    let report = Agent::new(runtime, model)
        .run(request("r-untraced", "sum up A-1"))
        .await
        .expect("the run ends");
    assert_eq!(report.end, RunEnd::Answered);
    assert_eq!(
        report.rounds[0]
            .report
            .as_ref()
            .expect("ran here")
            .observations()[0]
            .content(),
        Some("A-1: shipped; true")
    );
}
