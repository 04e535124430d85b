//! Re-entrant calls and cancellation of a turn.

use std::time::Duration;

use tool_runtime::{
    CancellationToken, RunContext, Runtime, Session, ToolCall, ToolError, tool, tools,
};

/// Deps of the turn-control tests.
pub struct Shop {
    /// The price list.
    prices: Vec<(&'static str, u32)>,
}

/// The price of one item.
#[tool(read_only, version = "2.1")]
async fn price(ctx: RunContext<Shop>, item: String) -> Result<u32, ToolError> {
    ctx.deps()
        .prices
        .iter()
        .find(|(name, _)| *name == item)
        .map(|(_, price)| *price)
        .ok_or_else(|| ToolError::failed(format!("no item {item}")))
}

/// The total of a basket: calls `price` for each item, through the runtime.
#[tool(read_only)]
async fn basket_total(ctx: RunContext<Shop>, items: Vec<String>) -> Result<String, ToolError> {
    let mut total = 0;
    for item in items {
        let output = ctx
            .call_tool("price", serde_json::json!({ "item": item }))
            .await?;
        total += output
            .json()
            .parse::<u32>()
            .map_err(|error| ToolError::failed(error.to_string()))?;
    }
    Ok(format!(
        "{total} (call {} in session {})",
        ctx.call_id(),
        ctx.session_id()
    ))
}

/// Calls itself forever.
#[tool(read_only)]
async fn recurse(ctx: RunContext<Shop>) -> Result<String, ToolError> {
    let output = ctx.call_tool("recurse", serde_json::json!({})).await?;
    Ok(output.into_json())
}

/// Calls `price` with wrong arguments.
#[tool(read_only)]
async fn sloppy(ctx: RunContext<Shop>) -> Result<String, ToolError> {
    let output = ctx
        .call_tool("price", serde_json::json!({ "sku": 1 }))
        .await?;
    Ok(output.into_json())
}

/// Takes its time.
#[tool(read_only)]
async fn slow(millis: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    millis
}

/// A write that takes its time.
#[tool(mutates_workspace)]
async fn slow_write(millis: u64) -> u64 {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    millis
}

fn runtime() -> Runtime<Shop> {
    let shop = Shop {
        prices: vec![("tea", 3), ("cake", 5)],
    };
    match Runtime::builder(shop)
        .tools(tools![
            price,
            basket_total,
            recurse,
            sloppy,
            slow,
            slow_write
        ])
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    }
}

#[tokio::test]
async fn observations_name_the_call_the_tool_and_its_version() {
    let report = runtime()
        .execute(
            &Session::new("s-ids"),
            [
                ToolCall::new("c-1", "price", r#"{"item":"tea"}"#),
                ToolCall::new("c-2", "price", r#"{"item":7}"#),
                ToolCall::new("c-3", "slow", r#"{"millis":0}"#),
                ToolCall::new("c-4", "prices", "{}"),
            ],
        )
        .await;
    let identities: Vec<_> = report
        .observations()
        .iter()
        .map(|observation| {
            (
                observation.call_id(),
                observation.tool(),
                observation.tool_version(),
                observation.error_kind(),
            )
        })
        .collect();
    assert_eq!(
        identities,
        [
            ("c-1", "price", Some("2.1"), None),
            ("c-2", "price", Some("2.1"), Some("invalid_arguments")),
            ("c-3", "slow", None, None),
            ("c-4", "prices", None, Some("unknown_tool")),
        ]
    );
}

#[tokio::test]
async fn a_tool_can_call_another_with_the_same_injection() {
    let report = runtime()
        .execute(
            &Session::new("s-1"),
            vec![ToolCall::new(
                "c1",
                "basket_total",
                r#"{"items":["tea","cake","tea"]}"#,
            )],
        )
        .await;
    assert_eq!(
        report.observations()[0].content(),
        Some("11 (call c1 in session s-1)")
    );
}

#[tokio::test]
async fn nested_calls_are_planned_and_limited_like_the_model_s() {
    let runtime = runtime();
    let report = runtime
        .execute(
            &Session::new("s"),
            vec![
                ToolCall::new("r", "recurse", "{}"),
                ToolCall::new("x", "sloppy", "{}"),
            ],
        )
        .await;
    assert_eq!(
        report.observations()[0].error_kind(),
        Some("call_depth_exceeded")
    );
    assert_eq!(
        report.observations()[0]
            .error()
            .map(|error| error.message()),
        Some("tool `recurse` called `recurse` 5 levels deep; the limit is 4")
    );
    assert_eq!(
        report.observations()[1].error_kind(),
        Some("invalid_arguments")
    );
    assert_eq!(
        report.observations()[1]
            .error()
            .map(|error| error.message()),
        Some("unknown field `sku`, expected `item`")
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_turn_answers_every_pending_call() {
    let runtime = runtime();
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        trigger.cancel();
    });
    let report = runtime
        .execute_with_cancel(
            &Session::new("s"),
            vec![
                ToolCall::new("quick", "slow", r#"{"millis":10}"#),
                ToolCall::new("long", "slow", r#"{"millis":1000}"#),
                ToolCall::new("later", "slow_write", r#"{"millis":10}"#),
                ToolCall::new("unknown", "nope", "{}"),
            ],
            cancel,
        )
        .await;
    let kinds: Vec<(&str, Option<&str>)> = report
        .observations()
        .iter()
        .map(|o| (o.call_id(), o.error_kind()))
        .collect();
    assert_eq!(
        kinds,
        [
            ("quick", None),
            ("long", Some("cancelled")),
            ("later", Some("cancelled")),
            ("unknown", Some("unknown_tool")),
        ]
    );
    assert_eq!(report.observations()[0].content(), Some("10"));
}
