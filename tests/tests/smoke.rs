//! Smoke test.
use std::sync::Arc;
use tool_runtime::{CallContext, RunContext, ToolError, tool};

struct Deps {
    region: String,
}

/// Look up the status and ETA of one order.
///
/// Use only when the user gave an order id.
#[tool(read_only, timeout = "5s")]
async fn get_order_status(
    ctx: RunContext<Deps>,
    /// Order id, format A-NNNN, for example "A-1024".
    order_id: String,
    /// Include the line items (default false).
    include_items: Option<bool>,
    /// How many.
    #[default = 20]
    limit: u32,
) -> Result<String, ToolError> {
    Ok(format!(
        "{order_id} {} {include_items:?} {limit}",
        ctx.deps().region
    ))
}

#[tokio::test]
async fn smoke() {
    let spec = get_order_status::spec();
    println!("{}", serde_json::to_string_pretty(spec).unwrap());
    let call = CallContext::new(
        Arc::new(Deps {
            region: "eu".into(),
        }),
        "s",
        "c",
        "get_order_status",
    );
    let out = get_order_status::tool()
        .call(r#"{"order_id":"A-1"}"#.into(), call.clone())
        .await;
    println!("{out:?}");
    let out = get_order_status::tool()
        .call(r#"{"order_id":5}"#.into(), call)
        .await;
    println!("{out:?}");
}
