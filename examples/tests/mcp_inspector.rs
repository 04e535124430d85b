//! The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`, pinned in
//! `tests/mcp-clients/package.json`) lists the tools of the support desk over stdio and
//! Streamable HTTP, and of the `mcp_conformance` program, with `--strict`: its schema
//! portability check must find nothing (no error and no warning), it must exit 0, and the
//! list must be the server's.
//!
//! Node 22 and the Inspector come from `bash .ci/test.sh` (`MCP_NODE`, `MCP_CLIENTS`). The
//! Inspector keeps its catalog and secrets under `~/.mcp-inspector`, so each run gets a
//! scratch `HOME`.

#[path = "mcp/common.rs"]
mod common;

use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use common::{ScratchDir, ServerProcess, client_file, node_command, run_with_timeout, strip_ansi};

/// The Inspector's command-line entry point inside `MCP_CLIENTS`.
const INSPECTOR: &str = "@modelcontextprotocol/inspector/clients/launcher/build/index.js";

/// The longest one listing may take (it starts node, and a stdio server, first).
const INSPECTOR_TIMEOUT: Duration = Duration::from_secs(90);

/// The desk's tools in the scope a session gets without headers (the complaint intent).
const DESK_TOOLS: [&str; 9] = [
    "cancel_order",
    "create_ticket",
    "escalate_to_human",
    "export_order_history",
    "fetch_shipping_label",
    "get_order_status",
    "read_artifact",
    "search_knowledge_base",
    "search_orders",
];

/// Runs `inspector --cli --strict --method tools/list <target...>` and returns the names of
/// the tools it listed, after checking that it exited 0 and reported nothing on stderr
/// (`--strict` prints each portability finding there, warnings included).
fn strict_tool_list(name: &str, target: &[&str]) -> Vec<String> {
    let home = ScratchDir::new(name);
    let mut command = node_command(&client_file(INSPECTOR));
    command
        .args(["--cli", "--strict", "--method", "tools/list"])
        .args(target)
        .env("HOME", home.path())
        .current_dir(home.path());
    let finished = run_with_timeout(command, INSPECTOR_TIMEOUT);
    let stderr = strip_ansi(&finished.stderr);
    assert!(
        !finished.timed_out() && finished.status.is_some_and(|status| status.success()),
        "the Inspector failed ({:?}, after {:?}) listing {target:?}:\n{stderr}\nstdout:\n{}",
        finished.status,
        finished.elapsed,
        finished.stdout
    );
    assert!(
        stderr.trim().is_empty(),
        "the Inspector reported findings about {target:?}:\n{stderr}"
    );
    let listed: Value = match serde_json::from_str(&finished.stdout) {
        Ok(listed) => listed,
        Err(error) => panic!(
            "the Inspector printed no JSON for {target:?} ({error}):\n{}",
            finished.stdout
        ),
    };
    let Some(tools) = listed["tools"].as_array() else {
        panic!("the Inspector's answer has no tools: {listed}");
    };
    tools
        .iter()
        .map(|tool| tool["name"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn the_inspector_finds_nothing_to_report_on_the_desk_over_stdio() {
    let tools = strict_tool_list(
        "inspector-stdio",
        &[env!("CARGO_BIN_EXE_support_desk"), "--mcp"],
    );
    assert_eq!(tools, DESK_TOOLS);
}

#[test]
fn the_inspector_finds_nothing_to_report_on_the_desk_over_http() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_support_desk"));
    command.args(["--mcp-http", "127.0.0.1:0"]);
    let server = ServerProcess::start(command);
    let tools = strict_tool_list("inspector-http", &[server.url()]);
    assert_eq!(tools, DESK_TOOLS, "{}", server.log());
}

#[test]
fn the_inspector_finds_nothing_to_report_on_the_conformance_server() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp_conformance"));
    command.args(["--http", "127.0.0.1:0"]);
    let server = ServerProcess::start(command);
    let tools = strict_tool_list("inspector-conformance", &[server.url()]);
    // The tools the conformance suite's server scenarios call, each once, sorted.
    for tool in [
        "json_schema_2020_12_tool",
        "test_elicitation",
        "test_error_handling",
        "test_image_content",
        "test_sampling",
        "test_simple_text",
        "test_tool_with_logging",
        "test_tool_with_progress",
    ] {
        assert!(tools.iter().any(|name| name == tool), "{tool}: {tools:?}");
    }
    let mut sorted = tools.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(tools, sorted, "{}", server.log());
}
