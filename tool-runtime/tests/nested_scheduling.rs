//! The calls a tool makes obey the scheduler's one rule, as a turn's calls do: parallel-safe
//! calls overlap unless they share a declared resource; any other runs alone.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use tool_runtime::{RunContext, Runtime, Session, ToolCall, ToolError, tool, tools};

/// Counts the nested calls in flight, and the most at once.
#[derive(Default)]
pub struct Meter {
    in_flight: AtomicUsize,
    most: AtomicUsize,
}

impl Meter {
    async fn measure(&self) {
        let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        self.most.fetch_max(now, Ordering::SeqCst);
        tokio::time::sleep(Duration::from_millis(10)).await;
        self.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Reads the orders table.
#[tool(read_only, resources("db:orders"))]
async fn read_orders(ctx: RunContext<Meter>) -> u32 {
    ctx.deps().measure().await;
    1
}

/// Reads the orders table too.
#[tool(read_only, resources("db:orders"))]
async fn count_orders(ctx: RunContext<Meter>) -> u32 {
    ctx.deps().measure().await;
    1
}

/// Reads the users table.
#[tool(read_only, resources("db:users"))]
async fn read_users(ctx: RunContext<Meter>) -> u32 {
    ctx.deps().measure().await;
    1
}

/// Calls two tools at once; runs alone, so it may call any tool.
#[tool(mutates_workspace, idempotency = "off")]
async fn fan_out(
    ctx: RunContext<Meter>,
    /// The first tool.
    first: String,
    /// The second tool.
    second: String,
) -> Result<String, ToolError> {
    let (a, b) = tokio::join!(
        ctx.call_tool(&first, json!({})),
        ctx.call_tool(&second, json!({}))
    );
    a?;
    b?;
    Ok("done".to_owned())
}

async fn most_at_once(first: &str, second: &str) -> usize {
    let runtime = Runtime::builder(Meter::default())
        .inventory(false)
        .tools(tools![read_orders, count_orders, read_users, fan_out])
        .build()
        .expect("builds");
    let report = runtime
        .execute(
            &Session::new("s"),
            [ToolCall::new(
                "c1",
                "fan_out",
                json!({"first": first, "second": second}),
            )],
        )
        .await;
    assert_eq!(
        report.observations()[0].content(),
        Some("done"),
        "{report:?}"
    );
    runtime.deps().most.load(Ordering::SeqCst)
}

#[tokio::test(start_paused = true)]
async fn nested_reads_of_disjoint_resources_overlap() {
    assert_eq!(most_at_once("read_orders", "read_users").await, 2);
}

#[tokio::test(start_paused = true)]
async fn nested_reads_sharing_a_resource_never_overlap() {
    assert_eq!(most_at_once("read_orders", "count_orders").await, 1);
}
