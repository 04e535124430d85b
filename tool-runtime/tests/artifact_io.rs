//! An artifact store that waits on I/O (`ArtifactStore::blocks`, `DirectoryArtifacts`) is
//! called on the blocking pool, never on the task that runs the turn: a slow disk does not
//! stall the turn's other calls. Whatever the path to the store: a cut output of any size, one
//! that only redaction makes too long, a write's result replayed from the idempotency store,
//! and `read_artifact`.

use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use serde_json::{Value, json};
use tool_runtime::dynamic::DynamicTool;
use tool_runtime::output::{
    ArtifactError, ArtifactStore, DirectoryArtifacts, MemoryArtifacts, Redactor, SecretPattern,
};
use tool_runtime::{Runtime, Session, ToolCall};

/// A store whose calls are logged with the thread they ran on; it says it blocks (the default).
#[derive(Debug)]
struct Logged<S> {
    inner: S,
    calls: Arc<Mutex<Vec<(&'static str, ThreadId)>>>,
}

impl<S: ArtifactStore> ArtifactStore for Logged<S> {
    fn put(&self, session: &str, content: &str) -> Result<String, ArtifactError> {
        self.log("put");
        self.inner.put(session, content)
    }

    fn get(&self, session: &str, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
        self.log("get");
        self.inner.get(session, id)
    }
}

impl<S> Logged<S> {
    fn log(&self, call: &'static str) {
        self.calls
            .lock()
            .expect("not poisoned")
            .push((call, std::thread::current().id()));
    }
}

fn tool(name: &str, read_only: bool, max_chars: usize, output: String) -> DynamicTool {
    let builder = DynamicTool::builder(
        name.to_owned(),
        "Returns a long text.",
        json!({"type": "object", "properties": {}}),
    )
    .max_output_chars(max_chars);
    let builder = if read_only {
        builder.read_only()
    } else {
        builder
    };
    builder
        .handler(move |_args: Value, _ctx| {
            let output = output.clone();
            async move { Ok(Value::String(output)) }
        })
        .build()
        .expect("a tool")
}

fn runtime(store: impl ArtifactStore + 'static) -> Runtime<()> {
    let short_key = SecretPattern::new("key", r"\bk\b").expect("a pattern");
    Runtime::builder(())
        .tool(tool("long_read", true, 1_000, "x".repeat(20_000)))
        .tool(tool("long_write", false, 1_000, "y".repeat(20_000)))
        // 39 characters, more than 40 once each `k` is `[REDACTED:key]`.
        .tool(tool("keys", true, 40, "k ".repeat(19) + "k"))
        .redactor(Redactor::with_patterns([short_key]))
        .artifacts(store)
        .build()
        .expect("a runtime")
}

async fn run(runtime: &Runtime<()>, name: &str, args: Value) -> tool_runtime::Observation {
    let report = runtime
        .execute(&Session::new("s-1"), vec![ToolCall::new("c1", name, args)])
        .await;
    report.observations()[0].clone()
}

/// The test's thread runs the turn (a current-thread runtime): no store call may run on it.
#[tokio::test]
async fn a_blocking_store_is_never_called_on_the_turns_task() {
    let calls = Arc::new(Mutex::new(Vec::new()));
    let runtime = runtime(Logged {
        inner: MemoryArtifacts::default(),
        calls: Arc::clone(&calls),
    });
    let turn = std::thread::current().id();
    let mut ids = Vec::new();
    for (name, replayed) in [
        ("long_read", false),
        ("keys", false),
        ("long_write", false),
        // The same write again: its result comes from the idempotency store, and is cut again.
        ("long_write", true),
    ] {
        let observation = run(&runtime, name, json!({})).await;
        assert!(observation.is_success(), "{observation:?}");
        assert_eq!(observation.replayed(), replayed, "{name}");
        let Some(id) = observation.artifact() else {
            panic!("{name}: no artifact: {observation:?}");
        };
        ids.push(id.to_owned());
    }
    let read = run(
        &runtime,
        "read_artifact",
        json!({"artifact_id": ids[1], "offset": 0, "limit": 29}),
    )
    .await;
    assert!(
        read.content()
            .is_some_and(|content| content.ends_with("[REDACTED:key] [REDACTED:key]")),
        "{read:?}"
    );
    let calls = calls.lock().expect("not poisoned").clone();
    let names: Vec<&str> = calls.iter().map(|(call, _)| *call).collect();
    assert_eq!(names, ["put", "put", "put", "put", "get"]);
    for (call, thread) in calls {
        assert_ne!(thread, turn, "a `{call}` ran on the turn's task");
    }
}

/// The same with the files of a `DirectoryArtifacts`: the cut output is read back whole.
#[tokio::test]
async fn the_directory_store_writes_and_reads_off_the_turns_task() {
    let dir = std::env::temp_dir().join(format!("tool-runtime-artifact-io-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let calls = Arc::new(Mutex::new(Vec::new()));
    let runtime = runtime(Logged {
        inner: DirectoryArtifacts::new(&dir).expect("a directory"),
        calls: Arc::clone(&calls),
    });
    let observation = run(&runtime, "long_read", json!({})).await;
    let id = observation.artifact().expect("an artifact").to_owned();
    let read = run(
        &runtime,
        "read_artifact",
        json!({"artifact_id": id, "offset": 19_990, "limit": 100}),
    )
    .await;
    assert_eq!(
        read.content(),
        Some(
            format!("[{id}: characters 19990..20000 of 20000; this is the end]\nxxxxxxxxxx")
                .as_str()
        )
    );
    let turn = std::thread::current().id();
    for (call, thread) in calls.lock().expect("not poisoned").iter() {
        assert_ne!(*thread, turn, "a `{call}` ran on the turn's task");
    }
    let _ = std::fs::remove_dir_all(dir);
}
