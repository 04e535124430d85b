use tool_runtime::{tool, tools};

/// One.
#[tool(read_only)]
fn one() -> u32 {
    1
}

mod nested {
    /// Two.
    #[tool_runtime::tool(read_only)]
    pub fn two() -> u32 {
        2
    }
}

fn main() {
    let list = tools![one, nested::two,];
    assert_eq!(list.len(), 2);
    assert_eq!(tools![].len(), 0);
}
