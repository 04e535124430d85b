//! Invoking tools by name with JSON arguments: errors name the field, defaults fill in,
//! unknown fields and tools are rejected.
//!
//! A binary of its own: the unknown tool's hint lists every deps-agnostic `#[tool]` the inventory
//! holds, which would include those of any file linked with it.

use std::sync::Arc;

use serde_json::json;
use tool_runtime::core::{CallContext, ToolArgs};
use tool_runtime::{ErrorKind, Registry, ToolError, ToolOutput, tool};

/// Searches orders.
#[tool(read_only)]
fn search(
    /// Free text.
    query: String,
    /// Results per page.
    #[default = 20]
    limit: u32,
    /// Only this status.
    status: Option<String>,
) -> String {
    format!("{query}/{limit}/{status:?}")
}

/// Says hello.
#[tool(read_only)]
fn hello() -> &'static str {
    "hello"
}

/// Finds records of a type.
#[tool(read_only)]
fn find(
    /// The record type.
    r#type: String,
) -> String {
    r#type
}

fn registry() -> Registry {
    match Registry::from_inventory::<()>() {
        Ok(registry) => registry,
        Err(error) => panic!("registry: {error}"),
    }
}

async fn invoke(name: &str, args: &str) -> Result<ToolOutput, ToolError> {
    let call = CallContext::new(Arc::new(()), "s", "c", name);
    invoke_with(name, args.into(), call).await
}

/// Calls a tool through the `Tool` trait, as a runtime does after planning.
async fn invoke_with(
    name: &str,
    args: ToolArgs<'_>,
    call: CallContext,
) -> Result<ToolOutput, ToolError> {
    let registry = registry();
    match registry.get(name) {
        Some(tool) => tool.call(args, &call).await,
        None => Err(registry.unknown_tool(name)),
    }
}

fn error_of(result: Result<ToolOutput, ToolError>) -> (ErrorKind, String) {
    match result {
        Ok(output) => panic!("expected an error, got {output:?}"),
        Err(error) => (error.kind().clone(), error.message().to_owned()),
    }
}

#[tokio::test]
async fn defaults_and_optional_parameters_fill_in() {
    let output = invoke("search", r#"{"query":"late"}"#)
        .await
        .map(|o| o.into_json());
    assert_eq!(output, Ok(r#""late/20/None""#.to_owned()));
    let output = invoke("search", r#"{"query":"late","limit":5,"status":null}"#)
        .await
        .map(|o| o.into_json());
    assert_eq!(output, Ok(r#""late/5/None""#.to_owned()));
}

#[tokio::test]
async fn wrong_type_names_the_field_expected_and_found() {
    assert_eq!(
        error_of(invoke("search", r#"{"query":"late","limit":"many"}"#).await),
        (
            ErrorKind::InvalidArguments,
            "`limit`: invalid type: string \"many\", expected u32".to_owned()
        )
    );
}

#[tokio::test]
async fn missing_unknown_and_malformed_are_invalid_arguments() {
    assert_eq!(
        error_of(invoke("search", r#"{"limit":1}"#).await),
        (
            ErrorKind::InvalidArguments,
            "missing field `query`".to_owned()
        )
    );
    assert_eq!(
        error_of(invoke("search", r#"{"query":"x","page":2}"#).await),
        (
            ErrorKind::InvalidArguments,
            "unknown field `page`, expected one of `query`, `limit`, `status`".to_owned()
        )
    );
    assert_eq!(
        error_of(invoke("search", r#"{"query": "x""#).await),
        (
            ErrorKind::InvalidArguments,
            "arguments are not valid JSON: EOF while parsing an object at line 1 column 13"
                .to_owned()
        )
    );
    assert_eq!(
        error_of(invoke("search", r#"["x"]"#).await),
        (
            ErrorKind::InvalidArguments,
            "arguments must be a JSON object of named parameters, got an array".to_owned()
        )
    );
}

#[tokio::test]
async fn no_arguments_means_an_empty_object() {
    for args in ["", "  ", "{}", "null", " null\n", "\n {} "] {
        let output = invoke("hello", args).await.map(|o| o.into_json());
        assert_eq!(output, Ok(r#""hello""#.to_owned()), "{args:?}");
    }
    let call = CallContext::new(Arc::new(()), "s", "c", "hello");
    let output = invoke_with("hello", json!(null).into(), call)
        .await
        .map(|o| o.into_json());
    assert_eq!(output, Ok(r#""hello""#.to_owned()));
}

#[tokio::test]
async fn arguments_may_come_as_a_value() {
    let call = CallContext::new(Arc::new(()), "s", "c", "search");
    let output = invoke_with(
        "search",
        json!({"query": "late", "limit": 3}).into(),
        call.clone(),
    )
    .await
    .map(|o| o.into_json());
    assert_eq!(output, Ok(r#""late/3/None""#.to_owned()));
    let error = invoke_with("search", json!({"query": 3}).into(), call).await;
    assert_eq!(
        error_of(error),
        (
            ErrorKind::InvalidArguments,
            "`query`: invalid type: integer `3`, expected a string".to_owned()
        )
    );
}

#[tokio::test]
async fn raw_identifiers_appear_unraw() {
    let output = invoke("find", r#"{"type":"order"}"#)
        .await
        .map(|o| o.into_json());
    assert_eq!(output, Ok(r#""order""#.to_owned()));
}

#[tokio::test]
async fn unknown_tool_lists_the_available_ones_and_the_nearest() {
    let error = invoke("serch", "{}").await.err();
    let Some(error) = error else {
        panic!("expected unknown_tool");
    };
    assert_eq!(error.kind(), &ErrorKind::UnknownTool);
    assert_eq!(
        error.message(),
        "there is no tool named `serch`; did you mean `search`?"
    );
    assert_eq!(error.hint(), Some("available tools: find, hello, search"));
}
