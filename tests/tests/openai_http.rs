//! `OpenAiChat` against a Chat Completions endpoint on loopback: a hand-written HTTP/1.1
//! responder that replays answers in the documented wire shape, records what it was sent,
//! and can drop connections, stall and cut streams short.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tests::assert_send;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio::time::Instant;
use tool_runtime::model::{
    Message, Model, ModelError, ModelErrorKind, ModelRequest, ModelResponse, OpenAiChat, Usage,
};
use tool_runtime::providers::{LoweredCatalog, Target, openai};
use tool_runtime::{Arguments, RunContext, Runtime, Scope, Session, ToolCall, tool, tools};

/// Counts the refunds that really ran.
#[derive(Default)]
struct Deps {
    refunds: AtomicUsize,
}

/// Finds a customer's orders.
#[tool(read_only)]
fn http_search(
    /// The customer's name.
    customer: String,
    /// Orders per page.
    #[default = 10]
    limit: u32,
) -> String {
    format!("{customer}: {limit} orders")
}

/// Refunds an order.
#[tool(stateful)]
fn http_refund(ctx: RunContext<Deps>, order_id: String) -> String {
    let done = ctx.deps().refunds.fetch_add(1, Ordering::SeqCst) + 1;
    format!("refunded {order_id} ({done})")
}

fn runtime() -> (Runtime<Deps>, Arc<Deps>) {
    let deps = Arc::new(Deps::default());
    let runtime = Runtime::builder_shared(Arc::clone(&deps))
        .inventory(false)
        .tools(tools![http_search, http_refund])
        .build()
        .expect("builds");
    (runtime, deps)
}

fn catalog(runtime: &Runtime<Deps>) -> LoweredCatalog {
    runtime
        .lowered_catalog(&Session::new("http"), Target::OpenAiStrict)
        .expect("lowers")
}

/// What the server answers one request with.
#[derive(Debug, Clone)]
enum Reply {
    /// A status, extra headers and a body.
    Answer {
        status: u16,
        headers: Vec<(&'static str, String)>,
        body: String,
    },
    /// The request read, the connection closed without a byte of answer.
    Close,
    /// Another reply, after a wait.
    Slow(Duration, Box<Reply>),
    /// An event stream, written in these pieces; `chunked` frames them in chunked
    /// encoding, otherwise the body ends when the connection closes.
    Stream {
        pieces: Vec<String>,
        chunked: bool,
        end: End,
    },
}

/// How a stream's body ends.
#[derive(Debug, Clone, Copy)]
enum End {
    /// As HTTP ends it: the zero-size chunk, or the connection closed.
    Finish,
    /// The connection closed (in chunked encoding, before the zero-size chunk).
    Cut,
    /// Nothing more for this long, then the connection closed.
    Stall(Duration),
}

fn ok(body: String) -> Reply {
    answer(200, body)
}

fn answer(status: u16, body: String) -> Reply {
    Reply::Answer {
        status,
        headers: vec![("content-type", "application/json".to_owned())],
        body,
    }
}

/// One request the server read.
#[derive(Debug, Clone)]
struct Received {
    at: Instant,
    request_line: String,
    /// Names in lower case.
    headers: Vec<(String, String)>,
    body: Value,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(each, _)| each == name)
            .map(|(_, value)| value.as_str())
    }
}

/// A Chat Completions endpoint on loopback answering its script in order, the last reply
/// for every request after.
struct Server {
    base_url: String,
    received: Arc<Mutex<Vec<Received>>>,
    accept: JoinHandle<()>,
}

impl Server {
    async fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
        let address = listener.local_addr().expect("an address");
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        let accept = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let (log, script) = (Arc::clone(&log), script.clone());
                tokio::spawn(serve(socket, log, script));
            }
        });
        Self {
            base_url: format!("http://{address}/v1"),
            received,
            accept,
        }
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().expect("the log").clone()
    }

    /// A client of this server: a short timeout and backoff, so tests stay fast.
    fn chat(&self) -> OpenAiChat {
        OpenAiChat::new(
            &self.base_url,
            Some("sk-test-secret".to_owned()),
            "gpt-test",
        )
        .timeout(Duration::from_secs(5))
        .backoff(Duration::from_millis(10))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn serve(mut socket: TcpStream, log: Arc<Mutex<Vec<Received>>>, script: Vec<Reply>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    let index = {
        let mut log = log.lock().expect("the log");
        log.push(request);
        log.len() - 1
    };
    let Some(reply) = script.get(index).or(script.last()).cloned() else {
        return;
    };
    write_reply(&mut socket, reply).await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Received> {
    let mut buffer = Vec::new();
    let mut chunk = [0_u8; 4096];
    let head_end = loop {
        if let Some(end) = buffer.windows(4).position(|window| window == b"\r\n\r\n") {
            break end;
        }
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let at = Instant::now();
    let head = String::from_utf8(buffer[..head_end].to_vec()).ok()?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    Some(Received {
        at,
        request_line,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

async fn write_reply(socket: &mut TcpStream, reply: Reply) {
    match reply {
        Reply::Answer {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} Status\r\ncontent-length: {}\r\nconnection: close\r\n",
                body.len()
            );
            for (name, value) in headers {
                head.push_str(&format!("{name}: {value}\r\n"));
            }
            head.push_str("\r\n");
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body.as_bytes()).await;
        }
        Reply::Close => {}
        Reply::Slow(wait, reply) => {
            tokio::time::sleep(wait).await;
            Box::pin(write_reply(socket, *reply)).await;
            return;
        }
        Reply::Stream {
            pieces,
            chunked,
            end,
        } => {
            let framing = if chunked {
                "transfer-encoding: chunked\r\n"
            } else {
                ""
            };
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n{framing}connection: close\r\n\r\n"
            );
            let _ = socket.write_all(head.as_bytes()).await;
            for piece in pieces {
                let framed = if chunked {
                    format!("{:x}\r\n{piece}\r\n", piece.len())
                } else {
                    piece
                };
                let _ = socket.write_all(framed.as_bytes()).await;
                let _ = socket.flush().await;
                // Pieces arrive apart, as a model's tokens do.
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            match end {
                End::Finish if chunked => {
                    let _ = socket.write_all(b"0\r\n\r\n").await;
                }
                End::Finish | End::Cut => {}
                End::Stall(wait) => tokio::time::sleep(wait).await,
            }
        }
    }
    let _ = socket.shutdown().await;
}

/// A chat completion whose first choice is `message`.
fn completion(message: Value, finish_reason: &str) -> String {
    json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "gpt-test",
        "choices": [{"index": 0, "message": message, "logprobs": null, "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 31, "total_tokens": 151},
    })
    .to_string()
}

/// The assistant message of the two-call answer: a search whose `limit` is a strict-mode
/// `null` (left out), and a refund.
fn two_calls() -> Value {
    json!({
        "role": "assistant",
        "content": "Looking that up.",
        "refusal": null,
        "tool_calls": [
            {"id": "call_search", "type": "function",
             "function": {"name": "http_search", "arguments": "{\"customer\":\"Ada\",\"limit\":null}"}},
            {"id": "call_refund", "type": "function",
             "function": {"name": "http_refund", "arguments": "{\"order_id\":\"A-1\"}"}},
        ],
    })
}

/// What [`two_calls`] is read as.
fn two_calls_read() -> ModelResponse {
    let mut expected = ModelResponse::calls([
        ToolCall::new("call_search", "http_search", json!({"customer": "Ada"})),
        ToolCall::new("call_refund", "http_refund", r#"{"order_id":"A-1"}"#),
    ])
    .with_usage(Usage::new(120, 31));
    expected.text = Some("Looking that up.".to_owned());
    expected
}

/// A conversation with one earlier round of calls.
fn conversation() -> Vec<Message> {
    vec![
        Message::system("You help with orders."),
        Message::user("Refund Ada's last order."),
        Message::Assistant {
            text: None,
            calls: vec![ToolCall::new(
                "call_0",
                "http_search",
                r#"{"customer":"Ada","limit":1}"#,
            )],
        },
        Message::Tool {
            call_id: "call_0".to_owned(),
            tool: "http_search".to_owned(),
            content: "Ada: 1 orders".to_owned(),
            is_error: false,
        },
    ]
}

async fn ask(chat: &OpenAiChat, catalog: &LoweredCatalog) -> Result<ModelResponse, ModelError> {
    let messages = conversation();
    chat.respond(ModelRequest::new(&messages, catalog)).await
}

#[tokio::test]
async fn tool_calls_come_back_with_usage_and_the_request_has_the_documented_shape() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let server = Server::start(vec![ok(completion(two_calls(), "tool_calls"))]).await;
    let chat = server.chat();
    let future = ask(&chat, &catalog);
    assert_send(&future);
    let response = future.await.expect("an answer");
    assert_eq!(response, two_calls_read());

    let received = server.received();
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!(request.request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(
        request.header("authorization"),
        Some("Bearer sk-test-secret")
    );
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(
        request.body,
        json!({
            "model": "gpt-test",
            "messages": [
                {"role": "system", "content": "You help with orders."},
                {"role": "user", "content": "Refund Ada's last order."},
                {"role": "assistant", "content": null, "tool_calls": [
                    {"id": "call_0", "type": "function",
                     "function": {"name": "http_search", "arguments": "{\"customer\":\"Ada\",\"limit\":1}"}},
                ]},
                {"role": "tool", "tool_call_id": "call_0", "content": "Ada: 1 orders"},
            ],
            "tools": openai::chat_tools(&catalog),
        })
    );
}

#[tokio::test]
async fn options_a_response_schema_and_no_key_or_tools_shape_the_request() {
    // A session shown no tool: the request has no `tools`.
    let empty = Runtime::builder(())
        .inventory(false)
        .build()
        .expect("builds")
        .lowered_catalog(
            &Session::new("none").with_scope(Scope::none()),
            Target::OpenAiStrict,
        )
        .expect("lowers");
    let server = Server::start(vec![ok(completion(
        json!({"role": "assistant", "content": "{\"intent\":\"refund\"}"}),
        "stop",
    ))])
    .await;
    let chat = OpenAiChat::new(format!("{}/", server.base_url), None, "local-model")
        .temperature(0.2)
        .max_tokens(256);
    let schema = json!({"type": "object", "properties": {"intent": {"type": "string"}},
        "required": ["intent"], "additionalProperties": false});
    let messages = [Message::user("I want my money back")];
    let response = chat
        .respond(ModelRequest::new(&messages, &empty).with_response_schema(&schema))
        .await
        .expect("an answer");
    assert_eq!(
        response,
        ModelResponse::text(r#"{"intent":"refund"}"#).with_usage(Usage::new(120, 31))
    );
    let received = server.received();
    assert_eq!(received[0].header("authorization"), None);
    assert_eq!(
        received[0].body,
        json!({
            "model": "local-model",
            "messages": [{"role": "user", "content": "I want my money back"}],
            "response_format": {"type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": true}},
            "temperature": 0.2,
            "max_tokens": 256,
        })
    );
}

#[tokio::test]
async fn malformed_arguments_are_passed_through_for_the_runtime_to_answer() {
    let (runtime, deps) = runtime();
    let catalog = catalog(&runtime);
    let broken = r#"{"order_id": "A-1"#;
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_broken", "type": "function",
         "function": {"name": "http_refund", "arguments": broken}},
    ]});
    let server = Server::start(vec![ok(completion(message, "tool_calls"))]).await;
    let response = ask(&server.chat(), &catalog).await.expect("not an error");
    assert_eq!(response.text, None);
    assert_eq!(
        response.calls,
        [ToolCall::new("call_broken", "http_refund", broken)]
    );
    assert_eq!(
        response.calls[0].arguments,
        Arguments::Json(broken.to_owned())
    );
    let report = runtime
        .execute(&Session::new("http"), &response.calls)
        .await;
    assert_eq!(
        report.observations()[0].error_kind(),
        Some("invalid_arguments")
    );
    assert_eq!(deps.refunds.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_rate_limit_is_waited_out_as_the_endpoint_asks() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let limited = Reply::Answer {
        status: 429,
        headers: vec![("retry-after", "1".to_owned())],
        body: json!({"error": {"message": "Rate limit reached", "type": "requests"}}).to_string(),
    };
    let server = Server::start(vec![limited, ok(completion(two_calls(), "tool_calls"))]).await;
    // The backoff alone would wait 10 ms: the gap is the endpoint's second.
    let response = ask(&server.chat(), &catalog).await.expect("an answer");
    assert_eq!(response, two_calls_read());
    let received = server.received();
    assert_eq!(received.len(), 2);
    let gap = received[1].at - received[0].at;
    assert!(gap >= Duration::from_millis(900), "waited {gap:?}");
}

#[tokio::test]
async fn a_lasting_rate_limit_is_rate_limited_after_every_retry() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let limited = Reply::Answer {
        status: 429,
        headers: vec![("retry-after-ms", "20".to_owned())],
        body: json!({"error": {"message": "Rate limit reached", "type": "requests"}}).to_string(),
    };
    let server = Server::start(vec![limited]).await;
    let error = ask(&server.chat().max_retries(2), &catalog)
        .await
        .expect_err("rate limited");
    assert_eq!(error.kind, ModelErrorKind::RateLimited);
    assert_eq!(error.status, Some(429));
    assert_eq!(error.retry_after, Some(Duration::from_millis(20)));
    assert_eq!(server.received().len(), 3);
    assert!(
        error.message.contains(&server.base_url) && error.message.contains("Rate limit reached"),
        "{error}"
    );
    assert!(error.message.contains("3 attempts"), "{error}");
}

#[tokio::test]
async fn a_server_error_is_retried() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let failed = answer(
        500,
        json!({"error": {"message": "The server had an error"}}).to_string(),
    );
    let server = Server::start(vec![failed, ok(completion(two_calls(), "tool_calls"))]).await;
    let response = ask(&server.chat(), &catalog).await.expect("an answer");
    assert_eq!(response, two_calls_read());
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body, received[1].body, "the same request again");
}

#[tokio::test]
async fn a_lasting_server_error_is_a_server_error() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let failed = answer(503, "upstream unavailable".to_owned());
    let server = Server::start(vec![failed]).await;
    let error = ask(&server.chat().max_retries(1), &catalog)
        .await
        .expect_err("fails");
    assert_eq!(error.kind, ModelErrorKind::Server);
    assert_eq!(error.status, Some(503));
    assert_eq!(error.retry_after, None);
    assert!(error.message.contains("upstream unavailable"), "{error}");
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn a_bad_request_is_refused_at_once_with_the_endpoint_message() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let body = json!({"error": {
        "message": "The model `gpt-test` does not exist or you do not have access to it.",
        "type": "invalid_request_error", "param": null, "code": "model_not_found"}});
    let server = Server::start(vec![answer(404, body.to_string())]).await;
    let error = ask(&server.chat(), &catalog).await.expect_err("refused");
    assert_eq!(error.kind, ModelErrorKind::Refused);
    assert_eq!(error.status, Some(404));
    assert_eq!(server.received().len(), 1);
    assert_eq!(
        error.message,
        format!(
            "POST {}/chat/completions refused the request with HTTP 404 Not Found: The model \
             `gpt-test` does not exist or you do not have access to it. (code `model_not_found`)",
            server.base_url
        )
    );
    assert!(!error.to_string().contains("sk-test-secret"));
}

#[tokio::test]
async fn an_answer_that_is_no_chat_completion_is_malformed_and_not_asked_again() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let html = Reply::Answer {
        status: 200,
        headers: vec![("content-type", "text/html".to_owned())],
        body: "<html><body>Welcome to the gateway</body></html>".to_owned(),
    };
    let no_choices =
        ok(json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": []}).to_string());
    let bad_calls = ok(completion(
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"type": "function", "function": {"name": "http_refund", "arguments": "{}"}}]}),
        "tool_calls",
    ));
    for (reply, says) in [
        (html, "not JSON"),
        (no_choices, "`choices[0].message`"),
        (bad_calls, "no string `id`"),
    ] {
        let server = Server::start(vec![reply]).await;
        let error = ask(&server.chat(), &catalog).await.expect_err("malformed");
        assert_eq!(error.kind, ModelErrorKind::Malformed, "{error}");
        assert_eq!(error.status, None);
        assert!(error.message.contains(says), "{error}");
        assert!(error.message.contains(&server.base_url), "{error}");
        assert_eq!(server.received().len(), 1, "{error}");
    }
}

#[tokio::test]
async fn a_dropped_connection_is_retried() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let server = Server::start(vec![
        Reply::Close,
        ok(completion(two_calls(), "tool_calls")),
    ])
    .await;
    let response = ask(&server.chat(), &catalog).await.expect("an answer");
    assert_eq!(response, two_calls_read());
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn connections_that_keep_dropping_are_a_connection_error() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let server = Server::start(vec![Reply::Close]).await;
    let error = ask(&server.chat().max_retries(2), &catalog)
        .await
        .expect_err("no answer");
    assert_eq!(error.kind, ModelErrorKind::Connection);
    assert_eq!(error.status, None);
    assert_eq!(server.received().len(), 3);
    assert!(error.message.contains(&server.base_url), "{error}");
    assert!(error.message.contains("3 attempts"), "{error}");
}

/// The events of a stream carrying the two-call answer.
fn two_calls_stream() -> Vec<String> {
    let chunk = |choices: Value| {
        json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1_700_000_000,
               "model": "gpt-test", "choices": choices})
    };
    let delta = |delta: Value| chunk(json!([{"index": 0, "delta": delta, "finish_reason": null}]));
    let events = [
        delta(json!({"role": "assistant", "content": "", "refusal": null})),
        delta(json!({"content": "Looking "})),
        delta(json!({"content": "that up."})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_search", "type": "function",
            "function": {"name": "http_search", "arguments": ""}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"customer\""}}]})),
        delta(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": ":\"Ada\",\"limit\":null}"}}]}),
        ),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "call_refund", "type": "function",
            "function": {"name": "http_refund", "arguments": "{\"order_id\":"}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 1, "function": {"arguments": "\"A-1\"}"}}]})),
        chunk(json!([{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])),
    ];
    let mut pieces: Vec<String> = events
        .iter()
        .map(|event| format!("data: {event}\n\n"))
        .collect();
    let usage = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": [],
        "usage": {"prompt_tokens": 120, "completion_tokens": 31, "total_tokens": 151}});
    pieces.push(format!("data: {usage}\n\n"));
    pieces.push("data: [DONE]\n\n".to_owned());
    // One event split across two writes.
    let split = pieces.remove(4);
    let (first, second) = split.split_at(20);
    pieces.insert(4, second.to_owned());
    pieces.insert(4, first.to_owned());
    pieces
}

#[tokio::test]
async fn a_stream_gives_the_same_answer_as_a_whole_one() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    for chunked in [true, false] {
        let server = Server::start(vec![Reply::Stream {
            pieces: two_calls_stream(),
            chunked,
            end: End::Finish,
        }])
        .await;
        let response = ask(&server.chat().streaming(true), &catalog)
            .await
            .expect("an answer");
        assert_eq!(response, two_calls_read(), "chunked: {chunked}");
        let body = &server.received()[0].body;
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"], json!({"include_usage": true}));
        assert_eq!(
            server.received()[0].header("accept"),
            Some("text/event-stream")
        );
    }
}

#[tokio::test]
async fn a_stream_cut_short_gives_no_calls() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let mut cut = two_calls_stream();
    // Up to the middle of the second call's arguments: no finish reason, no `[DONE]`.
    cut.truncate(8);
    for (chunked, kind) in [
        (false, ModelErrorKind::Malformed),
        (true, ModelErrorKind::Connection),
    ] {
        let server = Server::start(vec![Reply::Stream {
            pieces: cut.clone(),
            chunked,
            end: End::Cut,
        }])
        .await;
        let error = ask(&server.chat().streaming(true), &catalog)
            .await
            .expect_err("cut short");
        assert_eq!(error.kind, kind, "chunked: {chunked}: {error}");
        assert!(error.message.contains("cut short"), "{error}");
        assert_eq!(
            server.received().len(),
            1,
            "a cut stream is not asked again"
        );
    }
}

#[tokio::test]
async fn an_answer_slower_than_the_timeout_is_a_timeout() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let slow = Reply::Slow(
        Duration::from_secs(2),
        Box::new(ok(completion(two_calls(), "tool_calls"))),
    );
    let server = Server::start(vec![slow]).await;
    let started = Instant::now();
    let error = ask(&server.chat().timeout(Duration::from_millis(250)), &catalog)
        .await
        .expect_err("too slow");
    assert_eq!(error.kind, ModelErrorKind::Timeout);
    assert!(error.message.contains("250ms"), "{error}");
    assert!(started.elapsed() >= Duration::from_millis(250));
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_stream_that_stalls_is_a_timeout() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    // The head and the first events arrive at once; the rest never does.
    let mut pieces = two_calls_stream();
    pieces.truncate(3);
    let server = Server::start(vec![Reply::Stream {
        pieces,
        chunked: true,
        end: End::Stall(Duration::from_secs(2)),
    }])
    .await;
    let chat = server
        .chat()
        .streaming(true)
        .timeout(Duration::from_millis(250));
    let error = ask(&chat, &catalog).await.expect_err("too slow");
    assert_eq!(error.kind, ModelErrorKind::Timeout, "{error}");
    assert_eq!(server.received().len(), 1);
}

#[tokio::test]
async fn a_missing_model_or_a_bad_base_url_is_a_configuration_error() {
    let (runtime, _) = runtime();
    let catalog = catalog(&runtime);
    let server = Server::start(vec![ok(completion(two_calls(), "tool_calls"))]).await;
    for chat in [
        OpenAiChat::new(&server.base_url, Some("sk-test-secret".to_owned()), " "),
        OpenAiChat::new("not a url", Some("sk-test-secret".to_owned()), "gpt-test"),
        OpenAiChat::new("ftp://127.0.0.1/v1", None, "gpt-test"),
        OpenAiChat::new(&server.base_url, Some("sk-\nsecret".to_owned()), "gpt-test"),
    ] {
        let error = ask(&chat, &catalog).await.expect_err("misconfigured");
        assert_eq!(error.kind, ModelErrorKind::Config, "{error}");
        assert!(!error.message.contains("secret"), "{error}");
    }
    assert!(server.received().is_empty(), "nothing was sent");

    let chat = server.chat();
    let shown = format!("{chat:?}");
    assert!(!shown.contains("sk-test-secret"), "{shown}");
    assert!(shown.contains("api_key: Some(\"<redacted>\")"), "{shown}");
    assert_eq!(chat.target(), Target::OpenAiStrict);
    assert_eq!(chat.name(), "gpt-test");
}

#[tokio::test]
async fn a_retried_request_runs_the_tool_once() {
    let (runtime, deps) = runtime();
    let catalog = catalog(&runtime);
    let message = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_refund", "type": "function",
         "function": {"name": "http_refund", "arguments": "{\"order_id\":\"A-7\"}"}},
    ]});
    let server = Server::start(vec![
        answer(500, String::new()),
        ok(completion(message, "tool_calls")),
    ])
    .await;
    let model = server.chat();
    let session = Session::new("http");
    let mut messages = vec![Message::user("Refund A-7.")];
    let response = model
        .respond(ModelRequest::new(&messages, &catalog))
        .await
        .expect("an answer");
    assert_eq!(server.received().len(), 2, "the 500 was retried");
    let report = runtime.execute(&session, &response.calls).await;
    assert!(report.observations()[0].is_success(), "{report:?}");
    assert_eq!(report.observations()[0].content(), Some("refunded A-7 (1)"));
    assert_eq!(deps.refunds.load(Ordering::SeqCst), 1);

    // The conversation goes on with the call and its answer, as a run loop appends them.
    messages.push(Message::Assistant {
        text: response.text,
        calls: response.calls,
    });
    messages.extend(Message::tool_results(&report));
    let _ = model.respond(ModelRequest::new(&messages, &catalog)).await;
    let last = server.received().pop().expect("a third request");
    assert_eq!(
        last.body["messages"][2],
        json!({"role": "tool", "tool_call_id": "call_refund", "content": "refunded A-7 (1)"})
    );
    assert_eq!(deps.refunds.load(Ordering::SeqCst), 1);
}
