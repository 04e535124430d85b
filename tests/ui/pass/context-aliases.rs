//! `#[ctx]` on an alias of any context form: the macro cannot see through an alias, so the
//! runtime builds it through the type (a `RunContext`, wrapped or borrowed, or an `Option`).
use std::sync::Arc;

use tool_runtime::{tool, RunContext};
use tool_runtime::core::{CallContext, Tool};

struct Deps {
    region: &'static str,
}

type Shared = Arc<RunContext<Deps>>;
type Borrowed<'a> = &'a RunContext<Deps>;
type Maybe = Option<RunContext<Deps>>;
type MaybeShared = Option<Arc<RunContext<Deps>>>;
type Boxed = Box<RunContext<Deps>>;
type Plain = RunContext<Deps>;

/// An alias of `Arc<RunContext<D>>`.
#[tool(read_only)]
fn shared(#[ctx] context: Shared, id: u32) -> String {
    format!("{} {id}", context.deps().region)
}

/// An alias of `&RunContext<D>`.
#[tool(read_only)]
async fn borrowed(#[ctx] context: Borrowed<'_>, id: u32) -> String {
    format!("{} {id}", context.deps().region)
}

/// An alias of `Option<RunContext<D>>`.
#[tool(read_only)]
fn maybe(id: u32, #[ctx] context: Maybe) -> String {
    format!("{} {id}", context.map_or("none", |context| context.deps().region))
}

/// An alias of `Option<Arc<RunContext<D>>>`.
#[tool(read_only)]
fn maybe_shared(#[ctx] context: MaybeShared, id: u32) -> String {
    format!("{} {id}", context.map_or("none", |context| context.deps().region))
}

/// An alias of `Box<RunContext<D>>`.
#[tool(read_only)]
fn boxed(#[ctx] context: Boxed, id: u32) -> String {
    format!("{} {id}", context.deps().region)
}

/// A reference to an alias of a wrapped context.
#[tool(read_only)]
async fn borrowed_shared(#[ctx] context: &Shared, id: u32) -> String {
    format!("{} {id}", context.deps().region)
}

/// A mutable reference to an alias of `RunContext<D>`.
#[tool(read_only)]
fn borrowed_mut(#[ctx] context: &mut Plain, id: u32) -> String {
    format!("{} {id}", context.deps().region)
}

/// An alias, blocking.
#[tool(read_only, blocking)]
fn blocking_shared(#[ctx] context: Shared, id: u32) -> String {
    format!("{} {id}", context.deps().region)
}

fn main() {
    let tools: [&dyn Tool; 8] = [
        shared::tool(),
        borrowed::tool(),
        maybe::tool(),
        maybe_shared::tool(),
        boxed::tool(),
        borrowed_shared::tool(),
        borrowed_mut::tool(),
        blocking_shared::tool(),
    ];
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .build()
        .expect("a runtime");
    for tool in tools {
        let spec = tool.spec();
        let properties = spec.input_schema()["properties"]
            .as_object()
            .map(|properties| properties.keys().cloned().collect::<Vec<_>>());
        assert_eq!(properties, Some(vec!["id".to_owned()]), "{}", spec.name());
        assert!(tool.takes_context(), "{}", spec.name());
        assert_eq!(
            tool.deps_type().map(|deps| deps.name()),
            Some(std::any::type_name::<Deps>()),
            "{}",
            spec.name()
        );
        let call = CallContext::new(Arc::new(Deps { region: "eu" }), "s-1", "c-1", spec.name());
        let output = runtime.block_on(async {
            match tool.prepare(r#"{"id": 7}"#.into(), &call) {
                Ok(future) => future.await.map(|output| output.json().to_owned()),
                Err(error) => Err(error),
            }
        });
        assert_eq!(output.ok().as_deref(), Some(r#""eu 7""#), "{}", spec.name());
    }
}
