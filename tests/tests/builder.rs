//! Choosing a runtime's tools: adding a tool keeps the program's `#[tool]`s, the tools left out
//! for other deps are listed, and deps shared as an `Arc` serve the tools written for them.
//!
//! A binary of its own: it asserts the whole set of tools an inventory-built runtime holds and the
//! tools it leaves out (every other linked file's tools typed to other deps would be left out too),
//! and the type and file paths its messages name (`builder::Warehouse`, `tests/tests/builder.rs`).

use std::sync::Arc;

use serde_json::json;
use tool_runtime::dynamic::DynamicTool;
use tool_runtime::{RunContext, Runtime, Session, ToolCall, tool, tools};

/// The deps of the runtime under test.
pub struct Shop {
    currency: &'static str,
}

/// Other deps, for tools this runtime cannot serve.
pub struct Warehouse;

/// Prices an item.
#[tool(read_only)]
async fn price(
    ctx: RunContext<Shop>,
    /// The item.
    item: String,
) -> String {
    format!("{item}: 3 {}", ctx.deps().currency)
}

/// Counts stock; needs the warehouse.
#[tool(read_only)]
async fn stock(
    ctx: RunContext<Warehouse>,
    /// The item.
    item: String,
) -> String {
    let Warehouse = ctx.deps();
    format!("{item}: 12")
}

/// Works with any deps.
#[tool(read_only)]
fn ping() -> &'static str {
    "pong"
}

fn weather() -> DynamicTool {
    let built = DynamicTool::builder(
        "weather",
        "Current weather of a city.",
        json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}),
    )
    .read_only()
    .handler(|args, _ctx| async move { Ok(json!({"city": args["city"], "sky": "clear"})) })
    .build();
    match built {
        Ok(tool) => tool,
        Err(error) => panic!("{error}"),
    }
}

fn names(runtime: &Runtime<Shop>) -> Vec<&str> {
    runtime.registry().names().collect()
}

#[test]
fn adding_a_tool_keeps_the_programs_tools() {
    let runtime = match Runtime::builder(Shop { currency: "EUR" })
        .tool(weather())
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    assert_eq!(
        names(&runtime),
        ["ping", "price", "read_artifact", "weather"]
    );
}

#[test]
fn one_tool_function_can_be_added_by_its_tool_handle() {
    let runtime = match Runtime::builder(Shop { currency: "EUR" })
        .inventory(false)
        .tool(ping::tool())
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    assert_eq!(names(&runtime), ["ping", "read_artifact"]);
}

#[test]
fn turning_the_inventory_off_keeps_exactly_the_tools_named() {
    let runtime = match Runtime::builder(Shop { currency: "EUR" })
        .inventory(false)
        .tools(tools![price])
        .tool(weather())
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    assert_eq!(names(&runtime), ["price", "read_artifact", "weather"]);
    assert!(runtime.left_out_tools().is_empty());
}

#[test]
fn tools_for_other_deps_are_listed_as_left_out() {
    let runtime = match Runtime::builder(Shop { currency: "EUR" }).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let left_out: Vec<(&str, &str)> = runtime
        .left_out_tools()
        .iter()
        .map(|tool| (tool.name.as_str(), tool.needs))
        .collect();
    assert_eq!(left_out, [("stock", "builder::Warehouse")]);
    let location = runtime.left_out_tools()[0].location.to_string();
    assert!(
        location.starts_with("tests/tests/builder.rs:"),
        "{location}"
    );
}

#[test]
fn a_tool_for_other_deps_named_explicitly_is_an_error() {
    let error = Runtime::builder(Shop { currency: "EUR" })
        .tools(tools![stock])
        .build()
        .err()
        .map(|error| error.to_string());
    let Some(error) = error else {
        panic!("expected a deps mismatch");
    };
    assert!(
        error.starts_with("tool `stock` (at tests/tests/builder.rs:")
            && error.ends_with(
                "takes a context with deps `builder::Warehouse`, but this registry is for deps `builder::Shop`"
            ),
        "{error}"
    );
}

#[tokio::test]
async fn deps_shared_as_an_arc_serve_the_tools_written_for_them() {
    let shared = Arc::new(Shop { currency: "CHF" });
    let runtime = match Runtime::builder(Arc::clone(&shared)).build() {
        Ok(runtime) => runtime,
        Err(error) => panic!("{error}"),
    };
    let names: Vec<&str> = runtime.registry().names().collect();
    assert_eq!(names, ["ping", "price", "read_artifact"]);
    let report = runtime
        .execute(
            &Session::new("s"),
            [ToolCall::new("c", "price", r#"{"item":"tea"}"#)],
        )
        .await;
    assert_eq!(report.observations()[0].content(), Some("tea: 3 CHF"));
}

/// A tool of one's own whose schema has a pattern no regex engine accepts.
struct BrokenSchema(tool_runtime::ToolSpec);

impl tool_runtime::core::Tool for BrokenSchema {
    fn spec(&self) -> &tool_runtime::ToolSpec {
        &self.0
    }

    fn deps_type(&self) -> Option<tool_runtime::core::DepsType> {
        None
    }

    fn prepare(
        &self,
        _args: tool_runtime::core::ToolArgs<'_>,
        _call: &tool_runtime::core::CallContext,
    ) -> Result<tool_runtime::core::ToolFuture, tool_runtime::ToolError> {
        Ok(Box::pin(async {
            tool_runtime::ToolOutput::from_serialize(&1)
        }))
    }
}

#[test]
fn a_schema_that_cannot_be_checked_is_a_build_error() {
    let spec = tool_runtime::ToolSpec::new(
        "broken",
        "Has a broken pattern.",
        json!({"type": "object", "properties": {"code": {"type": "string", "pattern": "(unclosed"}}}),
    );
    let error = Runtime::builder(Shop { currency: "EUR" })
        .inventory(false)
        .tool(BrokenSchema(spec))
        .build()
        .err()
        .map(|error| error.to_string());
    assert!(
        error.as_deref().is_some_and(
            |error| error.starts_with("the input schema of tool `broken` cannot be compiled")
        ),
        "{error:?}"
    );
}
