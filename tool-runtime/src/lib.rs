//! # tool-runtime
//!
//! Runs the tool calls a model emits. Re-exports everything of `tool-core`, so an application
//! needs this one dependency.

pub use tool_core::*;

#[doc(hidden)]
pub use tool_core::__private;

#[doc(inline)]
pub use tool_macros::runtime_tool as tool;
