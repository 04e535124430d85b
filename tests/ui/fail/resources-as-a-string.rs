use tool_runtime::tool;

/// Names its resource as a string instead of a list.
#[tool(resources = "db:orders")]
async fn create_order(item: String) -> String {
    item
}

fn main() {}
