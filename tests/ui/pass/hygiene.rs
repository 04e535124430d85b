//! Generated code must not depend on what the user's scope calls `Result`, `Option`, `Box`,
//! `String`, `Vec` or `serde`.
#![allow(dead_code, non_camel_case_types)]

mod serde {}

struct Result;
struct Option;
struct Box;
struct String;
struct Vec;
struct ToolError;

/// Counts to a limit.
#[tool_runtime::tool(read_only)]
async fn count(
    ctx: core::option::Option<&tool_runtime::RunContext>,
    /// The limit.
    #[default = 3]
    limit: u32,
    /// A label.
    label: std::string::String,
) -> core::result::Result<std::vec::Vec<u32>, tool_runtime::ToolError> {
    let _ = (ctx, label);
    core::result::Result::Ok((0..limit).collect())
}

fn main() {}
