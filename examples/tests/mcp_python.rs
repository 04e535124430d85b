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
#[path = "mcp/session_checks.rs"]
mod session_checks;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use common::{ServerProcess, vendor_python};
use session_checks::{check_narrowed, check_session, facts};

/// Runs the client script with `args` and returns what it observed.
fn client(args: &[&str]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/python_client.py");
    let mut command = Command::new(vendor_python());
    command.arg(script).args(args);
    facts(command, "Python")
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
    check_narrowed(&facts);
}
