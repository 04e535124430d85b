use tool_runtime::{tool, RunContext};

struct Deps;
type Ctx = RunContext<Deps>;

/// Reads the deps through an alias the macro cannot see through.
#[tool(read_only)]
fn read(context: Ctx, order_id: String) -> String {
    let _ = context;
    order_id
}

fn main() {}
