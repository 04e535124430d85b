//! The `#[tool]` attribute. Use it through `tool-runtime` or `tool-core`, which re-export it
//! and document every key; this crate holds only the code generation.
//!
//! Structure: `attr` parses the keys, `model` classifies the function's parameters,
//! `check` applies the rules that span several keys, `expand` generates the code and
//! `fallback` decides what is emitted when something is wrong.

mod attr;
mod check;
mod docs;
mod errors;
mod expand;
mod fallback;
mod model;

#[cfg(test)]
mod tests;

use proc_macro::TokenStream;
use quote::quote;

/// Turns a function into a tool. Documented where it is re-exported: `tool_core::tool`.
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into(), quote!(::tool_core)).into()
}

/// `#[tool]` as re-exported by `tool-runtime`: generated code names `::tool_runtime`, so an
/// application needs no direct dependency on `tool-core`. Its keys and context forms are those
/// of `tool_core::tool`.
#[proc_macro_attribute]
pub fn runtime_tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand::tool(args.into(), input.into(), quote!(::tool_runtime)).into()
}
