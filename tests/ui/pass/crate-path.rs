mod renamed {
    pub use tool_core as core_again;
}

/// Uses tool-core through another path.
#[tool_core::tool(read_only, crate = renamed::core_again)]
fn via_core() -> u32 {
    1
}

/// Uses tool-runtime's re-export with an explicit path.
#[tool_runtime::tool(read_only, crate = ::tool_runtime)]
fn via_runtime() -> u32 {
    2
}

fn main() {
    assert_eq!(via_core::spec().name(), "via_core");
    assert_eq!(via_runtime::spec().name(), "via_runtime");
}
