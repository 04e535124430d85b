use tool_runtime::tool;

struct Desk;

impl Desk {
    /// Reads from the desk.
    #[tool(read_only)]
    fn read(&self) -> u32 {
        1
    }
}

fn main() {}
