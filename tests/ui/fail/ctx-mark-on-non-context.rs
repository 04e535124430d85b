use tool_runtime::tool;

/// Marks a plain parameter as a context.
#[tool(read_only)]
fn read(#[ctx] order_id: String) -> String {
    order_id
}

fn main() {}
