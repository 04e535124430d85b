//! Every context form compiles, stays out of the schema, and leaves the tool deps-typed.
use std::sync::Arc;

use tool_runtime::{tool, RunContext, ToolError};

struct Deps {
    region: &'static str,
}

type DeskContext = RunContext<Deps>;

/// Bare, untyped context.
#[tool(read_only)]
fn untyped(ctx: RunContext, id: u32) -> String {
    format!("{} {id}", ctx.session_id())
}

/// Typed context.
#[tool(read_only)]
async fn typed(ctx: RunContext<Deps>, id: u32) -> Result<String, ToolError> {
    Ok(format!("{} {id}", ctx.deps().region))
}

/// Borrowed context, not in first position.
#[tool(read_only)]
async fn borrowed(id: u32, ctx: &RunContext<Deps>) -> String {
    format!("{} {id}", ctx.deps().region)
}

/// Mutably borrowed context.
#[tool(read_only)]
fn borrowed_mut(ctx: &mut RunContext<Deps>, id: u32) -> String {
    format!("{} {id}", ctx.deps().region)
}

/// Shared context.
#[tool(read_only)]
fn shared(ctx: Arc<RunContext<Deps>>, id: u32) -> String {
    format!("{} {id}", ctx.deps().region)
}

/// Boxed context.
#[tool(read_only)]
fn boxed(ctx: Box<RunContext<Deps>>, id: u32) -> String {
    format!("{} {id}", ctx.deps().region)
}

/// Path-qualified context.
#[tool(read_only)]
fn qualified(ctx: tool_runtime::RunContext<Deps>, id: u32) -> String {
    format!("{} {id}", ctx.deps().region)
}

/// Optional context.
#[tool(read_only)]
fn optional(ctx: Option<RunContext<Deps>>, id: u32) -> String {
    format!("{:?} {id}", ctx.map(|ctx| ctx.deps().region))
}

/// Optional borrowed context.
#[tool(read_only)]
fn optional_borrowed(id: u32, ctx: Option<&RunContext<Deps>>) -> String {
    format!("{:?} {id}", ctx.map(|ctx| ctx.deps().region))
}

/// Optional shared context.
#[tool(read_only)]
fn optional_shared(id: u32, ctx: Option<std::sync::Arc<RunContext<Deps>>>) -> String {
    format!("{:?} {id}", ctx.map(|ctx| ctx.deps().region))
}

/// Context behind an alias, marked.
#[tool(read_only)]
fn aliased(#[ctx] context: DeskContext, id: u32) -> String {
    format!("{} {id}", context.deps().region)
}

/// Context behind an alias, borrowed and marked.
#[tool(read_only)]
fn aliased_borrowed(id: u32, #[ctx] context: &DeskContext) -> String {
    format!("{} {id}", context.deps().region)
}

/// Context not used.
#[tool(read_only)]
fn ignored(_: RunContext<Deps>, id: u32) -> u32 {
    id
}

fn main() {
    let specs = [
        untyped::spec(),
        typed::spec(),
        borrowed::spec(),
        borrowed_mut::spec(),
        shared::spec(),
        boxed::spec(),
        qualified::spec(),
        optional::spec(),
        optional_borrowed::spec(),
        optional_shared::spec(),
        aliased::spec(),
        aliased_borrowed::spec(),
        ignored::spec(),
    ];
    for spec in specs {
        let properties = spec.input_schema()["properties"]
            .as_object()
            .map(|properties| properties.keys().cloned().collect::<Vec<_>>());
        assert_eq!(properties, Some(vec!["id".to_owned()]), "{}", spec.name());
    }
    assert!(untyped::tool().deps_type().is_none());
    assert!(typed::tool().deps_type().is_some());
    assert!(aliased::tool().deps_type().is_some());
}
