//! What the model receives of a result: redaction, truncation with an artifact, page notices,
//! and `read_artifact` for the rest.

use serde_json::json;
use tests::report::one_call;
use tool_runtime::output::{Redactor, SecretPattern};
use tool_runtime::{Page, Runtime, ToolError, tool, tools};

/// Deps of the output tests.
pub struct Desk;

/// Shows a connection configuration.
#[tool(read_only)]
fn config() -> serde_json::Value {
    json!({
        "dsn": "postgres://app:s3cret-pass@db.internal:5432/orders",
        "key": "sk-proj-0123456789abcdefghijABCDEFGHIJ",
        "header": "Authorization: Bearer eyJhbGciOi.eyJzdWIiOi.c2lnbmF0dXJl"
    })
}

/// Returns the numbers 0 to 999, one per line.
#[tool(read_only, max_output_chars = 100)]
fn numbers() -> String {
    (0..1000).map(|n| format!("{n}\n")).collect()
}

/// Lists letters, a page at a time.
#[tool(read_only, pagination)]
fn letters(
    /// Where to continue.
    cursor: Option<String>,
) -> Result<Page<char>, ToolError> {
    match cursor.as_deref() {
        None => Ok(Page::new(vec!['a', 'b'], Some("p2".to_owned())).with_total(3)),
        Some("p2") => Ok(Page::last(vec!['c']).with_total(3)),
        Some(other) => Err(ToolError::invalid_arguments(format!(
            "unknown cursor {other:?}"
        ))),
    }
}

/// Fails with a connection string in its error.
#[tool(read_only)]
fn leaky() -> Result<u32, ToolError> {
    Err(ToolError::failed(
        "cannot connect to mysql://root:toor@10.0.0.5/prod",
    ))
}

/// Echoes an internal ticket token.
#[tool(read_only)]
fn internal_token() -> &'static str {
    "token TKT-9f8e7d6c5b4a"
}

fn runtime() -> Runtime<Desk> {
    match Runtime::builder(Desk)
        .tools(tools![config, numbers, letters, leaky, internal_token])
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

#[tokio::test]
async fn secrets_are_replaced_by_their_kind() {
    let observation = one_call(&runtime(), "s", "config", "{}").await;
    assert_eq!(
        observation.content(),
        Some(
            r#"{"dsn":"postgres://app:[REDACTED:url_password]@db.internal:5432/orders","key":"[REDACTED:openai_api_key]","header":"Authorization: Bearer [REDACTED:bearer_token]"}"#
        )
    );
    assert_eq!(observation.redactions(), 3);
}

#[tokio::test]
async fn secrets_in_error_messages_are_redacted_too() {
    let observation = one_call(&runtime(), "s", "leaky", "{}").await;
    assert_eq!(
        observation.error().map(|error| error.message()),
        Some("cannot connect to mysql://root:[REDACTED:url_password]@10.0.0.5/prod")
    );
}

#[tokio::test]
async fn patterns_are_configurable() {
    let Ok(pattern) = SecretPattern::new("ticket_token", r"TKT-[0-9a-f]{12}") else {
        panic!("pattern");
    };
    let runtime = match Runtime::builder(Desk)
        .tools(tools![internal_token])
        .redactor(Redactor::with_patterns([pattern]))
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let observation = one_call(&runtime, "s", "internal_token", "{}").await;
    assert_eq!(observation.content(), Some("token [REDACTED:ticket_token]"));
}

#[tokio::test]
async fn a_cut_output_names_the_artifact_and_read_artifact_returns_the_rest() {
    let runtime = runtime();
    let observation = one_call(&runtime, "s", "numbers", "{}").await;
    let Some(id) = observation.artifact().map(str::to_owned) else {
        panic!("no artifact: {observation:?}");
    };
    let full: String = (0..1000).map(|n| format!("{n}\n")).collect();
    let total = full.chars().count();
    let expected = format!(
        "{}\n[... {} of {total} characters omitted (characters 70..{}); the full output is artifact {id}; read the omitted part with read_artifact {{\"artifact_id\": \"{id}\", \"offset\": 70, \"limit\": {}}}, or narrow the request ...]\n{}",
        &full[..70],
        total - 100,
        total - 30,
        total - 100,
        &full[total - 30..],
    );
    assert_eq!(observation.content(), Some(expected.as_str()));
    assert!(observation.truncated());

    let rest = one_call(
        &runtime,
        "s",
        "read_artifact",
        &json!({"artifact_id": id, "offset": 70, "limit": 40}).to_string(),
    )
    .await;
    assert_eq!(
        rest.content().map(str::to_owned),
        Some(format!(
            "[{id}: characters 70..110 of {total}; more from offset 110]\n{}",
            &full[70..110]
        ))
    );
    let missing = one_call(
        &runtime,
        "s",
        "read_artifact",
        r#"{"artifact_id":"art-0000000000000000"}"#,
    )
    .await;
    assert_eq!(
        missing.error().map(|error| error.message()),
        Some("there is no artifact `art-0000000000000000`")
    );
}

#[tokio::test]
async fn pages_tell_the_total_and_the_next_cursor() {
    let runtime = runtime();
    let first = one_call(&runtime, "s", "letters", "{}").await;
    assert_eq!(
        first.content(),
        Some(
            "{\"items\":[\"a\",\"b\"],\"next_cursor\":\"p2\",\"total\":3}\n[page: 2 items of 3; more remain: call again with \"cursor\": \"p2\"]"
        )
    );
    assert_eq!(
        first.page().and_then(|page| page.next_cursor.as_deref()),
        Some("p2")
    );
    let last = one_call(&runtime, "s", "letters", r#"{"cursor":"p2"}"#).await;
    assert_eq!(
        last.content(),
        Some("{\"items\":[\"c\"],\"total\":3}\n[page: 1 items of 3; this is the last page]")
    );
}
