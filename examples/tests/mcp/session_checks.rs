//! How the SDK client tests judge a session: each client script (`tests/clients/`) runs the
//! same calls against the support desk and prints what it observed as one JSON object; these
//! checks hold for every client. A test file includes it with
//! `#[path = "mcp/session_checks.rs"] mod session_checks;` next to `common`.
//!
//! Numbers are compared as numbers: one client prints progress `0.0`, another `0`.

use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::common::run_with_timeout;

/// How long one client session may take.
pub(crate) const CLIENT_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs a client script (`command`, named `client` in failures) and returns what it observed.
pub(crate) fn facts(command: Command, client: &str) -> Value {
    let finished = run_with_timeout(command, CLIENT_TIMEOUT);
    assert!(
        !finished.timed_out() && finished.status.is_some_and(|status| status.success()),
        "the {client} client failed ({:?}):\n{}",
        finished.status,
        finished.stderr
    );
    match serde_json::from_str(&finished.stdout) {
        Ok(facts) => facts,
        Err(error) => panic!(
            "the {client} client printed no JSON ({error}):\n{}\nstderr:\n{}",
            finished.stdout, finished.stderr
        ),
    }
}

/// The error kind of an `isError` result's text.
pub(crate) fn error_kind(result: &Value) -> String {
    assert_eq!(result["is_error"], true, "not an error: {result}");
    let text = result["texts"][0].as_str().unwrap_or_default();
    let error: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    error["error"]["kind"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// A progress update `[progress, total, message]` with its numbers as `f64`.
fn update(value: &Value) -> (Option<f64>, Option<f64>, Value) {
    (value[0].as_f64(), value[1].as_f64(), value[2].clone())
}

/// What every client on every transport must show.
pub(crate) fn check_session(facts: &Value) {
    assert_eq!(facts["server"], "support-desk");
    // Four tools a page, sorted, every tool once; the last page has no cursor.
    let pages = facts["pages"].as_array().cloned().unwrap_or_default();
    assert_eq!(pages.len(), 3, "{pages:?}");
    assert!(
        pages
            .iter()
            .all(|page| page.as_array().is_some_and(|page| page.len() <= 4))
    );
    let names: Vec<&str> = pages
        .iter()
        .flat_map(|page| page.as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(names, sorted, "pages are sorted and disjoint");
    assert!(names.contains(&"cancel_order") && names.contains(&"search_orders"));
    assert!(
        !names.contains(&"issue_refund"),
        "billing's tool is out of this scope"
    );
    assert_eq!(
        facts["cancel_order_annotations"],
        json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": false})
    );

    assert_eq!(facts["status"]["is_error"], false);
    assert_eq!(facts["status"]["structured"]["status"], "cancelled");
    assert_eq!(
        facts["status"]["texts"][0]
            .as_str()
            .map(serde_json::from_str::<Value>)
            .and_then(Result::ok),
        Some(facts["status"]["structured"].clone()),
        "the text mirrors structuredContent"
    );
    assert_eq!(error_kind(&facts["invalid_arguments"]), "invalid_arguments");
    assert_eq!(error_kind(&facts["out_of_scope"]), "out_of_scope");
    assert_eq!(facts["unknown_tool"]["code"], -32602);
    assert!(
        facts["unknown_tool"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no_such_tool"))
    );

    let updates = facts["progress"]["updates"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(facts["progress"]["result"]["texts"][0], "label for A-1008");
    assert_eq!(updates.len(), 5, "{updates:?}");
    assert_eq!(
        update(&updates[0]),
        (Some(0.0), Some(4.0), json!("waiting for the carrier")),
        "{updates:?}"
    );
    assert_eq!(update(&updates[4]).0, Some(4.0), "{updates:?}");

    // The cancelled call stopped: its tool never got to log its end.
    let cancelled = &facts["cancelled"];
    assert_eq!(cancelled["reports_at_cancel"], 1);
    assert_eq!(cancelled["reports_after_cancel"], 0);
    assert_eq!(
        cancelled["logs_after_cancel"],
        json!([]),
        "the tool ran on after the cancel"
    );
    assert_eq!(cancelled["next_call"]["is_error"], false);
    // The label that finished logged its end.
    assert!(
        facts["logs"].as_array().is_some_and(|logs| logs
            .iter()
            .any(|log| log["data"] == "the carrier sent the label for A-1008")),
        "{}",
        facts["logs"]
    );

    // Asks, answered through elicitation: approved (and run), approved (and failing), denied.
    assert_eq!(facts["approved"]["texts"][0], "cancelled A-1000");
    assert_eq!(
        error_kind(&facts["approved_but_failed"]),
        "execution_failed"
    );
    assert_eq!(error_kind(&facts["denied"]), "denied");
    assert!(
        facts["denied"]["texts"][0]
            .as_str()
            .is_some_and(|text| text.contains("not during the night"))
    );
    let asked = facts["elicitations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(asked.len(), 3, "{asked:?}");
    let first = asked[0]["message"].as_str().unwrap_or_default();
    assert!(first.contains("a cancellation cannot be undone"), "{first}");
    assert!(
        first.contains("cancel order A-1000"),
        "the preview is shown: {first}"
    );
    assert_eq!(
        asked[0]["schema"]["properties"]["decision"]["enum"],
        json!(["approve", "deny", "edit"])
    );

    // The same ticket twice is one ticket; another is the next one.
    assert_eq!(facts["ticket_first"]["structured"]["id"], "T-1");
    assert_eq!(facts["ticket_again"], facts["ticket_first"]);
    assert_eq!(facts["ticket_other"]["structured"]["id"], "T-2");
}

/// What an HTTP session whose scope narrowed (`x-support-intent: order_status`) must show: the
/// narrower list, and `notifications/tools/list_changed`.
pub(crate) fn check_narrowed(facts: &Value) {
    let narrowed = facts["narrowed"].as_array().cloned().unwrap_or_default();
    assert!(
        narrowed.contains(&json!("fetch_shipping_label")),
        "{narrowed:?}"
    );
    assert!(!narrowed.contains(&json!("cancel_order")), "{narrowed:?}");
    assert!(
        facts["notifications"]
            .as_array()
            .is_some_and(|seen| seen.contains(&json!("notifications/tools/list_changed"))),
        "{}",
        facts["notifications"]
    );
}
