//! Review scratch test (wt-review): an error over the output limit is cut like an output,
//! its whole message kept as an artifact; with a store that blocks, that `put` runs on the
//! turn's task (`observe` -> `shape_error` -> `Policy::limit`), unlike a successful output.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use serde_json::{Value, json};
use tool_runtime::{
    ArtifactError, ArtifactStore, DynamicTool, MemoryArtifacts, Runtime, Session, ToolCall,
    ToolError,
};

#[derive(Debug)]
struct Logged {
    inner: MemoryArtifacts,
    calls: Arc<Mutex<Vec<ThreadId>>>,
}

impl ArtifactStore for Logged {
    fn put(&self, session: &str, content: &str) -> Result<String, ArtifactError> {
        self.calls
            .lock()
            .expect("not poisoned")
            .push(std::thread::current().id());
        self.inner.put(session, content)
    }

    fn get(&self, session: &str, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
        self.inner.get(session, id)
    }
    // blocks(): the default, true.
}

#[tokio::test]
async fn review_a_long_error_is_not_kept_on_the_turns_task() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let failing = DynamicTool::builder(
        "build".to_owned(),
        "Fails with a long log.",
        json!({"type": "object", "properties": {}}),
    )
    .read_only()
    .max_output_chars(1_000)
    .handler(|_args: Value, _ctx| async {
        Err::<Value, _>(ToolError::failed(
            "compiler output: ".to_owned() + &"e".repeat(20_000),
        ))
    })
    .build()
    .expect("a tool");
    let runtime = Runtime::builder(())
        .tool(failing)
        .artifacts(Logged {
            inner: MemoryArtifacts::default(),
            calls: Arc::clone(&calls),
        })
        .build()
        .expect("a runtime");
    let report = runtime
        .execute(
            &Session::new("s-1"),
            vec![ToolCall::new("c1", "build", json!({}))],
        )
        .await;
    let observation = &report.observations()[0];
    assert!(observation.artifact().is_some(), "{observation:?}");
    let turn = std::thread::current().id();
    let calls = calls.lock().expect("not poisoned").clone();
    assert!(!calls.is_empty());
    for thread in calls {
        assert_ne!(
            thread, turn,
            "an error's artifact was put on the turn's task"
        );
    }
}
