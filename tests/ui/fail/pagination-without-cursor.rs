use tool_runtime::{tool, Page};

/// Lists orders, but takes no cursor.
#[tool(read_only, pagination)]
fn list_orders(limit: u32) -> Page<String> {
    Page::last(vec![limit.to_string()])
}

fn main() {}
