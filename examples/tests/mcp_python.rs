//! The support desk served over MCP, as the official MCP Python SDK's client uses it, over stdio
//! and Streamable HTTP: a paginated list, results and `isError` results, a refused call, an
//! unknown tool, progress, a cancelled call, approvals answered through elicitation, a write
//! repeated and answered once, and (HTTP) the tool list changing with the session's scope.
//!
//! The client script is `tests/clients/python_client.py`; it runs on the Python that
//! `VENDOR_PYTHON` names (the virtual environment `.ci/test.sh` makes, with the `mcp` package
//! pinned in `tests/vendor/requirements.txt`).

#[path = "mcp/common.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use common::{ServerProcess, run_with_timeout};

/// The Python with the MCP SDK; a relative path is read from the workspace root.
fn vendor_python() -> PathBuf {
    let Some(python) = std::env::var_os("VENDOR_PYTHON") else {
        panic!(
            "VENDOR_PYTHON is not set: run `bash .ci/test.sh`, which installs the MCP Python SDK \
             into target/vendor-venv and sets it, or set it to that environment's python"
        );
    };
    let python = PathBuf::from(python);
    if python.is_absolute() {
        python
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(python)
    }
}

/// Runs the client script with `args` and returns what it observed.
fn client(args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/python_client.py");
    let mut command = Command::new(vendor_python());
    command.arg(script).args(args);
    let finished = run_with_timeout(command, Duration::from_secs(120));
    assert!(
        !finished.timed_out() && finished.status.is_some_and(|status| status.success()),
        "the Python client failed ({:?}):\n{}",
        finished.status,
        finished.stderr
    );
    match serde_json::from_str(&finished.stdout) {
        Ok(facts) => facts,
        Err(error) => panic!(
            "the Python client printed no JSON ({error}):\n{}\nstderr:\n{}",
            finished.stdout, finished.stderr
        ),
    }
}

/// The error kind of an `isError` result's text.
fn error_kind(result: &Value) -> String {
    assert_eq!(result["is_error"], true, "not an error: {result}");
    let text = result["texts"][0].as_str().unwrap_or_default();
    let error: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    error["error"]["kind"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// What both transports must show.
fn check_session(facts: &Value) {
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
    assert_eq!(updates[0], json!([0.0, 4.0, "waiting for the carrier"]));
    assert_eq!(updates[4][0], 4.0);

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

#[test]
fn the_python_sdk_uses_the_desk_over_stdio() {
    let facts = client(&["stdio", env!("CARGO_BIN_EXE_support_desk")]);
    check_session(&facts);
}

#[test]
fn the_python_sdk_uses_the_desk_over_http() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_support_desk"));
    command.args(["--mcp-http", "127.0.0.1:0", "--page-size", "4"]);
    let server = ServerProcess::start(command);
    let facts = client(&["http", server.url()]);
    check_session(&facts);
    // A session whose scope narrows is told its tool list changed.
    let narrowed = facts["narrowed"].as_array().cloned().unwrap_or_default();
    assert!(narrowed.contains(&json!("fetch_shipping_label")));
    assert!(!narrowed.contains(&json!("cancel_order")), "{narrowed:?}");
    assert!(
        facts["notifications"]
            .as_array()
            .is_some_and(|seen| seen.contains(&json!("notifications/tools/list_changed"))),
        "{}",
        facts["notifications"]
    );
}
