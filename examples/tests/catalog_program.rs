//! The `catalog` program, run as a user runs it: it lists what the runtime has and invokes a
//! tool through the runtime, the one path every call takes.

use std::process::{Command, Output, Stdio};

use examples::support::SupportDeps;
use serde_json::Value;
use tool_runtime::{Runtime, Session, ToolCall};

fn catalog(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_catalog"))
        .args(args)
        .output()
        .expect("the catalog program runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn runtime() -> Runtime<SupportDeps> {
    Runtime::builder(SupportDeps::demo())
        .build()
        .expect("the support-desk runtime builds")
}

/// What the runtime itself answers to one call, the way the program makes it.
fn observed(name: &str, arguments: &str) -> (bool, String) {
    let tokio = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let report = tokio.block_on(runtime().execute(
        &Session::new("cli"),
        [ToolCall::new("call-1", name, arguments)],
    ));
    let observation = &report.observations()[0];
    (observation.is_success(), observation.text_for_model())
}

/// The error object of an invocation that failed: the program prints the model's text, which
/// for an error is `{"error": {...}}`.
fn printed_error(output: &Output) -> Value {
    assert!(
        !output.status.success(),
        "a failed call exits with failure: {output:?}"
    );
    let printed: Value = serde_json::from_str(stdout(output).trim())
        .unwrap_or_else(|error| panic!("stdout is the error as JSON ({error}): {output:?}"));
    printed["error"].clone()
}

#[test]
fn lists_every_tool_the_runtime_has_including_read_artifact() {
    let output = catalog(&[]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    let runtime = runtime();
    let names: Vec<&str> = runtime.registry().names().collect();
    assert!(names.contains(&"read_artifact"), "{names:?}");
    assert!(
        text.starts_with(&format!("{} tools for SupportDeps\n", names.len())),
        "the header counts the runtime's tools:\n{text}"
    );
    let listed: Vec<&str> = text
        .lines()
        .filter(|line| !line.is_empty() && !line.starts_with(' '))
        .skip(1)
        .collect();
    assert_eq!(listed, names, "one entry per tool, sorted by name:\n{text}");
    let read_artifact = text
        .split("\n\n")
        .find(|entry| entry.starts_with("read_artifact\n"))
        .expect("an entry for read_artifact");
    assert!(read_artifact.contains("read_only"), "{read_artifact}");
    assert!(read_artifact.contains("\"artifact_id\""), "{read_artifact}");
}

#[test]
fn invokes_read_artifact_instead_of_calling_it_unknown() {
    let arguments = r#"{"artifact_id":"art-0000000000000000"}"#;
    let output = catalog(&["read_artifact", arguments]);
    let error = printed_error(&output);
    assert_eq!(error["kind"], "execution_failed", "{output:?}");
    assert!(
        error["message"]
            .as_str()
            .is_some_and(|message| message.contains("there is no artifact `art-0000000000000000`")),
        "{error}"
    );
}

#[test]
fn prints_what_the_runtime_gives_the_model() {
    let arguments = r#"{"order_id":"A-1024"}"#;
    let output = catalog(&["get_order_status", arguments]);
    assert!(output.status.success(), "{output:?}");
    let (success, text) = observed("get_order_status", arguments);
    assert!(success);
    assert_eq!(stdout(&output), format!("{text}\n"));
}

#[test]
fn an_invocation_passes_the_output_policy_like_every_call() {
    // Registry::invoke beside the runtime skipped redaction and truncation; the runtime's
    // path does not.
    let output = catalog(&["get_integration_config", "{}"]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(text.contains("[REDACTED:"), "secrets are redacted:\n{text}");
    assert_eq!(
        text,
        format!("{}\n", observed("get_integration_config", "{}").1)
    );

    let output = catalog(&["export_order_history"]);
    assert!(output.status.success(), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("read_artifact"),
        "a cut output says how to read the rest:\n{text}"
    );
}

#[test]
fn a_failed_call_prints_its_error_whole_and_exits_with_failure() {
    let output = catalog(&["get_order_status", r#"{"order_id": 7}"#]);
    let error = printed_error(&output);
    assert_eq!(error["kind"], "invalid_arguments");
    assert_eq!(
        stdout(&output),
        format!("{}\n", observed("get_order_status", r#"{"order_id": 7}"#).1)
    );

    let output = catalog(&["get_order_details", r#"{"order_id":"A-1008"}"#]);
    let error = printed_error(&output);
    assert_eq!(error["kind"], "unknown_tool");
    assert_eq!(error["details"]["nearest"], "get_order_status");
    let hint = error["hint"].as_str().expect("a hint");
    for name in runtime().registry().names() {
        assert!(hint.contains(name), "the hint names `{name}`: {hint}");
    }
}

/// Runs the program with a stdout whose reading end is already closed, as `| head` leaves it.
fn with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_catalog"))
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("the catalog program runs")
}

#[test]
fn stops_quietly_when_stdout_is_closed() {
    for args in [
        &[][..],
        &["get_order_status", r#"{"order_id":"A-1024"}"#][..],
    ] {
        let output = with_closed_stdout(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "catalog {args:?} exits with success on a closed pipe: {output:?}"
        );
        assert!(stderr.is_empty(), "and says nothing: {stderr}");
    }
}

#[test]
fn export_prints_the_catalog_as_each_provider_request_carries_it() {
    let runtime = runtime();
    let names: Vec<String> = runtime
        .catalog(&Session::new("cli"))
        .iter()
        .map(|spec| spec.name().to_owned())
        .collect();
    for (format, name_at) in [
        ("openai", "/function/name"),
        ("openai-responses", "/name"),
        ("anthropic", "/name"),
        ("anthropic-strict", "/name"),
        ("mcp", "/name"),
    ] {
        let output = catalog(&["--export", format]);
        assert!(output.status.success(), "{format}: {output:?}");
        let tools: Value = serde_json::from_str(&stdout(&output))
            .unwrap_or_else(|error| panic!("{format}: stdout is JSON ({error})"));
        let exported: Vec<&str> = tools
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .filter_map(|tool| tool.pointer(name_at)?.as_str())
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(exported, names, "{format}");
    }
    for format in ["gemini", "gemini-parameters"] {
        let output = catalog(&["--export", format]);
        assert!(output.status.success(), "{format}: {output:?}");
        let tools: Value = serde_json::from_str(&stdout(&output)).unwrap_or(Value::Null);
        let declarations = tools[0]["functionDeclarations"].as_array().map(Vec::len);
        assert_eq!(declarations, Some(names.len()), "{format}");
    }
    let output = catalog(&["--export", "cohere"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--export takes one of openai"), "{stderr}");
}

#[test]
fn tokens_prints_the_cost_per_target_and_per_tool() {
    let output = catalog(&["--tokens"]);
    assert!(output.status.success(), "{output:?}");
    let printed = stdout(&output);
    for target in ["openai_strict", "anthropic", "gemini", "mcp"] {
        let total = printed
            .lines()
            .find(|line| line.split_whitespace().next() == Some(target))
            .and_then(|line| line.split_whitespace().nth(1))
            .and_then(|total| total.parse::<usize>().ok());
        assert!(
            total.is_some_and(|total| total > 100),
            "{target}: {printed}"
        );
    }
    assert!(
        printed
            .lines()
            .any(|line| line.starts_with("get_order_status")),
        "{printed}"
    );
}
