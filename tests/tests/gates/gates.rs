//! The gates: scopes, roles, policy, approvals (now and deferred), the refusal breaker and
//! the audit trail, decided before a call runs, for every call.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use serde_json::{Value, json};
use tests::approver::Scripted;
use tests::assert_send;
use tests::decisions::{deferring, keys, signed};
use tests::report::kinds;
use tool_runtime::approvals::{
    Approval, ApprovalRequest, ApprovalStore, Approver, DecisionKeys, MemoryApprovalStore, Preview,
    SignedDecision,
};
use tool_runtime::audit::MemoryAudit;
use tool_runtime::gates::{Action, Compare, Policy};
use tool_runtime::{
    BoxFuture, BuildError, Principal, RunContext, Runtime, Scope, Session, ToolCall, intents, tool,
    tools,
};

/// What the tools did.
#[derive(Default)]
pub struct Desk {
    refunds: AtomicU32,
    tickets: AtomicU32,
    deleted: AtomicU32,
    last_refund: Mutex<Option<f64>>,
    /// The idempotency key each account deletion ran under.
    deletion_keys: Mutex<Vec<Option<String>>>,
}

/// Looks an order up.
#[tool(read_only)]
async fn order_status(
    /// The order id.
    order: String,
) -> String {
    format!("{order}: shipped")
}

/// Opens a support ticket.
#[tool(stateful)]
async fn open_ticket(
    ctx: RunContext<Desk>,
    /// What is wrong.
    summary: String,
) -> String {
    ctx.deps().tickets.fetch_add(1, Ordering::SeqCst);
    format!("ticket: {summary}")
}

/// Refunds an order.
#[tool(stateful, roles = ["billing"])]
async fn refund(
    ctx: RunContext<Desk>,
    /// The order id.
    order: String,
    /// How much.
    amount: f64,
) -> String {
    ctx.deps().refunds.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut last) = ctx.deps().last_refund.lock() {
        *last = Some(amount);
    }
    format!("refunded {amount} on {order}")
}

/// Deletes an account.
#[tool(destructive)]
async fn delete_account(
    ctx: RunContext<Desk>,
    /// The account.
    account: String,
) -> String {
    ctx.deps().deleted.fetch_add(1, Ordering::SeqCst);
    if let Ok(mut keys) = ctx.deps().deletion_keys.lock() {
        keys.push(ctx.idempotency_key().map(str::to_owned));
    }
    format!("deleted {account}")
}

/// Reads an order, then opens a ticket about it (a nested call).
#[tool(stateful)]
async fn complain(
    ctx: RunContext<Desk>,
    /// The order id.
    order: String,
) -> Result<String, tool_runtime::ToolError> {
    let ticket = ctx
        .call_tool(
            "open_ticket",
            json!({ "summary": format!("about {order}") }),
        )
        .await?;
    Ok(ticket.json().to_owned())
}

intents! {
    /// What a support request is about.
    pub enum Intent {
        /// Where an order is.
        Status = "status" => [order_status],
        /// Something went wrong.
        Complaint = "complaint" => [order_status, open_ticket, complain],
        /// Money back.
        Billing = "billing" => [order_status, refund],
    }
}

fn desk_runtime(
    build: impl FnOnce(tool_runtime::RuntimeBuilder<Desk>) -> tool_runtime::RuntimeBuilder<Desk>,
) -> (Runtime<Desk>, Arc<Desk>) {
    let desk = Arc::new(Desk::default());
    let builder = Runtime::builder_shared(Arc::clone(&desk))
        .inventory(false)
        .tools(tools![
            order_status,
            open_ticket,
            refund,
            delete_account,
            complain
        ]);
    match build(builder).build() {
        Ok(runtime) => (runtime, desk),
        Err(error) => panic!("{error}"),
    }
}

fn call(id: &str, tool: &str, arguments: Value) -> ToolCall {
    ToolCall::new(id, tool, arguments)
}

fn billing_session() -> Session {
    Session::new("s-billing").with_principal(Principal::new("ada").with_role("billing"))
}

fn names(runtime: &Runtime<Desk>, session: &Session) -> Vec<String> {
    runtime
        .catalog(session)
        .iter()
        .map(|spec| spec.name().to_owned())
        .collect()
}

// ---- scopes -------------------------------------------------------------------------------

#[tokio::test]
async fn a_tool_outside_the_scope_is_neither_shown_nor_run() {
    let (runtime, desk) = desk_runtime(|builder| builder);
    let session = Session::new("s").with_scope(Intent::Status.scope());
    assert_eq!(names(&runtime, &session), ["order_status", "read_artifact"]);
    let report = runtime
        .execute(
            &session,
            [
                call("1", "open_ticket", json!({ "summary": "late" })),
                call("2", "order_status", json!({ "order": "A1" })),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [Some("out_of_scope"), None]);
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_empty_scope_shows_and_runs_nothing_and_an_unknown_intent_gets_it() {
    let (runtime, _) = desk_runtime(|builder| builder);
    let session = Session::new("s").with_scope(Intent::scope_for(Some("weather")));
    assert!(session.scope().is_empty());
    assert!(runtime.catalog(&session).is_empty());
    let report = runtime
        .execute(
            &session,
            [
                call("1", "order_status", json!({ "order": "A1" })),
                call("2", "read_artifact", json!({ "id": "x" })),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [Some("out_of_scope"), Some("out_of_scope")]);
    assert!(Intent::scope_for(None).is_empty());
    assert_ne!(Scope::all(), Scope::none());
}

#[tokio::test]
async fn suggestions_never_name_a_tool_outside_the_scope() {
    let (runtime, _) = desk_runtime(|builder| builder);
    let session = Session::new("s").with_scope(Intent::Status.scope());
    let report = runtime
        .execute(&session, [call("1", "refun", json!({}))])
        .await;
    let Some(error) = report.observations()[0].error() else {
        panic!("an unknown tool is an error");
    };
    assert_eq!(error.kind().as_str(), "unknown_tool");
    let text = format!(
        "{} {:?} {:?}",
        error.message(),
        error.hint(),
        error.details()
    );
    assert!(!text.contains("refund"), "{text}");
    assert!(text.contains("order_status"), "{text}");
}

#[tokio::test]
async fn nested_calls_are_gated_as_their_session() {
    let (runtime, desk) = desk_runtime(|builder| builder);
    // `complain` is in scope; the ticket it opens is not.
    let session = Session::new("s").with_scope(Scope::of(tools![complain]));
    let report = runtime
        .execute(&session, [call("1", "complain", json!({ "order": "A1" }))])
        .await;
    assert_eq!(kinds(&report), [Some("out_of_scope")]);
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 0);
    let session = Session::new("s").with_scope(Intent::Complaint.scope());
    let report = runtime
        .execute(&session, [call("1", "complain", json!({ "order": "A1" }))])
        .await;
    assert_eq!(kinds(&report), [None]);
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 1);
}

// ---- roles -------------------------------------------------------------------------------

#[tokio::test]
async fn a_missing_role_hides_the_tool_and_refuses_the_call() {
    let (runtime, desk) = desk_runtime(|builder| builder);
    let guest = Session::new("s").with_principal(Principal::new("bob"));
    assert!(!names(&runtime, &guest).contains(&"refund".to_owned()));
    assert!(names(&runtime, &billing_session()).contains(&"refund".to_owned()));
    let report = runtime
        .execute(
            &guest,
            [call("1", "refund", json!({ "order": "A1", "amount": 5 }))],
        )
        .await;
    assert_eq!(kinds(&report), [Some("not_permitted")]);
    assert_eq!(desk.refunds.load(Ordering::SeqCst), 0);
    let report = runtime
        .execute(
            &billing_session(),
            [call("1", "refund", json!({ "order": "A1", "amount": 5 }))],
        )
        .await;
    assert_eq!(kinds(&report), [None]);
}

// ---- policy ------------------------------------------------------------------------------

#[tokio::test]
async fn without_a_policy_destructive_calls_ask_and_without_an_approver_are_denied() {
    let (runtime, desk) = desk_runtime(|builder| builder);
    let report = runtime
        .execute(
            &Session::new("s"),
            [
                call("1", "delete_account", json!({ "account": "a" })),
                call("2", "open_ticket", json!({ "summary": "x" })),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [Some("denied"), None]);
    let message = report.observations()[0]
        .error()
        .map(|error| error.message().to_owned())
        .unwrap_or_default();
    assert!(message.contains("no approver configured"), "{message}");
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn rules_over_arguments_only_make_a_decision_stricter() {
    let policy = Policy::new()
        .rule_field(
            "refund",
            "amount",
            Compare::Gt,
            100,
            Action::Deny,
            "refunds over 100 go through a manager",
        )
        .rule(
            "open_ticket",
            |arguments| {
                arguments["summary"]
                    .as_str()
                    .is_some_and(|text| text.contains("urgent"))
            },
            Action::Auto,
            "a rule cannot relax",
        );
    let (runtime, desk) =
        desk_runtime(|builder| builder.policy(policy.tool("open_ticket", Action::Deny)));
    let report = runtime
        .execute(
            &billing_session(),
            [
                call("1", "refund", json!({ "order": "A1", "amount": 500 })),
                call("2", "refund", json!({ "order": "A1", "amount": 50 })),
                call("3", "open_ticket", json!({ "summary": "urgent" })),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [Some("denied"), None, Some("denied")]);
    let message = report.observations()[0]
        .error()
        .map(|error| error.message().to_owned())
        .unwrap_or_default();
    assert!(
        message.contains("refunds over 100 go through a manager"),
        "{message}"
    );
    assert_eq!(desk.refunds.load(Ordering::SeqCst), 1);
    // A tool the policy denies whatever its arguments is not shown either.
    assert!(!names(&runtime, &billing_session()).contains(&"open_ticket".to_owned()));
}

/// Credits an account; the amount has a default.
#[tool(stateful)]
async fn send_credit(
    ctx: RunContext<Desk>,
    /// The account.
    account: String,
    /// How much.
    #[default = 500]
    amount: u32,
) -> String {
    ctx.deps().refunds.fetch_add(1, Ordering::SeqCst);
    format!("credited {amount} to {account}")
}

#[tokio::test]
async fn rules_read_the_arguments_as_the_tool_does_with_defaults_filled_in() {
    let policy = Policy::new().rule_field(
        "send_credit",
        "amount",
        Compare::Gt,
        100,
        Action::Deny,
        "credits over 100 go through a manager",
    );
    let desk = Arc::new(Desk::default());
    let runtime = match Runtime::builder_shared(Arc::clone(&desk))
        .inventory(false)
        .tools(tools![send_credit])
        .policy(policy)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    // Leaving the amount out means 500: the rule sees 500.
    let report = runtime
        .execute(
            &Session::new("s"),
            [
                call("1", "send_credit", json!({ "account": "a" })),
                call("2", "send_credit", json!({ "account": "a", "amount": 50 })),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [Some("denied"), None]);
    assert_eq!(desk.refunds.load(Ordering::SeqCst), 1);
}

#[test]
fn a_policy_naming_a_tool_that_does_not_exist_is_a_build_error() {
    let built = Runtime::builder(Desk::default())
        .inventory(false)
        .tools(tools![refund])
        .policy(Policy::new().tool("refnud", Action::Auto))
        .build();
    match built {
        Err(BuildError::UnknownTool { tool, nearest, .. }) => {
            assert_eq!(tool, "refnud");
            assert!(nearest.contains("refund"), "{nearest}");
        }
        other => panic!("expected an unknown tool, got {:?}", other.map(|_| ())),
    }
}

// ---- approvals ---------------------------------------------------------------------------

#[tokio::test]
async fn an_approver_approves_edits_and_denies_with_the_preview_shown() {
    let approver = Scripted::new([
        Approval::Approve,
        Approval::ApproveWith(json!({ "order": "A1", "amount": 20 })),
        Approval::ApproveWith(json!({ "order": "A1", "amount": "lots" })),
        Approval::Deny("not today".into()),
    ]);
    let (runtime, desk) = desk_runtime(|builder| {
        builder
            .policy(Policy::new().tool("refund", Action::Ask))
            .approver(approver.clone())
            .preview("refund", |arguments| {
                Preview::new(format!(
                    "refund {} on {}",
                    arguments["amount"], arguments["order"]
                ))
                .with_resource(arguments["order"].as_str().unwrap_or_default())
            })
    });
    let refund_of = |id: &str, amount: u32| {
        call(
            id,
            "refund",
            json!({ "order": "A1", "amount": amount, "note": null })
                .as_object()
                .map(|fields| {
                    let mut fields = fields.clone();
                    fields.remove("note");
                    Value::Object(fields)
                })
                .unwrap_or_default(),
        )
    };
    let report = runtime
        .execute(
            &billing_session(),
            [
                refund_of("1", 10),
                refund_of("2", 30),
                refund_of("3", 40),
                refund_of("4", 50),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [None, None, Some("denied"), Some("denied")]);
    // The edit ran with the edited amount; the invalid edit names its field.
    assert_eq!(desk.refunds.load(Ordering::SeqCst), 2);
    assert_eq!(
        desk.last_refund.lock().ok().and_then(|last| *last),
        Some(20.0)
    );
    let invalid = report.observations()[2]
        .error()
        .map(|error| format!("{} {:?}", error.message(), error.details()))
        .unwrap_or_default();
    assert!(invalid.contains("amount"), "{invalid}");
    assert_eq!(
        report.observations()[3]
            .error()
            .map(|error| error.message().contains("not today")),
        Some(true)
    );
    let asked = approver.asked();
    assert_eq!(asked.len(), 4);
    assert_eq!(
        asked[0]
            .preview
            .as_ref()
            .map(|preview| preview.title.as_str()),
        Some("refund 10 on \"A1\"")
    );
    assert_eq!(asked[0].principal.as_deref(), Some("ada"));
    assert!(asked[0].reason.contains("refund"), "{}", asked[0].reason);
}

/// Posts a message to a webhook (whose URL carries a password).
#[tool(stateful)]
async fn notify(
    ctx: RunContext<Desk>,
    /// The webhook.
    webhook: String,
    /// The message.
    message: String,
) -> String {
    if let Ok(mut keys) = ctx.deps().deletion_keys.lock() {
        keys.push(Some(format!("{webhook} {message}")));
    }
    "sent".to_owned()
}

/// Approves every call with its message changed, starting from the arguments it was shown.
struct EditsTheMessage;

impl Approver for EditsTheMessage {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        let mut edited = request.arguments.clone();
        edited["message"] = json!("edited");
        Box::pin(async move { Approval::ApproveWith(edited) })
    }
}

#[tokio::test]
async fn an_edit_made_from_the_redacted_request_keeps_the_secrets_it_left_alone() {
    let desk = Arc::new(Desk::default());
    let runtime = match Runtime::builder_shared(Arc::clone(&desk))
        .inventory(false)
        .tools(tools![notify])
        .policy(Policy::new().tool("notify", Action::Ask))
        .approver(EditsTheMessage)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let webhook = "https://bot:hunter2@hooks.example/42";
    let report = runtime
        .execute(
            &Session::new("s"),
            [call(
                "1",
                "notify",
                json!({ "webhook": webhook, "message": "hi" }),
            )],
        )
        .await;
    assert_eq!(kinds(&report), [None]);
    // The person saw `https://bot:[REDACTED:url_password]@...` and left it: the call runs with
    // the real URL, and with the message the person wrote.
    let ran = desk.deletion_keys.lock().map(|keys| keys.clone()).ok();
    assert_eq!(ran, Some(vec![Some(format!("{webhook} edited"))]));
}

/// Approves every call with the webhook's path changed inside the redacted URL it was shown.
struct EditsAroundTheSecret;

impl Approver for EditsAroundTheSecret {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Approval> {
        let mut edited = request.arguments.clone();
        let shown = edited["webhook"].as_str().unwrap_or_default().to_owned();
        edited["webhook"] = json!(shown.replace("/42", "/43"));
        Box::pin(async move { Approval::ApproveWith(edited) })
    }
}

#[tokio::test]
async fn an_edit_that_keeps_a_placeholder_inside_a_changed_value_is_denied_naming_it() {
    let desk = Arc::new(Desk::default());
    let runtime = match Runtime::builder_shared(Arc::clone(&desk))
        .inventory(false)
        .tools(tools![notify])
        .policy(Policy::new().tool("notify", Action::Ask))
        .approver(EditsAroundTheSecret)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let report = runtime
        .execute(
            &Session::new("s"),
            [call(
                "1",
                "notify",
                json!({ "webhook": "https://bot:hunter2@hooks.example/42", "message": "hi" }),
            )],
        )
        .await;
    assert_eq!(kinds(&report), [Some("denied")]);
    let message = report.observations()[0]
        .error()
        .map(|error| error.message().to_owned())
        .unwrap_or_default();
    assert!(message.contains("placeholder at `webhook`"), "{message}");
    assert_eq!(
        desk.deletion_keys.lock().map(|keys| keys.len()).ok(),
        Some(0)
    );
}

#[tokio::test]
async fn arguments_are_validated_before_anyone_is_asked() {
    let approver = Scripted::new([Approval::Approve]);
    let (runtime, _) = desk_runtime(|builder| {
        builder
            .policy(Policy::new().tool("refund", Action::Ask))
            .approver(approver.clone())
    });
    let report = runtime
        .execute(
            &billing_session(),
            [call("1", "refund", json!({ "order": "A1" }))],
        )
        .await;
    assert_eq!(kinds(&report), [Some("invalid_arguments")]);
    assert!(approver.asked().is_empty());
}

#[tokio::test]
async fn a_non_interactive_session_turns_ask_into_deny_with_the_reason() {
    let approver = Scripted::new([Approval::Approve]);
    let (runtime, desk) = desk_runtime(|builder| builder.approver(approver.clone()));
    let session = Session::new("batch").non_interactive();
    let report = runtime
        .execute(
            &session,
            [call("1", "delete_account", json!({ "account": "a" }))],
        )
        .await;
    assert_eq!(kinds(&report), [Some("denied")]);
    let message = report.observations()[0]
        .error()
        .map(|error| error.message().to_owned())
        .unwrap_or_default();
    assert!(message.contains("destructive"), "{message}");
    assert!(approver.asked().is_empty());
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn consecutive_denials_stop_asks_and_writes_until_reset() {
    let approver = Scripted::new(
        (0..3)
            .map(|_| Approval::Deny("no".into()))
            .chain([Approval::Approve]),
    );
    let (runtime, desk) = desk_runtime(|builder| builder.approver(approver.clone()));
    let session = Session::new("s");
    let deletes: Vec<ToolCall> = (0..3)
        .map(|i| {
            call(
                &format!("d{i}"),
                "delete_account",
                json!({ "account": "a" }),
            )
        })
        .collect();
    let report = runtime.execute(&session, &deletes).await;
    assert_eq!(kinds(&report), [Some("denied"); 3]);
    let report = runtime
        .execute(
            &session,
            [
                call("r", "order_status", json!({ "order": "A1" })),
                call("w", "open_ticket", json!({ "summary": "x" })),
                call("d", "delete_account", json!({ "account": "a" })),
            ],
        )
        .await;
    assert_eq!(
        kinds(&report),
        [None, Some("too_many_denials"), Some("too_many_denials")]
    );
    assert_eq!(approver.asked().len(), 3);
    // Another session is not affected; a reset lets this one go on.
    let other = runtime
        .execute(
            &Session::new("other"),
            [call("w", "open_ticket", json!({ "summary": "x" }))],
        )
        .await;
    assert_eq!(kinds(&other), [None]);
    runtime.reset_denials(&session);
    let report = runtime
        .execute(
            &session,
            [call("d", "delete_account", json!({ "account": "a" }))],
        )
        .await;
    assert_eq!(kinds(&report), [None]);
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 1);
}

// ---- deferred approvals ------------------------------------------------------------------

fn deferred(store: Arc<MemoryApprovalStore>, keys: DecisionKeys) -> (Runtime<Desk>, Arc<Desk>) {
    desk_runtime(|builder| deferring(builder, store, keys))
}

#[tokio::test]
async fn a_pending_call_resumes_in_another_runtime_once() {
    let store = Arc::new(MemoryApprovalStore::default());
    let keys = keys();
    let (first, _) = deferred(Arc::clone(&store), keys.clone());
    let session = Session::new("s-1").with_principal(Principal::new("ada"));
    let report = first
        .execute(
            &session,
            [call("c1", "delete_account", json!({ "account": "a" }))],
        )
        .await;
    assert_eq!(kinds(&report), [Some("approval_pending")]);
    let request_id = report.observations()[0]
        .error()
        .and_then(|error| error.details())
        .and_then(|details| details["request_id"].as_str())
        .map(str::to_owned);
    let pending = first.pending_approvals(&session).await.unwrap_or_default();
    assert_eq!(pending.len(), 1);
    assert_eq!(Some(&pending[0].request_id), request_id.as_ref());

    // Another process: its own runtime, the same keys and store.
    let (second, desk) = deferred(Arc::clone(&store), keys);
    let decision = signed(&second, &pending[0], Approval::Approve);
    let report = second.resume(&session, [decision.clone()]).await;
    assert_eq!(kinds(&report), [None]);
    assert_eq!(report.observations()[0].call_id(), "c1");
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 1);
    // A replay is refused: the decision was consumed.
    let report = second.resume(&session, [decision]).await;
    assert_eq!(kinds(&report), [Some("invalid_decision")]);
    assert_eq!(report.observations()[0].call_id(), "c1");
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_resumed_call_keeps_the_idempotency_key_its_caller_gave() {
    let store = Arc::new(MemoryApprovalStore::default());
    let keys = keys();
    let (first, _) = deferred(Arc::clone(&store), keys.clone());
    let session = Session::new("s-1");
    let report = first
        .execute(
            &session,
            [call("c1", "delete_account", json!({ "account": "a" }))
                .with_idempotency_key("req-42")],
        )
        .await;
    assert_eq!(kinds(&report), [Some("approval_pending")]);
    let pending = first.pending_approvals(&session).await.unwrap_or_default();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].idempotency_key.as_deref(), Some("req-42"));

    let (second, desk) = deferred(Arc::clone(&store), keys);
    let decision = signed(&second, &pending[0], Approval::Approve);
    let report = second.resume(&session, [decision]).await;
    assert_eq!(kinds(&report), [None]);
    let ran_under = desk.deletion_keys.lock().map(|keys| keys.clone()).ok();
    assert_eq!(ran_under, Some(vec![Some("req-42".to_owned())]));
}

#[tokio::test]
async fn a_persons_approval_by_decision_runs_even_after_denials_stopped_the_session() {
    let store = Arc::new(MemoryApprovalStore::default());
    let keys = keys();
    let (first, _) = deferred(Arc::clone(&store), keys.clone());
    let session = Session::new("s-1");
    let report = first
        .execute(
            &session,
            [call("c1", "delete_account", json!({ "account": "a" }))],
        )
        .await;
    assert_eq!(kinds(&report), [Some("approval_pending")]);
    let pending = first.pending_approvals(&session).await.unwrap_or_default();
    assert_eq!(pending.len(), 1);

    // The resuming instance has denied three asks of the session: the session is stopped.
    let (second, desk) = desk_runtime(|builder| {
        builder
            .approver(Scripted::new((0..3).map(|_| Approval::Deny("no".into()))))
            .approval_store(Arc::clone(&store) as Arc<dyn ApprovalStore>)
            .decision_keys(keys)
    });
    for id in ["d1", "d2", "d3", "d4"] {
        second
            .execute(
                &session,
                [call(id, "delete_account", json!({ "account": id }))],
            )
            .await;
    }
    let stopped = second
        .execute(
            &session,
            [call("d5", "delete_account", json!({ "account": "b" }))],
        )
        .await;
    assert_eq!(kinds(&stopped), [Some("too_many_denials")]);
    // A person's signed approval is an approval like any other: it runs, and the session goes
    // on.
    let decision = signed(&second, &pending[0], Approval::Approve);
    let report = second.resume(&session, [decision]).await;
    assert_eq!(kinds(&report), [None]);
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn forged_foreign_and_mismatched_decisions_are_refused() {
    let store = Arc::new(MemoryApprovalStore::default());
    let keys = keys();
    let (runtime, desk) = deferred(Arc::clone(&store), keys);
    let session = Session::new("s-1").with_principal(Principal::new("ada"));
    runtime
        .execute(
            &session,
            [call("c1", "delete_account", json!({ "account": "a" }))],
        )
        .await;
    let pending = runtime
        .pending_approvals(&session)
        .await
        .unwrap_or_default();
    let Some(pending) = pending.first() else {
        panic!("the call waits");
    };
    let approved = |pending: &tool_runtime::approvals::PendingApproval| {
        signed(&runtime, pending, Approval::Approve)
    };
    // Forged: one character of the signature changed.
    let good = approved(pending);
    let mut forged = good.as_str().to_owned();
    let last = forged
        .pop()
        .map_or('A', |c| if c == 'A' { 'B' } else { 'A' });
    forged.push(last);
    // Signed by someone else's key.
    let (other, _) = deferred(
        Arc::new(MemoryApprovalStore::default()),
        DecisionKeys::new("k1", [9_u8; 32].to_vec()),
    );
    let foreign = signed(&other, pending, Approval::Approve);
    // For other arguments, another session, another principal.
    let mut other_arguments = pending.clone();
    other_arguments.arguments_digest = "0".repeat(64);
    let mut other_session = pending.clone();
    other_session.session = "s-2".into();
    let mut other_principal = pending.clone();
    other_principal.principal = Some("eve".into());
    let report = runtime
        .resume(
            &session,
            [
                SignedDecision::from(forged),
                foreign,
                approved(&other_arguments),
                approved(&other_session),
                approved(&other_principal),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [Some("invalid_decision"); 5]);
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 0);
    // The genuine decision still works, once.
    let report = runtime.resume(&session, [good]).await;
    assert_eq!(kinds(&report), [None]);
}

#[tokio::test]
async fn an_expired_decision_is_refused_and_a_denial_is_answered() {
    let store = Arc::new(MemoryApprovalStore::default());
    let expiring = keys().with_ttl(Duration::ZERO);
    let (runtime, desk) = deferred(Arc::clone(&store), expiring);
    let session = Session::new("s-1");
    runtime
        .execute(
            &session,
            [
                call("c1", "delete_account", json!({ "account": "a" })),
                call("c2", "delete_account", json!({ "account": "b" })),
            ],
        )
        .await;
    let pending = runtime
        .pending_approvals(&session)
        .await
        .unwrap_or_default();
    assert_eq!(pending.len(), 2);
    let expired = signed(&runtime, &pending[0], Approval::Approve);
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let report = runtime.resume(&session, [expired]).await;
    assert_eq!(kinds(&report), [Some("invalid_decision")]);
    let (runtime, _) = deferred(store, keys());
    let denial = signed(&runtime, &pending[1], Approval::Deny("keep it".into()));
    let report = runtime.resume(&session, [denial]).await;
    assert_eq!(kinds(&report), [Some("denied")]);
    assert_eq!(report.observations()[0].call_id(), "c2");
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn without_decision_keys_a_pending_answer_is_a_denial() {
    let (runtime, desk) =
        desk_runtime(|builder| builder.approver(Scripted::new([Approval::Pending])));
    let report = runtime
        .execute(
            &Session::new("s"),
            [call("c1", "delete_account", json!({ "account": "a" }))],
        )
        .await;
    assert_eq!(kinds(&report), [Some("denied")]);
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 0);
}

// ---- audit -------------------------------------------------------------------------------

#[tokio::test]
async fn every_decision_writes_its_line_and_an_unwritable_audit_refuses_writes_only() {
    let audit = Arc::new(MemoryAudit::default());
    let (runtime, _) = desk_runtime(|builder| {
        builder
            .audit(Arc::clone(&audit))
            .approver(Scripted::new([Approval::Deny("no".into())]))
    });
    let session = Session::new("s").with_scope(
        Intent::Complaint
            .scope()
            .union(&Scope::of(tools![delete_account])),
    );
    runtime
        .execute(
            &session,
            [
                call("1", "order_status", json!({ "order": "A1" })),
                call("2", "open_ticket", json!({ "summary": "x" })),
                call("3", "refund", json!({ "order": "A1", "amount": 1 })),
                call("4", "delete_account", json!({ "account": "a" })),
            ],
        )
        .await;
    let lines = audit.lines();
    let decisions: Vec<(&str, &str)> = lines
        .iter()
        .map(|line| {
            (
                line["call_id"].as_str().unwrap_or_default(),
                line["decision"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        decisions,
        [
            ("2", "auto"),
            ("3", "out_of_scope"),
            ("4", "ask"),
            ("4", "deny"),
            ("2", "outcome")
        ],
        "a read under auto writes nothing"
    );
    // The auto line of the write carries its arguments' digest.
    assert!(
        lines[0]["arguments_digest"]
            .as_str()
            .is_some_and(|digest| digest.len() == 64)
    );

    let (runtime, desk) = desk_runtime(|builder| builder.audit(MemoryAudit::failing()));
    let report = runtime
        .execute(
            &Session::new("s"),
            [
                call("1", "order_status", json!({ "order": "A1" })),
                call("2", "open_ticket", json!({ "summary": "x" })),
            ],
        )
        .await;
    assert_eq!(kinds(&report), [None, Some("audit_unavailable")]);
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 0);
}

// ---- exposure equals enforcement ---------------------------------------------------------

const TOOLS: [&str; 5] = [
    "order_status",
    "open_ticket",
    "refund",
    "delete_account",
    "complain",
];

fn arguments_for(tool: &str) -> Value {
    match tool {
        "order_status" => json!({ "order": "A1" }),
        "open_ticket" => json!({ "summary": "x" }),
        "refund" => json!({ "order": "A1", "amount": 1 }),
        "delete_account" => json!({ "account": "a" }),
        _ => json!({ "order": "A1" }),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// A call passes the gates exactly when its tool is in the catalog given to its session.
    #[test]
    fn a_call_passes_the_gates_exactly_when_its_tool_is_shown(
        in_scope in proptest::collection::vec(any::<bool>(), 5),
        everything in any::<bool>(),
        billing in any::<bool>(),
        denied in proptest::collection::vec(any::<bool>(), 5),
    ) {
        let scope = if everything {
            Scope::all()
        } else {
            Scope::named(TOOLS.iter().zip(&in_scope).filter(|(_, keep)| **keep).map(|(name, _)| *name))
        };
        let mut principal = Principal::new("p");
        if billing {
            principal = principal.with_role("billing");
        }
        let policy = TOOLS.iter().zip(&denied).fold(Policy::new().default_for(tool_runtime::RiskLevel::Destructive, Action::Auto), |policy, (name, deny)| {
            if *deny { policy.tool(*name, Action::Deny) } else { policy }
        });
        let (runtime, _) = desk_runtime(|builder| builder.policy(policy));
        let session = Session::new("p").with_scope(scope).with_principal(principal);
        let shown = names(&runtime, &session);
        let calls: Vec<ToolCall> = TOOLS[..4].iter().map(|name| call(name, name, arguments_for(name))).collect();
        let executor = tokio::runtime::Builder::new_current_thread().enable_all().build();
        let Ok(executor) = executor else { return Err(TestCaseError::fail("no executor")) };
        let report = executor.block_on(runtime.execute(&session, &calls));
        for observation in report.observations() {
            let passed = !matches!(observation.error_kind(), Some("out_of_scope" | "not_permitted" | "denied"));
            prop_assert_eq!(passed, shown.contains(&observation.tool().to_owned()), "{}: {:?}", observation.tool(), observation.error_kind());
        }
    }
}

#[tokio::test]
async fn resume_futures_are_send_and_can_be_spawned() {
    let store = Arc::new(MemoryApprovalStore::default());
    let (runtime, desk) = deferred(store, keys());
    let session = Session::new("s-1");
    let decisions: Vec<SignedDecision> = Vec::new();
    assert_send(&runtime.resume(&session, &decisions));
    runtime
        .execute(
            &session,
            [call("c1", "delete_account", json!({ "account": "a" }))],
        )
        .await;
    let pending = runtime
        .pending_approvals(&session)
        .await
        .unwrap_or_default();
    let decisions: Vec<SignedDecision> = pending
        .iter()
        .filter_map(|pending| runtime.sign_decision(pending, Approval::Approve).ok())
        .collect();
    let spawned = tokio::spawn({
        let runtime = runtime.clone();
        async move { runtime.resume(&session, decisions).await }
    });
    let report = match spawned.await {
        Ok(report) => report,
        Err(error) => panic!("{error}"),
    };
    assert_eq!(kinds(&report), [None]);
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_call_the_policy_denies_by_the_time_it_resumes_stays_denied() {
    let store = Arc::new(MemoryApprovalStore::default());
    let keys = keys();
    let (first, _) = deferred(Arc::clone(&store), keys.clone());
    let session = Session::new("s-1");
    first
        .execute(
            &session,
            [call("c1", "delete_account", json!({ "account": "a" }))],
        )
        .await;
    let pending = first.pending_approvals(&session).await.unwrap_or_default();
    let Some(decision) = pending
        .first()
        .and_then(|pending| first.sign_decision(pending, Approval::Approve).ok())
    else {
        panic!("a decision");
    };
    // The policy changed before the decision came back: a deny is final.
    let (second, desk) = desk_runtime(|builder| {
        builder
            .approval_store(store as Arc<dyn ApprovalStore>)
            .decision_keys(keys)
            .policy(Policy::new().tool("delete_account", Action::Deny))
    });
    let report = second.resume(&session, [decision]).await;
    assert_eq!(kinds(&report), [Some("denied")]);
    assert_eq!(desk.deleted.load(Ordering::SeqCst), 0);
}

#[test]
fn a_policy_file_naming_a_tool_that_does_not_exist_is_refused_with_its_line() {
    let text = "[defaults]\ndestructive = \"ask\"\n\n[tools.refund]\naction = \"ask\"\n\n[tools.delete_acount]\naction = \"auto\"\n";
    let policy = match Policy::from_toml_str(text) {
        Ok(policy) => policy,
        Err(error) => panic!("{error}"),
    };
    let built = Runtime::builder(Desk::default())
        .inventory(false)
        .tools(tools![refund, delete_account])
        .policy(policy)
        .build();
    match built {
        Err(error @ BuildError::UnknownTool { .. }) => {
            let message = error.to_string();
            assert!(message.contains("line 7"), "{message}");
            assert!(message.contains("delete_acount"), "{message}");
            assert!(
                message.contains("did you mean `delete_account`"),
                "{message}"
            );
        }
        other => panic!("expected an unknown tool, got {:?}", other.map(|_| ())),
    }
    let typo = Policy::from_toml_str("[tools.refund]\nacton = \"auto\"\n");
    match typo {
        Err(error) => assert_eq!(error.line, Some(2), "{error}"),
        Ok(_) => panic!("a field the format does not know is an error"),
    }
}

#[tokio::test]
async fn denials_without_an_approver_stop_the_rest_of_their_turn_too() {
    for non_interactive in [false, true] {
        let (runtime, desk) = desk_runtime(|builder| builder);
        let session = if non_interactive {
            Session::new("s").non_interactive()
        } else {
            Session::new("s")
        };
        let calls: Vec<ToolCall> = (0..5)
            .map(|i| {
                call(
                    &format!("d{i}"),
                    "delete_account",
                    json!({ "account": "a" }),
                )
            })
            .collect();
        let report = runtime.execute(&session, &calls).await;
        assert_eq!(
            kinds(&report),
            [
                Some("denied"),
                Some("denied"),
                Some("denied"),
                Some("too_many_denials"),
                Some("too_many_denials"),
            ],
            "non-interactive: {non_interactive}"
        );
        assert_eq!(desk.deleted.load(Ordering::SeqCst), 0);
    }
}

#[tokio::test]
async fn denials_in_one_turn_stop_the_rest_of_that_turn() {
    let approver = Arc::new(Scripted::new((0..5).map(|_| Approval::Deny("no".into()))));
    let (runtime, desk) = desk_runtime(|builder| builder.approver(Arc::clone(&approver)));
    let mut calls: Vec<ToolCall> = (0..5)
        .map(|i| {
            call(
                &format!("d{i}"),
                "delete_account",
                json!({ "account": "a" }),
            )
        })
        .collect();
    calls.push(call("w", "open_ticket", json!({ "summary": "x" })));
    calls.push(call("r", "order_status", json!({ "order": "A1" })));
    let report = runtime.execute(&Session::new("s"), &calls).await;
    assert_eq!(
        kinds(&report),
        [
            Some("denied"),
            Some("denied"),
            Some("denied"),
            Some("too_many_denials"),
            Some("too_many_denials"),
            Some("too_many_denials"),
            None
        ]
    );
    assert_eq!(approver.asked().len(), 3);
    assert_eq!(desk.tickets.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn the_preview_sees_the_arguments_redacted_as_the_approver_does() {
    let approver = Scripted::new([Approval::Deny("no".into())]);
    let (runtime, _) = desk_runtime(|builder| {
        builder
            .approver(approver.clone())
            .preview("delete_account", |arguments| {
                Preview::new(format!("delete {}", arguments["account"]))
            })
    });
    let secret = "sk-proj-abcdefghijklmnopqrstuvwx1234";
    runtime
        .execute(
            &Session::new("s"),
            [call("1", "delete_account", json!({ "account": secret }))],
        )
        .await;
    let asked = approver.asked();
    let shown = format!("{:?} {}", asked[0].preview, asked[0].arguments);
    assert!(!shown.contains(secret), "{shown}");
    assert!(shown.contains("REDACTED"), "{shown}");
}

#[tokio::test]
async fn a_refused_decision_is_audited_under_the_call_it_names() {
    let store = Arc::new(MemoryApprovalStore::default());
    let audit = Arc::new(MemoryAudit::default());
    let keys = keys();
    let (runtime, _) = desk_runtime(|builder| {
        builder
            .approver(Scripted::new([Approval::Pending]))
            .approval_store(store as Arc<dyn ApprovalStore>)
            .decision_keys(keys)
            .audit(Arc::clone(&audit))
    });
    let session = Session::new("s-1");
    runtime
        .execute(
            &session,
            [call("c1", "delete_account", json!({ "account": "a" }))],
        )
        .await;
    let pending = runtime
        .pending_approvals(&session)
        .await
        .unwrap_or_default();
    let Some(decision) = pending
        .first()
        .and_then(|pending| runtime.sign_decision(pending, Approval::Approve).ok())
    else {
        panic!("a decision");
    };
    runtime.resume(&session, [decision.clone()]).await;
    let replay = runtime.resume(&session, [decision]).await;
    assert_eq!(kinds(&replay), [Some("invalid_decision")]);
    assert_eq!(replay.observations()[0].tool(), "delete_account");
    let lines = audit.lines();
    let Some(last) = lines.last() else {
        panic!("audit lines");
    };
    assert_eq!(last["decision"], "resume");
    assert_eq!(last["call_id"], "c1");
    assert!(
        last["reason"]
            .as_str()
            .is_some_and(|reason| reason.contains("used already")),
        "{last}"
    );
}
