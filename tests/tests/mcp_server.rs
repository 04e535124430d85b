//! The MCP server, spoken to as raw JSON-RPC over an in-memory stream: concurrent requests
//! answered by id with one session's writes kept apart, content blocks, errors by the spec,
//! and what a tool's context does when the call did not come over MCP.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tests::assert_send;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tool_runtime::client::{ClientError, Elicitation, LogLevel, Progress, SamplingRequest};
use tool_runtime::mcp_server::McpServer;
use tool_runtime::{
    Content, Contents, RunContext, Runtime, Session, ToolCall, ToolError, tool, tools,
};

/// How many calls of each kind run at once, and the most that ever did.
#[derive(Default)]
struct Deps {
    writes: AtomicUsize,
    most_writes: AtomicUsize,
    reads: AtomicUsize,
    most_reads: AtomicUsize,
}

fn enter(now: &AtomicUsize, most: &AtomicUsize) {
    let running = now.fetch_add(1, Ordering::SeqCst) + 1;
    most.fetch_max(running, Ordering::SeqCst);
}

/// Records a number, slowly.
#[tool(stateful)]
async fn mcp_record(ctx: RunContext<Deps>, n: u32) -> String {
    enter(&ctx.deps().writes, &ctx.deps().most_writes);
    tokio::time::sleep(Duration::from_millis(15)).await;
    ctx.deps().writes.fetch_sub(1, Ordering::SeqCst);
    format!("recorded {n}")
}

/// Reads a number, slowly.
#[tool(read_only)]
async fn mcp_read(ctx: RunContext<Deps>, n: u32) -> String {
    enter(&ctx.deps().reads, &ctx.deps().most_reads);
    tokio::time::sleep(Duration::from_millis(40)).await;
    ctx.deps().reads.fetch_sub(1, Ordering::SeqCst);
    format!("read {n}")
}

/// A chart and its caption.
#[tool(read_only, max_output_chars = 40)]
fn mcp_chart(caption: String) -> Contents {
    Contents::new()
        .with(Content::text(caption))
        .with(Content::image("x".repeat(100), "image/png"))
}

/// Asks the client's model, reports progress, asks the user: what a call that did not come
/// over MCP gets.
#[tool(read_only)]
async fn mcp_asks(ctx: RunContext) -> Result<String, ToolError> {
    ctx.report_progress(Progress::new(1.0)).await;
    let sampled = ctx.sample(SamplingRequest::new("hi", 10)).await;
    let elicited = ctx
        .elicit(Elicitation::new(
            "who?",
            json!({"type": "object", "properties": {}}),
        ))
        .await;
    match (sampled, elicited) {
        (Err(ClientError::NoClient), Err(ClientError::NoClient)) => {
            ctx.sample(SamplingRequest::new("hi", 10)).await?;
            Ok("unreachable".to_owned())
        }
        other => Ok(format!("{other:?}")),
    }
}

/// Logs at three levels.
#[tool(read_only)]
async fn mcp_logs(ctx: RunContext) -> &'static str {
    ctx.log(LogLevel::Debug, "a detail").await;
    ctx.log(LogLevel::Info, "a step").await;
    ctx.log(LogLevel::Warning, json!({"slow": true})).await;
    "logged"
}

/// Tells the client what it connects with, secret included.
#[tool(read_only)]
async fn mcp_leaky_log(ctx: RunContext) -> &'static str {
    let dsn = "postgres://app:hunter2hunter2@db.internal:5432/orders";
    ctx.report_progress(Progress::new(1.0).with_message(format!("connecting to {dsn}")))
        .await;
    ctx.log(LogLevel::Info, json!({"dsn": dsn})).await;
    "connected"
}

fn runtime() -> (Runtime<Deps>, Arc<Deps>) {
    let deps = Arc::new(Deps::default());
    let runtime = Runtime::builder_shared(Arc::clone(&deps))
        .inventory(false)
        .tools(tools![
            mcp_record,
            mcp_read,
            mcp_chart,
            mcp_asks,
            mcp_logs,
            mcp_leaky_log
        ])
        .build()
        .expect("builds");
    (runtime, deps)
}

/// A client on one end of an in-memory stream, the server on the other.
struct Client {
    write: tokio::io::WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
}

impl Client {
    async fn start(server: McpServer<Deps>) -> Self {
        let (ours, theirs) = tokio::io::duplex(1 << 20);
        let (their_read, their_write) = tokio::io::split(theirs);
        let serving = server.serve_io(their_read, their_write);
        assert_send(&serving);
        tokio::spawn(serving);
        let (read, write) = tokio::io::split(ours);
        let mut client = Self {
            write,
            lines: BufReader::new(read).lines(),
        };
        client
            .send(
                json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"}}}),
            )
            .await;
        let answer = client.next().await;
        assert_eq!(answer["id"], 0, "{answer}");
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.write.write_all(line.as_bytes()).await.expect("writes");
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("an answer within 10 s")
            .expect("reads")
            .expect("a line");
        serde_json::from_str(&line).expect("JSON")
    }

    /// Sends one request and returns its answer.
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.request_seeing(id, method, params).await.0
    }

    /// Sends one request; its answer and the notifications that came before it.
    async fn request_seeing(
        &mut self,
        id: u64,
        method: &str,
        params: Value,
    ) -> (Value, Vec<Value>) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut seen = Vec::new();
        loop {
            let answer = self.next().await;
            if answer["id"] == id {
                return (answer, seen);
            }
            seen.push(answer);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_requests_are_answered_by_id_and_writes_never_overlap() {
    let (runtime, deps) = runtime();
    let mut client = Client::start(McpServer::new(runtime)).await;
    // Every request sent before any answer is read: reads, then writes, then reads. A write
    // waits for the reads sent before it, and the reads sent after it wait for it, as in a
    // turn.
    let is_read = |n: u64| n <= 6 || n > 12;
    for n in 1..=16_u64 {
        let tool = if is_read(n) { "mcp_read" } else { "mcp_record" };
        client
            .send(json!({"jsonrpc": "2.0", "id": n, "method": "tools/call",
                "params": {"name": tool, "arguments": {"n": n}}}))
            .await;
    }
    let mut answered = Vec::new();
    while answered.len() < 16 {
        let answer = client.next().await;
        let Some(id) = answer["id"].as_u64() else {
            continue;
        };
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        let expected = if is_read(id) {
            format!("read {id}")
        } else {
            format!("recorded {id}")
        };
        assert_eq!(text, expected, "the answer to request {id}: {answer}");
        answered.push(id);
    }
    answered.sort_unstable();
    assert_eq!(answered, (1..=16).collect::<Vec<_>>());
    assert_eq!(
        deps.most_writes.load(Ordering::SeqCst),
        1,
        "writes of one session overlapped"
    );
    assert!(
        deps.most_reads.load(Ordering::SeqCst) > 1,
        "reads did not run alongside each other"
    );
}

#[tokio::test]
async fn content_blocks_pass_whole_and_their_text_is_cut() {
    let (runtime, _) = runtime();
    let mut client = Client::start(McpServer::new(runtime)).await;
    let caption = "revenue by month, ".repeat(60);
    let answer = client
        .request(
            1,
            "tools/call",
            json!({"name": "mcp_chart", "arguments": {"caption": caption}}),
        )
        .await;
    let content = &answer["result"]["content"];
    assert_eq!(
        content[1],
        json!({"type": "image", "data": "x".repeat(100), "mimeType": "image/png"})
    );
    let text = content[0]["text"].as_str().unwrap_or_default();
    assert_eq!(content[0]["type"], "text");
    assert!(
        text.len() < caption.len(),
        "the caption was not cut: {text}"
    );
    assert!(text.contains("characters omitted"), "{text}");
    assert_ne!(answer["result"]["isError"], true);
}

#[tokio::test]
async fn unknown_tools_and_foreign_cursors_are_invalid_params() {
    let (runtime, _) = runtime();
    let mut client = Client::start(McpServer::new(runtime).page_size(2)).await;
    let unknown = client
        .request(
            1,
            "tools/call",
            json!({"name": "mcp_nope", "arguments": {}}),
        )
        .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("mcp_nope"))
    );
    let first = client.request(2, "tools/list", json!({})).await;
    let names: Vec<&str> = first["result"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert_eq!(names, ["mcp_asks", "mcp_chart"]);
    let cursor = first["result"]["nextCursor"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!cursor.contains("mcp_"), "the cursor is opaque: {cursor}");
    let second = client
        .request(3, "tools/list", json!({"cursor": cursor}))
        .await;
    assert_eq!(second["result"]["tools"][0]["name"], "mcp_leaky_log");
    assert_eq!(second["result"]["tools"][1]["name"], "mcp_logs");
    let last = client
        .request(
            4,
            "tools/list",
            json!({"cursor": second["result"]["nextCursor"]}),
        )
        .await;
    assert_eq!(last["result"]["tools"][0]["name"], "mcp_read");
    let fourth = client
        .request(
            40,
            "tools/list",
            json!({"cursor": last["result"]["nextCursor"]}),
        )
        .await;
    assert_eq!(fourth["result"]["tools"][0]["name"], "read_artifact");
    assert!(fourth["result"].get("nextCursor").is_none(), "{fourth}");
    let not_a_token = client
        .request(
            41,
            "tools/call",
            json!({"name": "mcp_read", "arguments": {"n": 1},
                "_meta": {"io.tool-runtime/decision": 42}}),
        )
        .await;
    assert_eq!(not_a_token["error"]["code"], -32602, "{not_a_token}");
    let not_an_object = client
        .request(
            6,
            "tools/call",
            json!({"name": "mcp_read", "arguments": "n=1"}),
        )
        .await;
    assert_eq!(not_an_object["error"]["code"], -32602, "{not_an_object}");
    let unknown_method = client.request(7, "tools/frobnicate", json!({})).await;
    assert_eq!(unknown_method["error"]["code"], -32601, "{unknown_method}");
    let foreign = client
        .request(5, "tools/list", json!({"cursor": "page-2"}))
        .await;
    assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
}

#[tokio::test]
async fn a_call_not_made_over_mcp_has_no_client_to_ask() {
    let (runtime, _) = runtime();
    let report = runtime
        .execute(&Session::new("s"), [ToolCall::new("c", "mcp_asks", "{}")])
        .await;
    let error = report.observations()[0].error().expect("fails");
    assert_eq!(error.kind().as_str(), "execution_failed");
    assert!(
        error.message().contains("not made over MCP"),
        "{}",
        error.message()
    );
}

/// One raw HTTP/1.1 POST of `body` to `/mcp` with these `Host` and further header lines;
/// the whole answer (status line, headers, body).
async fn post_raw(
    address: std::net::SocketAddr,
    host: &str,
    headers: &str,
    body: &Value,
) -> String {
    let body = body.to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{headers}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(address)
        .await
        .expect("connects");
    stream.write_all(request.as_bytes()).await.expect("writes");
    let mut answer = Vec::new();
    tokio::io::AsyncReadExt::read_to_end(&mut stream, &mut answer)
        .await
        .expect("reads");
    String::from_utf8_lossy(&answer).into_owned()
}

/// An `initialize` over raw HTTP with these `Host` and `Origin`; the status code and the
/// `Mcp-Session-Id` of the answer.
async fn initialize_over_http(
    address: std::net::SocketAddr,
    host: &str,
    origin: Option<&str>,
) -> (u16, Option<String>) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"}}});
    let origin = origin.map_or_else(String::new, |origin| format!("Origin: {origin}\r\n"));
    let answer = post_raw(address, host, &origin, &body).await;
    let status = answer
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let session = answer.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_owned())
    });
    (status, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_refuses_foreign_hosts_and_origins_and_gives_unguessable_session_ids() {
    let (runtime, _) = runtime();
    let listener = McpServer::new(runtime)
        .bind("127.0.0.1:0")
        .await
        .expect("binds");
    let address = listener.local_addr().expect("an address");
    assert!(address.ip().is_loopback());
    let serving = listener.serve();
    assert_send(&serving);
    tokio::spawn(serving);
    let local = format!("127.0.0.1:{}", address.port());
    let local_origin = format!("http://127.0.0.1:{}", address.port());

    let (status, _) = initialize_over_http(address, "evil.example.com", None).await;
    assert_eq!(status, 403, "a foreign Host (DNS rebinding)");
    let (status, _) = initialize_over_http(address, &local, Some("http://evil.example.com")).await;
    assert_eq!(status, 403, "a foreign browser Origin");
    let (status, first) = initialize_over_http(address, &local, Some(&local_origin)).await;
    assert_eq!(status, 200);
    let (status, second) = initialize_over_http(address, &local, None).await;
    assert_eq!(status, 200);
    let (first, second) = (first.expect("a session id"), second.expect("a session id"));
    assert_ne!(first, second);
    // A random (version 4) UUID: 122 random bits.
    assert_eq!(first.len(), 36, "{first}");
    assert_eq!(first.chars().nth(14), Some('4'), "{first}");
}

#[tokio::test]
async fn every_server_future_is_send_and_a_server_stops_when_told() {
    let (runtime, _) = runtime();
    let server = McpServer::new(runtime);
    assert_send(&server.clone().serve_stdio());
    assert_send(&server.clone().bind("127.0.0.1:0"));
    let options = tool_runtime::mcp_server::HttpOptions::default();
    assert_send(&server.clone().bind_with("127.0.0.1:0", options));
    let bound = server.bind_local(0);
    assert_send(&bound);
    let listener = bound.await.expect("binds");
    let stop = tool_runtime::CancellationToken::new();
    let serving = listener.serve_until(stop.clone());
    assert_send(&serving);
    let serving = tokio::spawn(serving);
    stop.cancel();
    let stopped = tokio::time::timeout(Duration::from_secs(5), serving).await;
    assert!(
        matches!(stopped, Ok(Ok(Ok(())))),
        "the server did not stop: {stopped:?}"
    );
}

#[tokio::test]
async fn log_messages_follow_the_level_the_client_set() {
    let (runtime, _) = runtime();
    let mut client = Client::start(McpServer::new(runtime)).await;
    let levels = |seen: &[Value]| -> Vec<String> {
        seen.iter()
            .filter(|message| message["method"] == "notifications/message")
            .map(|message| {
                assert_eq!(message["params"]["logger"], "mcp_logs");
                message["params"]["level"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect()
    };
    let call = json!({"name": "mcp_logs", "arguments": {}});
    let (_, seen) = client.request_seeing(1, "tools/call", call.clone()).await;
    assert_eq!(
        levels(&seen),
        ["debug", "info", "warning"],
        "every level until one is set"
    );
    let set = client
        .request(2, "logging/setLevel", json!({"level": "warning"}))
        .await;
    assert_eq!(set["result"], json!({}), "{set}");
    let (answer, seen) = client.request_seeing(3, "tools/call", call).await;
    assert_eq!(answer["result"]["content"][0]["text"], "logged");
    assert_eq!(levels(&seen), ["warning"]);
    let warning = seen
        .iter()
        .find(|message| message["method"] == "notifications/message");
    assert_eq!(
        warning.map(|message| &message["params"]["data"]),
        Some(&json!({"slow": true}))
    );
}

#[tokio::test]
async fn what_a_tool_tells_its_client_is_redacted() {
    let (runtime, _) = runtime();
    let mut client = Client::start(McpServer::new(runtime)).await;
    let (answer, seen) = client
        .request_seeing(
            1,
            "tools/call",
            json!({"name": "mcp_leaky_log", "arguments": {}, "_meta": {"progressToken": "p"}}),
        )
        .await;
    assert_eq!(answer["result"]["content"][0]["text"], "connected");
    let sent = serde_json::to_string(&seen).expect("JSON");
    assert!(
        !sent.contains("hunter2"),
        "a secret reached the client: {sent}"
    );
    let progress = seen
        .iter()
        .find(|message| message["method"] == "notifications/progress")
        .expect("a progress notification");
    assert!(
        progress["params"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("[REDACTED:url_password]")),
        "{progress}"
    );
    let log = seen
        .iter()
        .find(|message| message["method"] == "notifications/message")
        .expect("a log message");
    assert!(
        log["params"]["data"]["dsn"]
            .as_str()
            .is_some_and(|dsn| dsn.contains("[REDACTED:url_password]")),
        "{log}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stateless_server_without_a_session_hook_refuses_requests() {
    let (runtime, _) = runtime();
    let listener = McpServer::new(runtime)
        .bind_with(
            "127.0.0.1:0",
            tool_runtime::mcp_server::HttpOptions::default().stateless(),
        )
        .await
        .expect("binds");
    let address = listener.local_addr().expect("an address");
    tokio::spawn(listener.serve());
    let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let host = format!("127.0.0.1:{}", address.port());
    let headers = "MCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: someone-elses\r\n";
    let answer = post_raw(address, &host, headers, &body).await;
    assert!(
        answer.contains("keeps no MCP session") && !answer.contains("\"tools\""),
        "{answer}"
    );
}

#[tokio::test]
async fn a_signed_decision_resumes_its_own_tool_only() {
    use tests::decisions::{deferring, keys, pend, signed};
    use tool_runtime::approvals::{Approval, MemoryApprovalStore};
    use tool_runtime::gates::{Action, Policy};

    let deps = Arc::new(Deps::default());
    let runtime = deferring(
        Runtime::builder_shared(Arc::clone(&deps))
            .inventory(false)
            .tools(tools![mcp_record, mcp_read])
            .policy(Policy::new().default_for(tool_runtime::RiskLevel::Write, Action::Ask)),
        Arc::new(MemoryApprovalStore::new()),
        keys(),
    )
    .build()
    .expect("builds");
    // Left pending by a call that did not come over MCP, in the stdio client's session.
    let session = Session::new("mcp-stdio");
    let pending = pend(
        &runtime,
        &session,
        ToolCall::new("c1", "mcp_record", r#"{"n": 9}"#),
    )
    .await;
    let decision = signed(&runtime, &pending, Approval::Approve);
    let mut client = Client::start(McpServer::new(runtime)).await;
    let meta = json!({"io.tool-runtime/decision": decision.as_str()});
    let elsewhere = client
        .request(
            1,
            "tools/call",
            json!({"name": "mcp_read", "arguments": {"n": 1}, "_meta": meta}),
        )
        .await;
    assert_eq!(elsewhere["error"]["code"], -32602, "{elsewhere}");
    assert!(
        elsewhere["error"]["message"]
            .as_str()
            .is_some_and(|message| message.contains("mcp_record")),
        "{elsewhere}"
    );
    assert_eq!(deps.most_writes.load(Ordering::SeqCst), 0, "nothing ran");
    let resumed = client
        .request(
            2,
            "tools/call",
            json!({"name": "mcp_record", "arguments": {}, "_meta": meta}),
        )
        .await;
    assert_eq!(
        resumed["result"]["content"][0]["text"], "recorded 9",
        "{resumed}"
    );
    let replayed = client
        .request(
            3,
            "tools/call",
            json!({"name": "mcp_record", "arguments": {}, "_meta": meta}),
        )
        .await;
    assert_eq!(replayed["result"]["isError"], true, "{replayed}");
    assert!(
        replayed["result"]["content"][0]["text"]
            .as_str()
            .is_some_and(|text| text.contains("invalid_decision")),
        "{replayed}"
    );
}
