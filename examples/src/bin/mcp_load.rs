//! Load on the MCP server over Streamable HTTP: one client session, N `tools/call` requests of
//! the support desk's `get_order_status` sent at once (each on its own connection), every
//! answer checked against its request; prints the errors and the latency percentiles.
//!
//! ```text
//! cargo run --release -p examples --bin mcp_load -- [CALLS]     # 1000 by default
//! ```
//!
//! The server runs in the same process, on a loopback port, with the desk's tools and the
//! default runtime (no policy file: reads run unasked).
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line program prints its figures"
)]

use std::process::ExitCode;
use std::time::{Duration, Instant};

use examples::support::SupportDeps;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tool_runtime::Runtime;
use tool_runtime::mcp_server::McpServer;

/// One HTTP/1.1 POST to `/mcp` on its own connection; the status line, headers and body.
async fn post(
    address: std::net::SocketAddr,
    session: Option<&str>,
    body: &Value,
) -> std::io::Result<(String, String)> {
    let body = body.to_string();
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Connection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(session) = session {
        request.push_str(&format!("Mcp-Session-Id: {session}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    let mut stream = TcpStream::connect(address).await?;
    stream.write_all(request.as_bytes()).await?;
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).await?;
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap_or((&answer, ""));
    Ok((head.to_owned(), body.to_owned()))
}

/// The value of a response header.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name).then(|| value.trim())
    })
}

/// Whether `body` (JSON or SSE) holds the successful answer to request `id` for `order`.
fn answered(body: &str, id: usize, order: &str) -> bool {
    body.split(['\n', '\r'])
        .filter_map(|line| line.strip_prefix("data:").or(Some(line)))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .any(|message| {
            message["id"] == id
                && message["result"]["isError"] != true
                && message["result"]["structuredContent"]["order_id"] == order
        })
}

fn percentile(sorted: &[Duration], fraction: f64) -> Duration {
    let last = sorted.len().saturating_sub(1);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let index = ((last as f64) * fraction).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

#[tokio::main]
async fn main() -> ExitCode {
    let calls: usize = match std::env::args().nth(1).map(|calls| calls.parse()) {
        None => 1000,
        Some(Ok(calls)) if calls > 0 => calls,
        Some(_) => {
            eprintln!("usage: mcp_load [CALLS]");
            return ExitCode::FAILURE;
        }
    };
    match run(calls).await {
        Ok(0) => ExitCode::SUCCESS,
        Ok(_) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(calls: usize) -> Result<usize, String> {
    let runtime = Runtime::builder(SupportDeps::demo())
        .build()
        .map_err(|error| error.to_string())?;
    let listener = McpServer::new(runtime)
        .bind("127.0.0.1:0")
        .await
        .map_err(|error| error.to_string())?;
    let address = listener.local_addr().map_err(|error| error.to_string())?;
    tokio::spawn(listener.serve());

    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "mcp_load", "version": "0"}}});
    let (head, _) = post(address, None, &initialize)
        .await
        .map_err(|error| format!("initialize: {error}"))?;
    let session = header(&head, "mcp-session-id")
        .ok_or_else(|| format!("no Mcp-Session-Id in the answer to initialize:\n{head}"))?
        .to_owned();
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    post(address, Some(&session), &initialized)
        .await
        .map_err(|error| format!("notifications/initialized: {error}"))?;

    let started = Instant::now();
    let tasks: Vec<_> = (1..=calls)
        .map(|id| {
            let session = session.clone();
            tokio::spawn(async move {
                let order = format!("A-{}", 1000 + (id % 40) * 8);
                let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                    "params": {"name": "get_order_status", "arguments": {"order_id": order}}});
                let sent = Instant::now();
                let answer = post(address, Some(&session), &call).await;
                let elapsed = sent.elapsed();
                let ok = answer.is_ok_and(|(_, body)| answered(&body, id, &order));
                (ok, elapsed)
            })
        })
        .collect();
    let mut latencies = Vec::with_capacity(calls);
    let mut errors = 0;
    for task in tasks {
        match task.await {
            Ok((true, elapsed)) => latencies.push(elapsed),
            _ => errors += 1,
        }
    }
    let wall = started.elapsed();
    latencies.sort_unstable();
    println!(
        "{calls} concurrent tools/call over HTTP: {errors} errors; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; all answered in {:.1} ms",
        percentile(&latencies, 0.50).as_secs_f64() * 1e3,
        percentile(&latencies, 0.99).as_secs_f64() * 1e3,
        latencies.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        wall.as_secs_f64() * 1e3,
    );
    Ok(errors)
}
