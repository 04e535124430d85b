//! A `tools/call` round trip over newline-delimited JSON-RPC on a byte stream (the framing of
//! stdio, on an in-memory duplex so the pipe's cost does not drown the difference): the
//! runtime's MCP server with a `#[tool]`, next to rmcp's own minimal server answering the same
//! tool by hand, in the same run. The ratio is what the governed path costs over a bare MCP
//! server.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tool_runtime::mcp_server::McpServer;
use tool_runtime::{Runtime, tool, tools};

struct Deps;

/// Adds two numbers.
#[tool(read_only)]
fn add_numbers(a: i64, b: i64) -> i64 {
    a + b
}

/// rmcp's minimal server: one tool, its arguments read by hand.
struct Minimal;

impl ServerHandler for Minimal {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if request.name != "add_numbers" {
            return Err(ErrorData::invalid_params("unknown tool", None));
        }
        let argument = |name: &str| {
            request
                .arguments
                .as_ref()
                .and_then(|arguments| arguments.get(name))
                .and_then(serde_json::Value::as_i64)
                .ok_or_else(|| ErrorData::invalid_params(format!("`{name}` is missing"), None))
        };
        let sum = argument("a")? + argument("b")?;
        Ok(CallToolResult::success(vec![ContentBlock::text(sum.to_string())]).into())
    }
}

/// The client's end of a served stream.
struct Client {
    write: tokio::io::WriteHalf<DuplexStream>,
    lines: Lines<BufReader<tokio::io::ReadHalf<DuplexStream>>>,
}

impl Client {
    async fn send(&mut self, line: &str) {
        self.write.write_all(line.as_bytes()).await.expect("writes");
        self.write.write_all(b"\n").await.expect("writes");
    }

    async fn answer(&mut self) -> String {
        self.lines
            .next_line()
            .await
            .expect("reads")
            .expect("the server answers")
    }

    /// Initializes the session over `ours`.
    async fn connect(ours: DuplexStream) -> Self {
        let (read, write) = tokio::io::split(ours);
        let mut client = Self {
            write,
            lines: BufReader::new(read).lines(),
        };
        client
            .send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#)
            .await;
        client.answer().await;
        client
            .send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        client
    }
}

const CALL: &str = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"add_numbers","arguments":{"a":2,"b":3}}}"#;

fn round_trip(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let (mut ours_client, mut minimal_client) = runtime.block_on(async {
        let tools_runtime = Runtime::builder(Deps)
            .inventory(false)
            .tools(tools![add_numbers])
            .build()
            .expect("builds");
        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(theirs);
        tokio::spawn(McpServer::new(tools_runtime).serve_io(read, write));
        let ours_client = Client::connect(ours).await;

        let (ours, theirs) = tokio::io::duplex(1 << 16);
        let (read, write) = tokio::io::split(theirs);
        tokio::spawn(async move {
            if let Ok(running) = Minimal.serve((read, write)).await {
                let _ = running.waiting().await;
            }
        });
        let minimal_client = Client::connect(ours).await;
        (ours_client, minimal_client)
    });
    // Both answer the same.
    let (ours, minimal) = runtime.block_on(async {
        ours_client.send(CALL).await;
        minimal_client.send(CALL).await;
        (ours_client.answer().await, minimal_client.answer().await)
    });
    assert!(ours.contains(r#""text":"5""#), "{ours}");
    assert!(minimal.contains(r#""text":"5""#), "{minimal}");

    let mut group = c.benchmark_group("mcp_round_trip");
    group.bench_function("rmcp_minimal_server", |b| {
        b.iter(|| {
            runtime.block_on(async {
                minimal_client.send(CALL).await;
                black_box(minimal_client.answer().await)
            })
        });
    });
    group.bench_function("governed_server", |b| {
        b.iter(|| {
            runtime.block_on(async {
                ours_client.send(CALL).await;
                black_box(ours_client.answer().await)
            })
        });
    });
    group.finish();
}

criterion_group!(benches, round_trip);
criterion_main!(benches);
