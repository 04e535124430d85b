use tool_runtime::tool;

/// Asks for the blocking pool, but is async.
#[tool(read_only, blocking)]
async fn fetch(url: String) -> String {
    url
}

fn main() {}
