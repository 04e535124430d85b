//! # tool-runtime
//!
//! Runs the tool calls a model emits. Re-exports everything of `tool-core`, so an application
//! needs this one dependency.
//!
//! ```
//! use tool_runtime::{Runtime, Session, ToolCall, tool};
//!
//! pub struct Deps;
//!
//! /// Adds two numbers.
//! #[tool(read_only)]
//! fn add(a: i64, b: i64) -> i64 {
//!     a + b
//! }
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let runtime = Runtime::builder(Deps).build()?;
//! let report = runtime
//!     .execute(
//!         &Session::new("s-1"),
//!         vec![
//!             ToolCall::new("c1", "add", r#"{"a": 2, "b": 3}"#),
//!             ToolCall::new("c2", "ad", "{}"),
//!         ],
//!     )
//!     .await;
//! assert_eq!(report.observations()[0].content(), Some("5"));
//! assert_eq!(report.observations()[1].error_kind(), Some("unknown_tool"));
//! # Ok::<(), tool_runtime::BuildError>(())
//! # }).unwrap();
//! ```
//!
//! # The path of one turn
//!
//! 1. **Plan** each call: look the tool up, check the argument limits (size, depth), parse
//!    and validate the arguments. A call that fails here is answered at once and runs in no
//!    batch.
//! 2. **Schedule**: consecutive parallel-safe calls (`read_only`, not `exclusive`) form one
//!    concurrent batch, at most [`Limits::max_concurrency`] at a time; every other call runs
//!    alone, in order; calls sharing a declared resource never run at the same time.
//! 3. **Run** each call through the [shells], outermost first: retry, timeout, contain.
//! 4. **Shape** the output: redact secrets, cut what is over the limit (head and tail with a
//!    notice; the whole kept as an artifact `read_artifact` can read), add the page notice.
//! 5. **Answer**: one [`Observation`] per call id, in call order, in a [`TurnReport`] that also
//!    records the batches.
//!
//! # Error kinds
//!
//! Every failed call is an observation whose error has a stable `kind`:
//!
//! | kind | meaning | retryable |
//! |---|---|---|
//! | `unknown_tool` | the model named a tool that does not exist; the error lists the available tools and the nearest name | no |
//! | `invalid_arguments` | malformed JSON (with the position), a wrong, missing or unknown field (named by its path, with what was expected and what came, and the field's schema), arguments over the size or nesting limit | no |
//! | `execution_failed` | the tool failed; `retryable` is true when the tool marked the failure transient, and such failures were already retried | per error |
//! | `timeout` | the tool did not finish within its timeout (the details give it); it was stopped | no |
//! | `panicked` | the tool panicked; the panic was contained | no |
//! | `cancelled` | the turn was cancelled before the call finished | no |
//! | `internal` | the runtime could not provide what the tool needs (a context for other deps) | no |
//! | `call_depth_exceeded` | tools called tools deeper than [`Limits::max_call_depth`] | no |

mod artifact_tool;
mod builder;
mod call;
mod call_path;
mod dynamic;
mod limits;
mod nested;
mod observation;
pub mod output;
mod plan;
mod runtime;
mod schedule;
mod shells;

pub use artifact_tool::READ_ARTIFACT;
pub use builder::{BuildError, LeftOutTool, MAX_ARGUMENT_DEPTH, MAX_CALL_DEPTH, RuntimeBuilder};
pub use call::{Arguments, Session, ToolCall};
pub use dynamic::{DynamicTool, DynamicToolBuilder, DynamicToolError};
pub use limits::Limits;
pub use observation::{Batch, Observation, Outcome, TurnReport};
pub use output::artifacts::{ArtifactError, ArtifactStore, DirectoryArtifacts, MemoryArtifacts};
pub use output::redact::{Redactor, SecretPattern};
pub use runtime::Runtime;
pub use shells::RetryPolicy;
pub use tokio_util::sync::CancellationToken;
pub use tool_core::*;

#[doc(hidden)]
pub use tool_core::__private;

/// Turns a function into a tool. The same attribute as [`tool_core::tool`], whose
/// documentation lists every key and context form; generated code names `::tool_runtime`, so
/// an application needs no other dependency.
pub use tool_macros::runtime_tool as tool;
