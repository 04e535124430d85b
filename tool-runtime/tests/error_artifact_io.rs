//! An error over the output limit is cut like an output, its whole message kept as an
//! artifact. Errors are answered on the turn's task; with a store that blocks
//! (`ArtifactStore::blocks`, `DirectoryArtifacts`), that `put` runs on tokio's blocking pool,
//! the notice naming the id at once, and `read_artifact` of the id waits for the write.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;

use serde_json::{Value, json};
use tool_runtime::dynamic::DynamicTool;
use tool_runtime::output::{ArtifactError, ArtifactStore, DirectoryArtifacts, MemoryArtifacts};
use tool_runtime::{Observation, Runtime, Session, ToolCall, ToolError};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Event {
    PutStarted(ThreadId),
    PutEnded,
    Get,
}

/// A store that blocks (the default), whose ids are its inner store's, and whose `put` waits
/// to be released when it runs off the turn's thread (on it, waiting would never end).
#[derive(Debug)]
struct Held<S> {
    inner: S,
    turn: ThreadId,
    release: Mutex<Receiver<()>>,
    events: Arc<Mutex<Vec<Event>>>,
}

impl<S: ArtifactStore> ArtifactStore for Held<S> {
    fn put(&self, session: &str, content: &str) -> Result<String, ArtifactError> {
        let thread = std::thread::current().id();
        self.log(Event::PutStarted(thread));
        if thread != self.turn {
            let _ = self.release.lock().expect("not poisoned").recv();
        }
        let id = self.inner.put(session, content);
        self.log(Event::PutEnded);
        id
    }

    fn get(&self, session: &str, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
        self.log(Event::Get);
        self.inner.get(session, id)
    }

    fn id_for(&self, session: &str, content: &str) -> Option<String> {
        self.inner.id_for(session, content)
    }
}

impl<S> Held<S> {
    fn log(&self, event: Event) {
        self.events.lock().expect("not poisoned").push(event);
    }
}

fn failing_tool() -> DynamicTool {
    DynamicTool::builder(
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
    .expect("a tool")
}

/// A store held until released, the sender that releases it, and what it saw.
type HeldStore<S> = (Held<S>, Sender<()>, Arc<Mutex<Vec<Event>>>);

fn held<S>(inner: S) -> HeldStore<S> {
    let (release, released) = channel();
    let events = Arc::new(Mutex::new(Vec::new()));
    let store = Held {
        inner,
        turn: std::thread::current().id(),
        release: Mutex::new(released),
        events: Arc::clone(&events),
    };
    (store, release, events)
}

async fn run(runtime: &Runtime<()>, name: &str, args: Value) -> Observation {
    let report = runtime
        .execute(&Session::new("s-1"), vec![ToolCall::new("c1", name, args)])
        .await;
    report.observations()[0].clone()
}

fn runtime(store: impl ArtifactStore + 'static) -> Runtime<()> {
    Runtime::builder(())
        .tool(failing_tool())
        .artifacts(store)
        .build()
        .expect("a runtime")
}

/// The error's notice names its artifact, and once the store is released, `read_artifact`
/// reads it back.
async fn read_back(runtime: &Runtime<()>, observation: &Observation, release: &Sender<()>) {
    let Some(id) = observation.artifact().map(str::to_owned) else {
        panic!("the long error was not kept: {observation:?}");
    };
    let message = observation
        .error()
        .map(ToolError::message)
        .unwrap_or_default();
    assert!(
        message.contains(&format!("the full output is artifact {id}")),
        "{message}"
    );
    // Released only now: the turn did not wait for the write.
    release.send(()).expect("the store waits");
    let read = run(
        runtime,
        "read_artifact",
        json!({"artifact_id": id, "offset": 0, "limit": 20}),
    )
    .await;
    assert!(
        read.content()
            .is_some_and(|content| content.ends_with("\ncompiler output: eee")),
        "{read:?}"
    );
}

/// The test's thread runs the turn (a current-thread runtime): the error's `put` may not run
/// on it. The turn answers while the `put` is still held, naming the artifact; once released,
/// `read_artifact` reads it back, its `get` after the `put` ended.
#[tokio::test]
async fn a_long_error_is_named_at_once_and_stored_on_the_blocking_pool() {
    let (store, release, events) = held(MemoryArtifacts::default());
    let runtime = runtime(store);
    let observation = run(&runtime, "build", json!({})).await;
    let at_answer = events.lock().expect("not poisoned").clone();
    assert!(
        !at_answer.contains(&Event::PutEnded),
        "the turn waited for the error's artifact to be written: {at_answer:?}"
    );
    read_back(&runtime, &observation, &release).await;
    let turn = std::thread::current().id();
    let events = events.lock().expect("not poisoned").clone();
    let puts = events
        .iter()
        .filter(|event| matches!(event, Event::PutStarted(_)))
        .count();
    assert_eq!(puts, 1, "{events:?}");
    assert!(
        !events.contains(&Event::PutStarted(turn)),
        "an error's artifact was put on the turn's task: {events:?}"
    );
    // The put ended before the read's get: read_artifact waits for the write in flight.
    assert_eq!(events[1..], [Event::PutEnded, Event::Get], "{events:?}");
}

/// The same through the files of a `DirectoryArtifacts`.
#[tokio::test]
async fn a_long_error_kept_in_a_directory_is_read_back() {
    let dir = std::env::temp_dir().join(format!(
        "tool-runtime-error-artifact-io-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let (store, release, events) = held(DirectoryArtifacts::new(&dir).expect("a directory"));
    let runtime = runtime(store);
    let observation = run(&runtime, "build", json!({})).await;
    read_back(&runtime, &observation, &release).await;
    let turn = std::thread::current().id();
    for event in events.lock().expect("not poisoned").iter() {
        assert_ne!(
            *event,
            Event::PutStarted(turn),
            "the error's artifact was put on the turn's task"
        );
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// A store that blocks and makes its own ids cannot name one before `put`: its long errors are
/// kept before they are answered, and the notice names the id `put` returned.
#[tokio::test]
async fn a_store_with_its_own_ids_names_the_id_it_returned() {
    #[derive(Debug, Default)]
    struct OwnIds {
        kept: Mutex<Vec<(String, Arc<str>)>>,
    }
    impl ArtifactStore for OwnIds {
        fn put(&self, session: &str, content: &str) -> Result<String, ArtifactError> {
            let mut kept = self.kept.lock().expect("not poisoned");
            let id = format!("own-{session}-{}", kept.len());
            kept.push((id.clone(), Arc::from(content)));
            Ok(id)
        }
        fn get(&self, _session: &str, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
            let kept = self.kept.lock().expect("not poisoned");
            Ok(kept
                .iter()
                .find(|(kept, _)| kept == id)
                .map(|(_, content)| Arc::clone(content)))
        }
    }
    let runtime = runtime(OwnIds::default());
    let observation = run(&runtime, "build", json!({})).await;
    assert_eq!(observation.artifact(), Some("own-s-1-0"), "{observation:?}");
    let read = run(
        &runtime,
        "read_artifact",
        json!({"artifact_id": "own-s-1-0", "offset": 0, "limit": 20}),
    )
    .await;
    assert!(
        read.content()
            .is_some_and(|content| content.ends_with("\ncompiler output: eee")),
        "{read:?}"
    );
}
