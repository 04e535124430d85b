//! What the model sees of results and errors: no secret in any part of it, errors within the
//! output limit, truncation notices whose suggested call works, artifact pages returned
//! exactly and only to their session.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use serde_json::{Value, json};
use tests::report::one_call;
use tool_runtime::output::{MemoryArtifacts, Redactor, SecretPattern};
use tool_runtime::{Page, RunContext, Runtime, ToolError, tool};

/// Deps of these tests.
pub struct Desk;

const KEY: &str = "sk-proj-abcdefghijklmnopqrstuvwx1234";

/// Returns a document whose text has a key on its second line.
#[tool(read_only)]
fn document() -> Value {
    json!({ "content": format!("first line\n{KEY}") })
}

/// Fails with a key in its hint and its details.
#[tool(read_only)]
fn failing_with_secrets() -> Result<u32, ToolError> {
    Err(ToolError::failed("the backend refused the call")
        .with_hint(format!("retry with key {KEY}"))
        .with_details(json!({ "request": { "authorization": format!("Bearer {KEY}") } })))
}

/// A page whose cursor is a token.
#[tool(read_only, pagination)]
fn paged(
    /// Where to continue.
    cursor: Option<String>,
) -> Result<Page<u32>, ToolError> {
    let _ = cursor;
    Ok(Page::new(
        vec![1, 2],
        Some("eyJhbGciOiJIUzI1.eyJzdWIiOiIxMjM0.c2lnbmF0dXJlXyz".to_owned()),
    ))
}

/// Fails with a very long message.
#[tool(read_only, max_output_chars = 1000)]
fn huge_error() -> Result<u32, ToolError> {
    Err(ToolError::failed("x".repeat(10 << 20)))
}

/// Returns 40,000 characters: lines of a counter, with keys here and there.
#[tool(read_only)]
fn long_report() -> String {
    (0..4_000)
        .map(|n| {
            if n % 500 == 250 {
                format!("{KEY}!!\n")
            } else {
                format!("{n:09}\n")
            }
        })
        .collect()
}

/// Ticks counted by a task beside the turn.
static TICKS: AtomicU64 = AtomicU64::new(0);
/// The ticks seen when `huge_output` returned.
static TICKS_AT_RETURN: AtomicU64 = AtomicU64::new(0);

/// Returns 8 MiB of text, with a key in it.
#[tool(read_only)]
fn huge_output() -> String {
    TICKS_AT_RETURN.store(TICKS.load(Ordering::SeqCst), Ordering::SeqCst);
    let mut text = "abc def ".repeat(1 << 20);
    text.push_str(KEY);
    text
}

/// Returns a note with a key in it: a string result.
#[tool(read_only)]
fn note_with_key() -> String {
    format!("call me with {KEY}")
}

/// What `reads_nested` read of its nested calls.
static READ_NESTED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Reads the note and the document through nested calls.
#[tool(read_only)]
async fn reads_nested(ctx: RunContext<Desk>) -> Result<u32, ToolError> {
    let note = ctx.call_tool("note_with_key", json!({})).await?;
    let document = ctx.call_tool("document", json!({})).await?;
    if let Ok(mut read) = READ_NESTED.lock() {
        read.extend([
            note.text().into_owned(),
            note.json().to_owned(),
            document.json().to_owned(),
        ]);
    }
    Ok(2)
}

fn runtime() -> Runtime<Desk> {
    match Runtime::builder(Desk).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

#[tokio::test]
async fn a_key_after_an_escaped_newline_is_redacted() {
    let observation = one_call(&runtime(), "s", "document", "{}").await;
    let text = observation.text_for_model();
    assert!(!text.contains(KEY), "{text}");
    assert_eq!(
        text,
        r#"{"content":"first line\n[REDACTED:openai_api_key]"}"#
    );
    assert_eq!(observation.redactions(), 1);
}

#[tokio::test]
async fn a_calling_tool_reads_its_nested_results_redacted_text_and_json_alike() {
    let observation = one_call(&runtime(), "s", "reads_nested", "{}").await;
    assert_eq!(observation.error_kind(), None, "{observation:?}");
    let read = READ_NESTED
        .lock()
        .map(|read| read.clone())
        .unwrap_or_default();
    assert_eq!(
        read,
        [
            "call me with [REDACTED:openai_api_key]".to_owned(),
            "\"call me with [REDACTED:openai_api_key]\"".to_owned(),
            r#"{"content":"first line\n[REDACTED:openai_api_key]"}"#.to_owned(),
        ]
    );
}

#[tokio::test]
async fn hints_and_details_of_errors_are_redacted() {
    let observation = one_call(&runtime(), "s", "failing_with_secrets", "{}").await;
    let text = observation.text_for_model();
    assert!(!text.contains(KEY), "{text}");
    let error = observation.error().cloned();
    assert_eq!(
        error.as_ref().and_then(|error| error.hint()),
        Some("retry with key [REDACTED:openai_api_key]")
    );
    assert_eq!(
        error.as_ref().and_then(|error| error.details()).cloned(),
        Some(json!({ "request": { "authorization": "Bearer [REDACTED:openai_api_key]" } }))
    );
}

#[tokio::test]
async fn the_page_notice_is_redacted_too() {
    let observation = one_call(&runtime(), "s", "paged", "{}").await;
    assert_eq!(
        observation.content(),
        Some(
            "{\"items\":[1,2],\"next_cursor\":\"[REDACTED:jwt]\"}\n[page: 2 items; more remain: call again with \"cursor\": \"[REDACTED:jwt]\"]"
        )
    );
}

#[tokio::test]
async fn custom_patterns_that_cannot_share_one_regex_keep_the_built_in_ones() {
    let patterns: Vec<SecretPattern> = (0..10)
        .filter_map(|n| SecretPattern::new(format!("word{n}"), r"\w{200}").ok())
        .collect();
    let runtime = match Runtime::builder(Desk)
        .redactor(Redactor::with_patterns(patterns))
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let observation = one_call(&runtime, "s", "document", "{}").await;
    assert!(!observation.text_for_model().contains(KEY));
}

#[tokio::test]
async fn an_error_is_cut_to_the_tools_limit_with_a_notice() {
    let observation = one_call(&runtime(), "s", "huge_error", "{}").await;
    let Some(error) = observation.error() else {
        panic!("{observation:?}");
    };
    let message = error.message();
    assert!(message.chars().count() < 1_600, "{}", message.len());
    assert!(
        message.contains("characters omitted"),
        "{}",
        &message[..200]
    );
    assert!(observation.truncated());
    assert!(observation.text_for_model().len() < 2_000);
}

/// The `read_artifact` arguments a truncation notice suggests.
fn suggested_call(content: &str) -> Value {
    let Some(start) = content.find("read_artifact {") else {
        panic!("no suggestion in {content}");
    };
    let rest = &content[start + "read_artifact ".len()..];
    let end = rest.find('}').map_or(rest.len(), |end| end + 1);
    match serde_json::from_str(&rest[..end]) {
        Ok(args) => args,
        Err(error) => panic!("{error}: {}", &rest[..end]),
    }
}

#[tokio::test]
async fn the_suggested_read_works_and_pages_return_the_stored_text_exactly() {
    let runtime = runtime();
    let cut = one_call(&runtime, "s-1", "long_report", "{}").await;
    assert!(cut.truncated());
    let Some(id) = cut.artifact().map(str::to_owned) else {
        panic!("no artifact");
    };
    let content = cut.content().unwrap_or_default();
    assert!(!content.contains(KEY));
    let args = suggested_call(content);
    assert_eq!(args["limit"], json!(16_000), "{args}");
    let page = one_call(&runtime, "s-1", "read_artifact", &args.to_string()).await;
    assert!(page.is_success(), "{page:?}");

    // Read the whole artifact page by page, starting at odd offsets; the pages put together
    // are the stored (redacted) text, byte for byte.
    let expected: String = (0..4_000)
        .map(|n| {
            if n % 500 == 250 {
                "[REDACTED:openai_api_key]!!\n".to_owned()
            } else {
                format!("{n:09}\n")
            }
        })
        .collect();
    let mut read = String::new();
    let mut offset = 0;
    let mut pages = 0;
    while offset < expected.chars().count() {
        let args = json!({"artifact_id": id, "offset": offset, "limit": 7_777});
        let page = one_call(&runtime, "s-1", "read_artifact", &args.to_string()).await;
        let Some(text) = page.content() else {
            panic!("{page:?}");
        };
        let body = text.split_once('\n').map_or("", |(_, body)| body);
        read.push_str(body);
        offset += body.chars().count();
        pages += 1;
        assert_eq!(page.redactions(), 0);
    }
    assert!(pages > 1);
    assert_eq!(read, expected);
    // A page that starts inside a redaction marker comes back as stored.
    let args = json!({"artifact_id": id, "offset": 2_510, "limit": 40});
    let page = one_call(&runtime, "s-1", "read_artifact", &args.to_string()).await;
    let body: String = expected.chars().skip(2_510).take(40).collect();
    assert!(page.content().is_some_and(|text| text.ends_with(&body)));
}

#[tokio::test]
async fn an_artifact_is_readable_only_from_its_session() {
    let runtime = match Runtime::builder(Desk)
        .artifacts(MemoryArtifacts::default())
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let cut = one_call(&runtime, "s-1", "long_report", "{}").await;
    let Some(id) = cut.artifact().map(str::to_owned) else {
        panic!("no artifact");
    };
    let args = json!({"artifact_id": id}).to_string();
    let own = one_call(&runtime, "s-1", "read_artifact", &args).await;
    assert!(own.is_success());
    let other = one_call(&runtime, "s-2", "read_artifact", &args).await;
    assert_eq!(
        other.error().map(|error| error.message().to_owned()),
        Some(format!("there is no artifact `{id}`"))
    );
}

#[tokio::test]
async fn an_empty_tool_name_gets_no_suggestion() {
    let observation = one_call(&runtime(), "s", "", "{}").await;
    let error = observation.error().cloned();
    assert_eq!(
        error.as_ref().map(|error| error.message()),
        Some("there is no tool named ``")
    );
    assert_eq!(
        error
            .as_ref()
            .and_then(|error| error.details())
            .map(|details| details["nearest"].clone()),
        Some(Value::Null)
    );
}

#[tokio::test]
async fn a_large_output_is_shaped_without_holding_up_the_turns_task() {
    // One thread: while the output is shaped, the ticker runs only if the turn's task yields.
    let done = Arc::new(AtomicBool::new(false));
    let ticker = tokio::spawn({
        let done = Arc::clone(&done);
        async move {
            while !done.load(Ordering::SeqCst) {
                TICKS.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
            }
        }
    });
    let observation = one_call(&runtime(), "s", "huge_output", "{}").await;
    let during = TICKS.load(Ordering::SeqCst) - TICKS_AT_RETURN.load(Ordering::SeqCst);
    done.store(true, Ordering::SeqCst);
    let _ = ticker.await;
    assert!(during > 0, "the turn's task did not yield while shaping");
    assert!(observation.truncated());
    assert_eq!(observation.redactions(), 1);
    let content = observation.content().unwrap_or_default();
    assert!(content.starts_with("abc def abc def"), "{}", &content[..40]);
    assert!(
        content.ends_with("abc def [REDACTED:openai_api_key]"),
        "{content}"
    );
}
