//! Every context form stays out of the schema and receives the session's context when the
//! tool is invoked.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_runtime::core::{CallContext, Tool};
use tool_runtime::{RunContext, ToolError, tool};

/// What the tools under test share.
#[derive(Debug)]
pub struct Deps {
    /// A value each tool reports back, to prove the deps were injected.
    pub marker: &'static str,
}

type DeskContext = RunContext<Deps>;

fn seen(ctx: &RunContext<Deps>, order_id: &str) -> String {
    format!(
        "{}|{}|{}|{order_id}",
        ctx.session_id(),
        ctx.call_id(),
        ctx.deps().marker
    )
}

/// Typed context, first.
#[tool(read_only)]
async fn typed(
    ctx: RunContext<Deps>,
    /// The order.
    order_id: String,
) -> String {
    seen(&ctx, &order_id)
}

/// Untyped context.
#[tool(read_only)]
fn untyped(
    ctx: RunContext,
    /// The order.
    order_id: String,
) -> String {
    let marker = ctx
        .deps()
        .downcast_ref::<Deps>()
        .map_or("?", |deps| deps.marker);
    format!("{}|{}|{marker}|{order_id}", ctx.session_id(), ctx.call_id())
}

/// Borrowed context, last.
#[tool(read_only)]
async fn borrowed(
    /// The order.
    order_id: String,
    ctx: &RunContext<Deps>,
) -> String {
    seen(ctx, &order_id)
}

/// Mutably borrowed context, in the middle.
#[tool(read_only)]
fn borrowed_mut(
    /// The order.
    order_id: String,
    ctx: &mut RunContext<Deps>,
    /// Ignored.
    _pad: Option<u8>,
) -> String {
    seen(ctx, &order_id)
}

/// Shared context.
#[tool(read_only)]
fn shared(
    ctx: Arc<RunContext<Deps>>,
    /// The order.
    order_id: String,
) -> String {
    seen(&ctx, &order_id)
}

/// Boxed context.
#[tool(read_only)]
fn boxed(
    ctx: Box<RunContext<Deps>>,
    /// The order.
    order_id: String,
) -> String {
    seen(&ctx, &order_id)
}

/// Path-qualified context.
#[allow(
    unused_qualifications,
    reason = "the qualified path is the form under test"
)]
#[tool(read_only)]
fn qualified(
    ctx: tool_runtime::RunContext<Deps>,
    /// The order.
    order_id: String,
) -> String {
    seen(&ctx, &order_id)
}

/// Optional context: always `Some` when the runtime invokes the tool.
#[tool(read_only)]
fn optional(
    ctx: Option<RunContext<Deps>>,
    /// The order.
    order_id: String,
) -> Result<String, ToolError> {
    let ctx = ctx.ok_or("no context")?;
    Ok(seen(&ctx, &order_id))
}

/// Optional borrowed context.
#[tool(read_only)]
fn optional_borrowed(
    ctx: Option<&RunContext<Deps>>,
    /// The order.
    order_id: String,
) -> Result<String, ToolError> {
    let ctx = ctx.ok_or("no context")?;
    Ok(seen(ctx, &order_id))
}

/// Context behind an alias, marked.
#[tool(read_only)]
fn aliased(
    #[ctx] context: DeskContext,
    /// The order.
    order_id: String,
) -> String {
    seen(&context, &order_id)
}

fn all() -> Vec<&'static dyn Tool> {
    vec![
        typed::tool(),
        untyped::tool(),
        borrowed::tool(),
        borrowed_mut::tool(),
        shared::tool(),
        boxed::tool(),
        qualified::tool(),
        optional::tool(),
        optional_borrowed::tool(),
        aliased::tool(),
    ]
}

#[test]
fn schema_has_exactly_the_model_visible_parameters_with_descriptions() {
    for tool in all() {
        let schema = tool.spec().input_schema();
        let mut properties: Vec<(String, Value)> = schema["properties"]
            .as_object()
            .map(|properties| {
                properties
                    .iter()
                    .map(|(name, property)| (name.clone(), property["description"].clone()))
                    .collect()
            })
            .unwrap_or_default();
        properties.retain(|(name, _)| name != "_pad");
        assert_eq!(
            properties,
            vec![("order_id".to_owned(), json!("The order."))],
            "tool {}",
            tool.spec().name()
        );
        assert_eq!(
            schema["required"],
            json!(["order_id"]),
            "tool {}",
            tool.spec().name()
        );
        let text = schema.to_string();
        assert!(!text.contains("ctx") && !text.contains("context"), "{text}");
    }
}

#[tokio::test]
async fn invoking_injects_session_call_and_deps() {
    let deps = Arc::new(Deps { marker: "deps-42" });
    for tool in all() {
        let name = tool.spec().name();
        let call = CallContext::new(Arc::clone(&deps), "session-7", format!("call-{name}"), name);
        let output = tool
            .call(r#"{"order_id":"A-1024"}"#.into(), &call)
            .await
            .map(|output| output.text().into_owned());
        assert_eq!(
            output,
            Ok(format!("session-7|call-{name}|deps-42|A-1024")),
            "tool {name}"
        );
    }
}

#[test]
fn deps_typed_and_agnostic_tools_say_so() {
    assert_eq!(
        typed::tool().deps_type().map(|deps| deps.name()),
        Some(std::any::type_name::<Deps>())
    );
    assert_eq!(aliased::tool().deps_type(), typed::tool().deps_type());
    assert_eq!(untyped::tool().deps_type(), None);
}

#[tokio::test]
async fn a_typed_tool_given_other_deps_fails_with_internal_not_a_panic() {
    let call = CallContext::new(Arc::new(5_u8), "s", "c", "typed");
    let error = typed::tool()
        .call(r#"{"order_id":"A-1"}"#.into(), &call)
        .await
        .err()
        .map(|error| (error.kind().as_str().to_owned(), error.message().to_owned()));
    assert_eq!(
        error,
        Some((
            "internal".to_owned(),
            format!(
                "tool `typed` needs deps of type `{}`, but the runtime provides `u8`",
                std::any::type_name::<Deps>()
            )
        ))
    );
}

#[tokio::test]
async fn the_function_stays_an_ordinary_function() {
    let call = CallContext::new(Arc::new(Deps { marker: "direct" }), "s-1", "c-1", "typed");
    let ctx = RunContext::<Deps>::from_call(&call).ok();
    let Some(ctx) = ctx else {
        panic!("context for the right deps");
    };
    assert_eq!(typed(ctx, "A-1".to_owned()).await, "s-1|c-1|direct|A-1");
}
