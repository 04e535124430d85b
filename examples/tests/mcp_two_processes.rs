//! Two support-desk processes on one Redis, one MCP client alternating between them: a write
//! repeated across them runs once, and an approval left pending on one is resumed on the other.
//!
//! Each process runs `--mcp-http 127.0.0.1:0 --stateless --redis URL --defer-approvals` with the
//! same decision secret. The client is the official MCP Python SDK's
//! (`tests/clients/two_processes.py`, on the Python `VENDOR_PYTHON` names), without
//! elicitation, in one session (`x-support-session`): a router under its HTTP client sends each
//! request to the process the script names, so only A sees `initialize`. Pending calls are
//! decided with `support_desk --sign-decision`. The Redis server is the tests crate's
//! throwaway one (`tests/src/redis_server.rs`, included by path: it needs only `std`).
//!
//! Why the checks fail without shared stores: each process keeps its tickets in its own
//! memory, numbered from `T-1`. A opens `T-1` and `T-2`; B is then sent A's second ticket
//! again. From Redis, B answers A's `T-2` without running the tool, so B's own first ticket
//! after it is `T-1`, and A, sent that one again, answers B's `T-1` (its own next would be
//! `T-3`). A process with its own store runs each repeat: B answers `T-1` for the repeat and
//! `T-2` next, A `T-3`. Likewise a decision about a call pending on A finds nothing to resume
//! in another store (`invalid_decision`). The second test runs the same client against two
//! processes with separate stores (two databases of one server) and asserts exactly those
//! other answers, so the first test's checks are known to tell the two apart.

#[path = "mcp/common.rs"]
mod common;

#[path = "../../tests/src/redis_server.rs"]
#[allow(
    dead_code,
    unreachable_pub,
    reason = "the tests crate's Redis starter (public there), of which this file uses a part"
)]
mod redis_server;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use common::{ServerProcess, run_with_timeout, vendor_python};
use redis_server::RedisServer;

/// The secret both processes and `--sign-decision` sign with (at least 32 bytes).
const SECRET: &str = "two-processes-test-secret-0123456789abcdef";

/// A desk process serving statelessly over HTTP with its stores in `redis`.
fn desk(redis: &str) -> ServerProcess {
    let mut command = Command::new(env!("CARGO_BIN_EXE_support_desk"));
    command
        .args(["--mcp-http", "127.0.0.1:0", "--stateless", "--redis", redis])
        .arg("--defer-approvals")
        .env("SUPPORT_DESK_DECISION_SECRET", SECRET);
    ServerProcess::start(command)
}

/// Runs the client against A and B (each with the Redis URL of its store, for
/// `--sign-decision`) and returns what it observed.
fn client(a: &ServerProcess, redis_a: &str, b: &ServerProcess, redis_b: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients/two_processes.py");
    let mut command = Command::new(vendor_python());
    command
        .arg(script)
        .args([env!("CARGO_BIN_EXE_support_desk"), a.url(), redis_a])
        .args([b.url(), redis_b])
        .env("SUPPORT_DESK_DECISION_SECRET", SECRET)
        .env("NO_PROXY", "127.0.0.1,localhost,::1")
        .env("no_proxy", "127.0.0.1,localhost,::1");
    let finished = run_with_timeout(command, Duration::from_secs(120));
    assert!(
        !finished.timed_out() && finished.status.is_some_and(|status| status.success()),
        "the Python client failed ({:?}):\n{}{}{}",
        finished.status,
        finished.stderr,
        a.log(),
        b.log()
    );
    match serde_json::from_str(&finished.stdout) {
        Ok(facts) => facts,
        Err(error) => panic!(
            "the Python client printed no JSON ({error}):\n{}\nstderr:\n{}",
            finished.stdout, finished.stderr
        ),
    }
}

/// The ticket a `create_ticket` result holds: `[id, subject]`.
fn ticket(result: &Value) -> Value {
    assert_eq!(result["is_error"], false, "not a ticket: {result}");
    json!([result["structured"]["id"], result["structured"]["subject"]])
}

/// The error kind of an `isError` result.
fn error_kind(result: &Value) -> &str {
    assert_eq!(result["is_error"], true, "not an error: {result}");
    result["error"]["kind"].as_str().unwrap_or_default()
}

const FIRST: &str = "A-1008 arrived damaged";
const SECOND: &str = "A-1016 never arrived";
const THIRD: &str = "A-1024 was charged twice";

/// Where the script sent each request: the servers of its `tools/call`s in order, and that
/// nothing but A heard the handshake and no answer opened an MCP session.
fn check_routes(facts: &Value) {
    let routes = facts["routes"].as_array().cloned().unwrap_or_default();
    let calls: Vec<&str> = routes
        .iter()
        .filter(|route| route["method"] == "tools/call")
        .filter_map(|route| route["server"].as_str())
        .collect();
    assert_eq!(
        calls,
        ["A", "A", "B", "B", "A", "A", "B", "A", "B", "A"],
        "{routes:?}"
    );
    for route in &routes {
        assert_eq!(route["session_id"], Value::Null, "a session id: {route}");
        if route["method"] == "initialize" || route["method"] == "notifications/initialized" {
            assert_eq!(route["server"], "A", "{route}");
        }
    }
    assert!(
        routes
            .iter()
            .filter(|route| route["server"] == "B")
            .all(|route| route["status"] == 200),
        "B answered every request without a handshake of its own: {routes:?}"
    );
}

#[test]
fn two_processes_on_one_redis_serve_one_client() {
    let redis = RedisServer::start();
    let url = redis.url();
    let (a, b) = (desk(&url), desk(&url));
    let facts = client(&a, &url, &b, &url);
    assert_eq!(facts["server"], "support-desk");
    check_routes(&facts);

    assert_eq!(ticket(&facts["a_first"]), json!(["T-1", FIRST]));
    assert_eq!(ticket(&facts["a_second"]), json!(["T-2", SECOND]));
    // A's ticket, answered by B from Redis without running the tool...
    assert_eq!(facts["b_second"], facts["a_second"]);
    // ...so B's own first ticket is its T-1, and A, sent it again, answers B's.
    assert_eq!(ticket(&facts["b_third"]), json!(["T-1", THIRD]));
    assert_eq!(facts["a_third"], facts["b_third"]);

    // Pending on A, signed from the store, resumed on B, refused when replayed on A.
    assert_eq!(error_kind(&facts["pending"]), "approval_pending");
    let shown = facts["shown"].as_str().unwrap_or_default();
    assert_eq!(
        shown,
        "approve cancel_order {\"order_id\":\"A-1000\"} in session desk-ada:two-processes \
         (a cancellation cannot be undone)"
    );
    assert_eq!(facts["resumed"]["is_error"], false, "{}", facts["resumed"]);
    assert_eq!(facts["resumed"]["texts"], json!(["cancelled A-1000"]));
    assert_eq!(error_kind(&facts["replayed"]), "invalid_decision");

    // Pending on B, denied with a reason, answered on A.
    assert_eq!(error_kind(&facts["pending_b"]), "approval_pending");
    assert_eq!(error_kind(&facts["denied"]), "denied");
    assert!(
        facts["denied"]["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("not during the night")),
        "{}",
        facts["denied"]
    );

    // Both decisions consumed their requests: the session's index in Redis is empty, and
    // the request cannot be decided again.
    let waiting = redis_server::command(
        &format!("127.0.0.1:{}", redis.port()),
        &["ZCARD", "tools:approvals:desk-ada%3Atwo-processes"],
    );
    assert_eq!(waiting.ok(), Some(0));
    let request_id = facts["pending"]["error"]["details"]["request_id"]
        .as_str()
        .unwrap_or_default();
    let again = desk_command(&["--sign-decision", request_id, "approve", "--redis", &url]);
    assert_eq!(again.status.and_then(|status| status.code()), Some(1));
    assert_eq!(
        again.stderr.trim_end(),
        format!(
            "no call waits under request {request_id} (decided already, expired, or another store)"
        )
    );
}

/// Runs `support_desk` with `args` and the test's secret, to its end.
fn desk_command(args: &[&str]) -> common::Finished {
    let mut command = Command::new(env!("CARGO_BIN_EXE_support_desk"));
    command
        .args(args)
        .env("SUPPORT_DESK_DECISION_SECRET", SECRET);
    run_with_timeout(command, Duration::from_secs(30))
}

#[test]
fn the_flags_refuse_what_they_cannot_do() {
    for (args, message) in [
        (
            &["--stateless"][..],
            "--stateless goes with --mcp or --mcp-http; try --help",
        ),
        (
            &["--mcp", "--stateless"],
            "--stateless goes with --mcp-http: a stdio server has one client",
        ),
        (
            &["--sign-decision", "0123", "approve"],
            "--sign-decision needs --redis URL: the store the request waits in",
        ),
        (
            &["--sign-decision", "0123", "later"],
            "--sign-decision REQUEST_ID needs approve or deny",
        ),
        (
            &["--sign-decision", "0123", "approve", "--reason", "why"],
            "--reason goes after --sign-decision REQUEST_ID deny",
        ),
    ] {
        let finished = desk_command(args);
        assert_eq!(
            (
                finished.status.and_then(|status| status.code()),
                finished.stderr.trim_end()
            ),
            (Some(1), message),
            "{args:?}"
        );
    }
    // Deferring needs the secret, long enough to sign with.
    let mut command = Command::new(env!("CARGO_BIN_EXE_support_desk"));
    command
        .args(["--mcp-http", "127.0.0.1:0", "--defer-approvals"])
        .env_remove("SUPPORT_DESK_DECISION_SECRET");
    let finished = run_with_timeout(command, Duration::from_secs(30));
    assert_eq!(finished.status.and_then(|status| status.code()), Some(1));
    assert!(
        finished
            .stderr
            .starts_with("SUPPORT_DESK_DECISION_SECRET is not set"),
        "{}",
        finished.stderr
    );
    let mut command = Command::new(env!("CARGO_BIN_EXE_support_desk"));
    command
        .args(["--mcp-http", "127.0.0.1:0", "--defer-approvals"])
        .env("SUPPORT_DESK_DECISION_SECRET", "short");
    let finished = run_with_timeout(command, Duration::from_secs(30));
    assert_eq!(finished.status.and_then(|status| status.code()), Some(1));
    assert!(
        finished
            .stderr
            .starts_with("SUPPORT_DESK_DECISION_SECRET cannot sign decisions"),
        "{}",
        finished.stderr
    );
}

#[test]
fn two_processes_with_separate_stores_answer_each_repeat_themselves() {
    let redis = RedisServer::start();
    // Database 0 for A, 1 for B: one server, two key spaces.
    let (url_a, url_b) = (redis.url(), format!("{}1", redis.url()));
    let (a, b) = (desk(&url_a), desk(&url_b));
    let facts = client(&a, &url_a, &b, &url_b);
    check_routes(&facts);

    assert_eq!(ticket(&facts["a_second"]), json!(["T-2", SECOND]));
    // B ran the repeat itself: its own T-1, and the next is its T-2; A runs its T-3.
    assert_eq!(ticket(&facts["b_second"]), json!(["T-1", SECOND]));
    assert_eq!(ticket(&facts["b_third"]), json!(["T-2", THIRD]));
    assert_eq!(ticket(&facts["a_third"]), json!(["T-3", THIRD]));

    // A decision about a call pending on A finds nothing to resume on B, and the other way.
    assert_eq!(error_kind(&facts["pending"]), "approval_pending");
    assert_eq!(error_kind(&facts["resumed"]), "invalid_decision");
    // The call still waits in A's store, so the same decision resumes it there.
    assert_eq!(facts["replayed"]["texts"], json!(["cancelled A-1000"]));
    assert_eq!(error_kind(&facts["pending_b"]), "approval_pending");
    assert_eq!(error_kind(&facts["denied"]), "invalid_decision");
}
