use tool_runtime::tool;

#[derive(Debug)]
struct BackendDown;

/// Fails with an error the runtime cannot convert.
#[tool(read_only)]
fn read() -> Result<u32, BackendDown> {
    Err(BackendDown)
}

fn main() {}
