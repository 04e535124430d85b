use serde::Serialize;
use tool_runtime::{tool, ToolError};

#[derive(Serialize)]
struct NoSchema {
    ok: bool,
}

/// Returns a result.
#[tool(read_only)]
fn fallible() -> Result<u32, ToolError> {
    Ok(1)
}

/// Returns a result with an io error.
#[tool(read_only)]
fn io_fallible() -> std::io::Result<u32> {
    Ok(1)
}

/// Returns a plain value.
#[tool(read_only)]
fn plain() -> u32 {
    1
}

/// Returns nothing.
#[tool]
fn nothing() {}

/// Returns a value without a schema.
#[tool(read_only)]
fn unschemed() -> NoSchema {
    NoSchema { ok: true }
}

fn main() {
    assert!(fallible::spec().output_schema().is_some());
    assert!(io_fallible::spec().output_schema().is_some());
    assert!(plain::spec().output_schema().is_some());
    assert!(nothing::spec().output_schema().is_none());
    assert!(unschemed::spec().output_schema().is_none());
}
