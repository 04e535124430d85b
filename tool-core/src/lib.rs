//! # tool-core: the vocabulary of agent tools
//!
//! Turn a plain function into a tool a language model can call, with one attribute:
//!
//! ```
//! use tool_core::{tool, RunContext, ToolError};
//!
//! struct SupportDeps {
//!     region: String,
//! }
//!
//! /// Look up the status of one order.
//! ///
//! /// Use only when the user gave an order id.
//! #[tool(read_only, timeout = "5s")]
//! async fn get_order_status(
//!     ctx: RunContext<SupportDeps>,
//!     /// Order id, format A-NNNN, for example "A-1024".
//!     order_id: String,
//! ) -> Result<String, ToolError> {
//!     Ok(format!("{order_id} ships from {}", ctx.deps().region))
//! }
//!
//! let spec = get_order_status::spec();
//! assert_eq!(spec.name(), "get_order_status");
//! assert!(spec.execution().parallel_safe());
//! // The context is not a parameter the model sees.
//! assert_eq!(
//!     spec.input_schema()["required"],
//!     serde_json::json!(["order_id"])
//! );
//! ```
//!
//! The function stays an ordinary function; the macro adds, next to it, a definition
//! ([`ToolSpec`]: name, description, the canonical JSON Schema of the model-visible
//! parameters, execution semantics, risk, timeout) and registers it with `inventory`, so
//! [`Registry::from_inventory`] finds it. [`tools!`] names tools explicitly, checked at compile
//! time.
//!
//! A context the macro cannot recognise never becomes a parameter: it fails to compile.
//!
//! ```compile_fail
//! use tool_core::{tool, RunContext};
//!
//! type Ctx = RunContext<u32>;
//!
//! /// Reads the deps.
//! #[tool(read_only)]
//! fn read_deps(ctx: Ctx) -> u32 {   // error: `RunContext<u32>` cannot be a tool parameter
//!     *ctx.deps()
//! }
//! ```
//!
//! Mark such a parameter `#[ctx]`. See [`tool`] for every key and context form.
//!
//! What only a runtime keeps (the check it derives from a spec, what orders nested calls) is
//! not part of this vocabulary:
//!
//! ```compile_fail
//! fn cached(spec: &tool_core::ToolSpec) -> bool {
//!     spec.derived().get().is_some()
//! }
//! ```
//!
//! ```compile_fail
//! use tool_core::NestedCalls;
//! ```
//!
//! Applications depend on `tool-runtime`, which re-exports what an application writes of this
//! crate (the rest as `tool_runtime::core`) and runs the calls a
//! model makes; a library that only defines tools can depend on this crate alone.

mod args;
mod as_text;
pub mod client;
mod content;
mod context;
mod error;
mod page;
mod registry;
pub mod schema;
mod spec;
mod tool;

#[doc(hidden)]
pub mod __private;

/// State only a runtime keeps: what it derives from a spec, what orders nested calls. Not
/// part of the vocabulary a tool's author writes; names here may change in any release.
#[doc(hidden)]
pub mod __runtime {
    use std::any::Any;
    use std::sync::OnceLock;

    pub use crate::context::NestedCalls;
    use crate::spec::ToolSpec;

    /// What a runtime derives from `spec` once, cached with it (the runtime's check of a
    /// call's arguments against [`ToolSpec::input_schema`], which never changes once the spec
    /// is built; `None` when there is nothing to check, so that a call pays one look). Empty
    /// in a clone; not serialized.
    pub fn derived(spec: &ToolSpec) -> &OnceLock<Option<Box<dyn Any + Send + Sync>>> {
        spec.derived_cache()
    }
}

#[doc(hidden)]
pub use args::{WrittenNumber, exact_value, inexact_numbers, integer_of, parse_args};
pub use content::{Content, Contents, EmbeddedResource};
pub use context::{AnyDeps, CallContext, DepsType, FromCallContext, RunContext};
#[doc(hidden)]
pub use context::{SessionContext, ToolInvoker, TurnContexts};
pub use error::{ErrorKind, ToolError};
pub use page::{IsPage, Page, PageInfo};
pub use registry::{Location, Registry, RegistryError, ToolDef, ToolList};
#[doc(hidden)]
pub use registry::{
    Lookup, ToolRegistration, inventory_tools, inventory_tools_for_other_deps, nearest_name,
    registered_tools,
};
pub use spec::{
    OutputPolicy, RiskLevel, SourceLocation, ToolExample, ToolExecution, ToolHints, ToolSpec,
    is_portable_tool_name,
};
pub use tool::{BoxFuture, Tool, ToolArgs, ToolFuture, ToolOutput};
#[doc = include_str!("tool.md")]
pub use tool_macros::tool;
