use tool_runtime::tool;

/// Gives an example that is not JSON, and one with an unknown parameter.
#[tool(read_only, example = "{order_id: 1}", example = r#"{"orderid": "A-1"}"#)]
fn read(order_id: String) -> String {
    order_id
}

fn main() {}
