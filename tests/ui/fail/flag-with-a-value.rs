use tool_runtime::tool;

/// Gives a flag a value.
#[tool(read_only = true)]
async fn read() -> u32 {
    1
}

fn main() {}
