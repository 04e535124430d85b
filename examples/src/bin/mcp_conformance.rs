//! The server the MCP conformance suite (`@modelcontextprotocol/conformance`) tests: its fixed
//! test tools, written as ordinary `#[tool]`s and served by the runtime's MCP server.
//!
//! ```text
//! cargo run -p examples --bin mcp_conformance -- --http 127.0.0.1:0   # Streamable HTTP at /mcp
//! cargo run -p examples --bin mcp_conformance -- --stdio
//! ```
//!
//! Over HTTP it prints `listening on http://ADDRESS/mcp` once it accepts connections.
#![allow(
    clippy::print_stderr,
    reason = "a command-line program reports its own failures"
)]

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_runtime::client::{Elicitation, Elicited, LogLevel, Progress, SamplingRequest};
use tool_runtime::mcp_server::McpServer;
use tool_runtime::{Content, Contents, EmbeddedResource, RunContext, Runtime, ToolError, tool};

/// The suite's tools need nothing of their own.
struct Deps;

/// A 1x1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// An empty WAV file (its 44-byte header).
const WAV: &str = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQAAAAA=";

/// Returns a simple text response.
#[tool(read_only)]
fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns an image (a 1x1 PNG).
#[tool(read_only)]
fn test_image_content() -> Contents {
    Contents::new().with(Content::image(PNG, "image/png"))
}

/// Returns a sound (an empty WAV).
#[tool(read_only)]
fn test_audio_content() -> Contents {
    Contents::new().with(Content::audio(WAV, "audio/wav"))
}

/// Returns an embedded text resource.
#[tool(read_only)]
fn test_embedded_resource() -> Contents {
    Contents::new().with(Content::resource(EmbeddedResource::text(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )))
}

/// Returns text, an image and an embedded resource.
#[tool(read_only)]
fn test_multiple_content_types() -> Contents {
    Contents::from(vec![
        Content::text("Multiple content types test:"),
        Content::image(PNG, "image/png"),
        Content::resource(EmbeddedResource::text(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        )),
    ])
}

/// Sends three log messages while it runs.
#[tool(read_only)]
async fn test_tool_with_logging(ctx: RunContext) -> &'static str {
    ctx.log(LogLevel::Info, "Tool execution started").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool processing data").await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    ctx.log(LogLevel::Info, "Tool execution completed").await;
    "Tool with logging executed successfully"
}

/// Fails on purpose.
#[tool(read_only)]
fn test_error_handling() -> Result<String, ToolError> {
    Err(ToolError::failed(
        "This tool intentionally returns an error for testing",
    ))
}

/// Reports progress 0, 50 and 100 of 100.
#[tool(read_only)]
async fn test_tool_with_progress(ctx: RunContext) -> &'static str {
    for (step, done) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if step > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.report_progress(Progress::new(done).of(100.0)).await;
    }
    "Tool with progress executed successfully"
}

/// Asks the client's model to answer a prompt.
#[tool(read_only)]
async fn test_sampling(
    ctx: RunContext,
    /// The prompt to send to the LLM
    prompt: String,
) -> Result<String, ToolError> {
    let answer = ctx.sample(SamplingRequest::new(prompt, 100)).await?;
    Ok(format!("LLM response: {}", answer.text))
}

/// Asks the client's user for a name and an email address.
#[tool(read_only)]
async fn test_elicitation(
    ctx: RunContext,
    /// The message to show the user
    message: String,
) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "User's response"},
            "email": {"type": "string", "description": "User's email address"},
        },
        "required": ["username", "email"],
    });
    answered(
        "User response",
        ctx.elicit(Elicitation::new(message, schema)).await?,
    )
}

/// Asks the client's user with a form whose fields have defaults (SEP-1034).
#[tool(read_only)]
async fn test_elicitation_sep1034_defaults(ctx: RunContext) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": {"type": "boolean", "description": "Verified user", "default": true},
        },
    });
    let asked = Elicitation::new(
        "Please review and update the form fields with defaults",
        schema,
    );
    answered("Elicitation completed", ctx.elicit(asked).await?)
}

/// Asks the client's user with every form of enum (SEP-1330).
#[tool(read_only)]
async fn test_elicitation_sep1330_enums(ctx: RunContext) -> Result<String, ToolError> {
    let titled = |title: &str| {
        json!([
            {"const": "value1", "title": format!("First {title}")},
            {"const": "value2", "title": format!("Second {title}")},
            {"const": "value3", "title": format!("Third {title}")},
        ])
    };
    let schema = json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": titled("Option")},
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
            },
            "titledMulti": {"type": "array", "items": {"anyOf": titled("Choice")}},
        },
    });
    let asked = Elicitation::new("Please choose from the options", schema);
    answered("Elicitation completed", ctx.elicit(asked).await?)
}

/// How the user answered, as the tool's text.
fn answered(what: &str, answer: Elicited) -> Result<String, ToolError> {
    Ok(match answer {
        Elicited::Accept(content) => format!("{what}: action=accept, content={content}"),
        Elicited::Decline => format!("{what}: action=decline"),
        Elicited::Cancel => format!("{what}: action=cancel"),
    })
}

/// A postal address.
#[derive(Debug, Deserialize, JsonSchema)]
#[schemars(rename = "address")]
#[allow(dead_code, reason = "the tool only shows the schema")]
struct Address {
    street: Option<String>,
    city: Option<String>,
}

/// Tool with JSON Schema 2020-12 features
#[tool(read_only)]
fn json_schema_2020_12_tool(name: Option<String>, address: Option<Address>) -> Value {
    json!({"name": name, "address": address.is_some()})
}

/// Answers after a pause, for the suite's stream reconnection test.
#[tool(read_only)]
async fn test_reconnection() -> &'static str {
    tokio::time::sleep(Duration::from_millis(100)).await;
    "Reconnection test completed"
}

const USAGE: &str = "usage: mcp_conformance --http ADDRESS | --stdio";

#[tokio::main]
async fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let transport = match (args.next().as_deref(), args.next()) {
        (Some("--http"), Some(address)) => Some(address),
        (Some("--stdio"), None) => None,
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    match serve(transport).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(http: Option<String>) -> Result<(), String> {
    let runtime = Runtime::builder(Deps)
        .build()
        .map_err(|error| format!("cannot build the runtime: {error}"))?;
    let server = McpServer::new(runtime).named("mcp-conformance", env!("CARGO_PKG_VERSION"));
    let Some(address) = http else {
        return server
            .serve_stdio()
            .await
            .map_err(|error| error.to_string());
    };
    let listener = server
        .bind(address.as_str())
        .await
        .map_err(|error| error.to_string())?;
    let url = listener.url().map_err(|error| error.to_string())?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "listening on {url}")
        .and_then(|()| stdout.flush())
        .map_err(|error| format!("cannot write to stdout: {error}"))?;
    drop(stdout);
    listener.serve().await.map_err(|error| error.to_string())
}
