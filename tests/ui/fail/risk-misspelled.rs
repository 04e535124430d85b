use tool_runtime::tool;

/// Misspells the risk.
#[tool(risk = "wirte")]
async fn write(text: String) -> String {
    text
}

fn main() {}
