//! # tool-runtime
//!
//! Runs the tool calls a model emits. Re-exports everything of `tool-core`, so an application
//! needs this one dependency.

pub use tool_core::*;

#[doc(hidden)]
pub use tool_core::__private;

/// Turns a function into a tool. The same attribute as [`tool_core::tool`], whose
/// documentation lists every key and context form; generated code names `::tool_runtime`, so
/// an application needs no other dependency.
pub use tool_macros::runtime_tool as tool;
