//! One call, one arguments value: `""`, `"null"`, `null` and `{}` are the same call for the tool,
//! validation, the policy's rules, the idempotency key and the audit trail; an argument left
//! out is its default for all of them; a number is read one way by all of them.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tool_runtime::audit::MemoryAudit;
use tool_runtime::gates::{Action, Compare, Policy};
use tool_runtime::{Arguments, Runtime, Session, ToolCall, ToolError, tool, tools};

/// Counts what ran.
#[derive(Default)]
pub struct Desk {
    opened: AtomicUsize,
}

/// Opens a ticket.
#[tool]
async fn open_ticket(
    ctx: tool_runtime::RunContext<Desk>,
    /// How urgent.
    #[default = 3]
    priority: u32,
) -> Result<String, ToolError> {
    ctx.deps().opened.fetch_add(1, Ordering::SeqCst);
    Ok(format!("opened at priority {priority}"))
}

/// Lists tickets.
#[tool(read_only)]
async fn list_tickets(
    /// How many.
    #[default = 10]
    limit: u32,
) -> String {
    format!("{limit} tickets")
}

fn runtime(policy: Policy, audit: Option<Arc<MemoryAudit>>) -> Runtime<Desk> {
    let mut builder = Runtime::builder(Desk::default())
        .inventory(false)
        .tools(tools![open_ticket, list_tickets])
        .policy(policy);
    if let Some(audit) = audit {
        builder = builder.audit(audit);
    }
    builder.build().expect("builds")
}

const NO_ARGUMENTS: [&str; 4] = ["", "null", "{}", "  "];

fn kind_or_content(report: &tool_runtime::TurnReport) -> Vec<String> {
    report
        .observations()
        .iter()
        .map(|observation| match observation.error_kind() {
            Some(kind) => kind.to_owned(),
            None => observation.content().unwrap_or_default().to_owned(),
        })
        .collect()
}

#[tokio::test]
async fn a_rule_over_a_defaulted_field_sees_the_default_however_no_arguments_are_written() {
    let policy = Policy::new().rule_field(
        "list_tickets",
        "limit",
        Compare::Eq,
        10,
        Action::Deny,
        "the default page is closed",
    );
    let runtime = runtime(policy, None);
    let mut calls: Vec<ToolCall> = NO_ARGUMENTS
        .iter()
        .enumerate()
        .map(|(n, text)| ToolCall::new(format!("c{n}"), "list_tickets", *text))
        .collect();
    calls.push(ToolCall::new("v-null", "list_tickets", Value::Null));
    calls.push(ToolCall::new("v-empty", "list_tickets", json!({})));
    calls.push(ToolCall::new("v-five", "list_tickets", json!({"limit": 5})));
    let report = runtime.execute(&Session::new("s"), &calls).await;
    assert_eq!(
        kind_or_content(&report),
        [
            "denied",
            "denied",
            "denied",
            "denied",
            "denied",
            "denied",
            "5 tickets"
        ]
    );
}

#[tokio::test]
async fn no_arguments_however_written_are_one_write_for_the_idempotency_layer() {
    let runtime = runtime(Policy::new(), None);
    let session = Session::new("s");
    for (n, text) in NO_ARGUMENTS.iter().enumerate() {
        let report = runtime
            .execute(
                &session,
                [ToolCall::new(format!("c{n}"), "open_ticket", *text)],
            )
            .await;
        assert_eq!(
            kind_or_content(&report),
            ["opened at priority 3"],
            "{text:?}"
        );
        assert_eq!(report.observations()[0].replayed(), n > 0, "{text:?}");
    }
    // Written out, the default is the same call too.
    let report = runtime
        .execute(
            &session,
            [ToolCall::new(
                "c-explicit",
                "open_ticket",
                r#"{"priority": 3}"#,
            )],
        )
        .await;
    assert!(report.observations()[0].replayed());
    let report = runtime
        .execute(
            &session,
            [ToolCall::new("c-null", "open_ticket", Value::Null)],
        )
        .await;
    assert!(report.observations()[0].replayed());
    assert_eq!(runtime.deps().opened.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_integer_written_as_a_float_is_one_call_for_every_stage() {
    let policy = Policy::new().rule_field(
        "open_ticket",
        "priority",
        Compare::Eq,
        5,
        Action::Deny,
        "priority 5 is reserved",
    );
    let runtime = runtime(policy, None);
    let session = Session::new("s");
    let calls = [
        ToolCall::new("text", "open_ticket", r#"{"priority": 5.0}"#),
        ToolCall::new("value", "open_ticket", json!({"priority": 5.0})),
        ToolCall::new("four", "open_ticket", json!({"priority": 4.0})),
        ToolCall::new("four-text", "open_ticket", r#"{"priority": 4e0}"#),
    ];
    let report = runtime.execute(&session, &calls).await;
    assert_eq!(
        kind_or_content(&report),
        [
            "denied",
            "denied",
            "opened at priority 4",
            "opened at priority 4"
        ]
    );
    // The two fours are one write.
    assert!(report.observations()[3].replayed());
    assert_eq!(runtime.deps().opened.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn the_audit_digest_of_a_write_is_the_same_however_no_arguments_are_written() {
    let audit = Arc::new(MemoryAudit::new());
    let runtime = runtime(Policy::new(), Some(Arc::clone(&audit)));
    let session = Session::new("s");
    let calls: Vec<ToolCall> = NO_ARGUMENTS
        .iter()
        .enumerate()
        .map(|(n, text)| ToolCall::new(format!("c{n}"), "open_ticket", *text))
        .chain([
            ToolCall::new("explicit", "open_ticket", json!({"priority": 3})),
            ToolCall::new("value-null", "open_ticket", Arguments::Value(Value::Null)),
        ])
        .collect();
    runtime.execute(&session, &calls).await;
    runtime.flush_audit().await.expect("flushed");
    let digests: Vec<String> = audit
        .lines()
        .iter()
        .filter(|line| line["decision"] == "auto")
        .map(|line| {
            line["arguments_digest"]
                .as_str()
                .expect("a write's line has a digest")
                .to_owned()
        })
        .collect();
    assert_eq!(digests.len(), calls.len());
    assert!(
        digests.iter().all(|digest| *digest == digests[0]),
        "{digests:?}"
    );
}
