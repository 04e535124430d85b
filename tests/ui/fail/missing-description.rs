use tool_runtime::tool;

#[tool(read_only)]
fn undocumented(order_id: String) -> String {
    order_id
}

fn main() {}
