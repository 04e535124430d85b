use tool_runtime::tool;

#[derive(serde::Deserialize)]
struct Filter {
    status: String,
}

/// Searches with a filter the schema cannot describe.
#[tool(read_only)]
fn search(filter: Filter) -> String {
    filter.status
}

fn main() {}
