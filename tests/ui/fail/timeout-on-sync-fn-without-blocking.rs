use tool_runtime::tool;

/// Reads a file synchronously, with a timeout that could never fire.
#[tool(read_only, timeout = "5s")]
fn read_file(path: String) -> String {
    path
}

fn main() {}
