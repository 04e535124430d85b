use tool_runtime::tool;

/// Opts an idempotent write out of the idempotency layer, which leaves it alone already.
#[tool(mutates_workspace, idempotent, idempotency = "off")]
async fn set_status(status: String) -> String {
    status
}

fn main() {}
