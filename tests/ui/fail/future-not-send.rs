use std::rc::Rc;

use tool_runtime::tool;

async fn fetch() -> u32 {
    1
}

/// Holds an `Rc` across an await.
#[tool(read_only)]
async fn count() -> u32 {
    let shared = Rc::new(1);
    let fetched = fetch().await;
    *shared + fetched
}

fn main() {}
