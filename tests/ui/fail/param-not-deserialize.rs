use tool_runtime::tool;

#[derive(schemars::JsonSchema)]
struct Filter {
    status: String,
}

/// Searches with a filter the model's JSON cannot become.
#[tool(read_only)]
fn search(filter: Filter) -> String {
    filter.status
}

fn main() {}
