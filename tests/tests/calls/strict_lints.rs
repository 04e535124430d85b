//! Generated code stays clean under strict lints: this file is compiled by the test suite and
//! by `cargo clippy --all-targets -- -D warnings` in CI.
#![deny(
    missing_docs,
    unused_qualifications,
    unreachable_pub,
    rust_2018_idioms,
    clippy::pedantic,
    clippy::nursery
)]

use tool_runtime::{Page, RunContext, ToolError, tool};

/// Deps for the strict tools.
pub struct StrictDeps;

/// Reads one record.
///
/// # Errors
///
/// When the record store is unavailable.
#[tool(read_only, timeout = "1s", resources("records"))]
pub async fn strict_read(
    ctx: &RunContext<StrictDeps>,
    /// The record id.
    id: String,
    /// How many.
    #[default = 5]
    limit: u32,
) -> Result<String, ToolError> {
    let _ = ctx.deps();
    let label = std::future::ready(format!("{id}:{limit}")).await;
    Ok(label)
}

/// Lists records.
#[tool(read_only, pagination)]
#[must_use]
pub fn strict_list(
    /// The cursor.
    cursor: Option<String>,
) -> Page<u32> {
    Page::new(vec![1, 2], cursor)
}

#[test]
fn strict_tools_are_registered() {
    assert_eq!(strict_read::spec().name(), "strict_read");
    assert_eq!(strict_list::spec().name(), "strict_list");
}
