use tool_runtime::tool;

/// Lists orders, but returns a plain list.
#[tool(read_only, pagination)]
fn list_orders(cursor: Option<String>) -> Vec<String> {
    cursor.into_iter().collect()
}

fn main() {}
