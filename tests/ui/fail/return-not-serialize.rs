use tool_runtime::tool;

struct Opaque;

/// Returns something the model cannot read.
#[tool(read_only)]
fn read() -> Opaque {
    Opaque
}

fn main() {}
