//! The support desk served over MCP, as the official MCP TypeScript SDK's client
//! (`@modelcontextprotocol/sdk`) uses it, over stdio and Streamable HTTP: the session the
//! Python SDK's test runs (`mcp_python.rs`, judged by the same checks), and what this client
//! sees besides: its JSON Schema validator reads every `outputSchema` without a warning, and
//! a cancelled call is not answered late.
//!
//! The client script is `tests/clients/ts_client.mjs`; it runs on node 22 (`MCP_NODE`) with
//! the SDK pinned in `tests/mcp-clients/package.json` (`MCP_CLIENTS`), both set by
//! `bash .ci/test.sh`.

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/session_checks.rs"]
mod session_checks;

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

use common::{ServerProcess, clients, node_command};
use session_checks::{check_narrowed, check_session, facts};

/// Runs the client script with `args` and returns what it observed.
fn client(args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/ts_client.mjs");
    let mut command = node_command(&script);
    command.args(args).env("MCP_CLIENTS", clients());
    facts(command, "TypeScript")
}

/// What this client sees beside the shared session.
fn check_typescript(facts: &Value) {
    // The aborted call was rejected at once, and the server sent nothing more for it: a late
    // progress report or answer is reported by the SDK as for an unknown request.
    let cancelled = &facts["cancelled"];
    assert!(
        cancelled["outcome"]
            .as_str()
            .is_some_and(|outcome| outcome.starts_with("rejected")),
        "{cancelled}"
    );
    assert_eq!(cancelled["late_messages"], json!([]), "{cancelled}");
    assert_eq!(facts["errors"], json!([]), "the SDK saw protocol errors");
}

/// The SDK compiles each `outputSchema` with Ajv, which warns on the console of what it cannot
/// read (an unknown `format`, say) and then does not check it: the desk's schemas give it
/// nothing to warn about.
fn check_schemas_read(facts: &Value) {
    assert_eq!(
        facts["warnings"],
        json!([]),
        "the SDK warned about the desk's output schemas"
    );
}

#[test]
fn the_typescript_sdk_uses_the_desk_over_stdio() {
    let facts = client(&["stdio", env!("CARGO_BIN_EXE_support_desk")]);
    check_session(&facts);
    check_typescript(&facts);
    // One stream: a tool's log comes before its call's result.
    assert_eq!(facts["progress"]["log_before_result"], true);
    check_schemas_read(&facts);
}

#[test]
fn the_typescript_sdk_uses_the_desk_over_http() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_support_desk"));
    command.args(["--mcp-http", "127.0.0.1:0", "--page-size", "4"]);
    let server = ServerProcess::start(command);
    let facts = client(&["http", server.url()]);
    check_session(&facts);
    check_typescript(&facts);
    // A session whose scope narrows is told its tool list changed.
    check_narrowed(&facts);
    check_schemas_read(&facts);
}
