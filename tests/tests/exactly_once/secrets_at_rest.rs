//! What the model may not see rests nowhere else in clear: the idempotency store keeps the
//! output as the model reads it (secrets redacted), and a replay is byte for byte what the
//! first call's model read. The key a tool forwards downstream is the call's own: other
//! sessions and other tools never share it.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tool_runtime::idempotency::{Idempotency, MemoryIdempotency};
use tool_runtime::{RunContext, Runtime, Session, ToolCall, ToolError, tool, tools};

const SECRET: &str = "sk-proj-abcdefghijklmnopqrstuvwx1234567890";

/// What the tools saw.
#[derive(Default)]
pub struct Backend {
    keys: Mutex<Vec<(String, String)>>,
}

impl Backend {
    fn remember(&self, tool: &str, ctx: &RunContext<Backend>) {
        if let (Ok(mut keys), Some(key)) = (self.keys.lock(), ctx.idempotency_key()) {
            keys.push((tool.to_owned(), key.to_owned()));
        }
    }
}

/// Creates an integration and returns its settings, key included.
#[tool(stateful, max_output_chars = 200)]
async fn create_integration(
    ctx: RunContext<Backend>,
    /// The integration's name.
    name: String,
    /// How many filler characters the answer carries.
    #[default = 0]
    padding: usize,
) -> Result<Value, ToolError> {
    ctx.deps().remember("create_integration", &ctx);
    Ok(json!({ "name": name, "api_key": SECRET, "notes": "x".repeat(padding) }))
}

/// Writes a note and returns its text, with the key it was signed with.
#[tool(stateful)]
async fn write_note(
    ctx: RunContext<Backend>,
    /// The integration's name.
    name: String,
) -> String {
    ctx.deps().remember("write_note", &ctx);
    format!("note for {name}, signed with {SECRET}")
}

/// Another write taking the same arguments as `create_integration`.
#[tool(stateful)]
async fn rename_integration(
    ctx: RunContext<Backend>,
    /// The integration's name.
    name: String,
    /// Unused.
    #[default = 0]
    padding: usize,
) -> String {
    let _ = padding;
    ctx.deps().remember("rename_integration", &ctx);
    format!("renamed {name}")
}

/// Imports contacts, a page at a time; the next page's cursor is a token.
#[tool(stateful, pagination)]
async fn import_contacts(
    /// Where to start.
    cursor: Option<String>,
) -> tool_runtime::Page<String> {
    let _ = cursor;
    tool_runtime::Page::new(vec!["ada".to_owned()], Some(format!("next:{SECRET}")))
}

/// A memory store that keeps a copy of every result it is asked to keep.
type Recording = tests::stores::Recording<MemoryIdempotency>;

fn runtime(store: Arc<Recording>) -> (Runtime<Backend>, Arc<Backend>) {
    let backend = Arc::new(Backend::default());
    let runtime = Runtime::builder_shared(Arc::clone(&backend))
        .inventory(false)
        .tools(tools![
            create_integration,
            write_note,
            rename_integration,
            import_contacts
        ])
        .idempotency(Idempotency::new(store))
        .build();
    match runtime {
        Ok(runtime) => (runtime, backend),
        Err(error) => panic!("{error}"),
    }
}

#[tokio::test]
async fn the_store_keeps_the_output_the_model_read_and_a_replay_is_that_output() {
    for (tool, arguments) in [
        ("create_integration", json!({ "name": "crm" })),
        ("write_note", json!({ "name": "crm" })),
    ] {
        let store = Arc::new(Recording::default());
        let (runtime, _) = runtime(Arc::clone(&store));
        let session = Session::new("s");
        let first = runtime
            .execute(&session, [ToolCall::new("1", tool, arguments.clone())])
            .await;
        let again = runtime
            .execute(&session, [ToolCall::new("2", tool, arguments)])
            .await;
        let (first, again) = (&first.observations()[0], &again.observations()[0]);
        assert_eq!(first.error_kind(), None, "{first:?}");
        assert!(again.replayed(), "{again:?}");
        let content = first.content().unwrap_or_default();
        assert!(content.contains("[REDACTED:openai_api_key]"), "{content}");
        assert_eq!(first.redactions(), 1);
        assert_eq!(
            again.content(),
            first.content(),
            "the replay is what the model read"
        );
        let kept = store.kept();
        assert_eq!(kept.len(), 1);
        assert!(
            !kept[0].output.contains(SECRET),
            "{tool}: the store holds the secret in clear: {}",
            kept[0].output
        );
    }
}

#[tokio::test]
async fn a_replay_of_an_output_cut_for_the_model_is_the_same_cut() {
    let store = Arc::new(Recording::default());
    let (runtime, _) = runtime(Arc::clone(&store));
    let session = Session::new("s");
    let call = |id| {
        ToolCall::new(
            id,
            "create_integration",
            json!({ "name": "crm", "padding": 1_000 }),
        )
    };
    let first = runtime.execute(&session, [call("1")]).await;
    let again = runtime.execute(&session, [call("2")]).await;
    let (first, again) = (&first.observations()[0], &again.observations()[0]);
    assert!(first.truncated(), "{first:?}");
    assert!(again.replayed());
    assert_eq!(again.content(), first.content());
    assert_eq!(again.artifact(), first.artifact());
    assert!(
        store
            .kept()
            .iter()
            .all(|kept| !kept.output.contains(SECRET))
    );
}

#[tokio::test]
async fn the_key_a_tool_forwards_is_its_own_across_sessions_and_tools() {
    let store = Arc::new(Recording::default());
    let (runtime, backend) = runtime(store);
    let arguments = json!({ "name": "crm" });
    for session in ["user-ada", "user-bob"] {
        runtime
            .execute(
                &Session::new(session),
                [
                    ToolCall::new("1", "create_integration", arguments.clone()),
                    ToolCall::new("2", "rename_integration", arguments.clone()),
                ],
            )
            .await;
    }
    // The same call again, in a new runtime sharing nothing: the key is stable.
    let (again, again_backend) = self::runtime(Arc::new(Recording::default()));
    again
        .execute(
            &Session::new("user-ada"),
            [ToolCall::new("1", "create_integration", arguments)],
        )
        .await;
    let keys = backend
        .keys
        .lock()
        .map(|keys| keys.clone())
        .unwrap_or_default();
    assert_eq!(keys.len(), 4, "{keys:?}");
    let mut distinct: Vec<&str> = keys.iter().map(|(_, key)| key.as_str()).collect();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(
        distinct.len(),
        4,
        "two sessions and two tools must not share a key: {keys:?}"
    );
    let again_keys = again_backend
        .keys
        .lock()
        .map(|keys| keys.clone())
        .unwrap_or_default();
    assert_eq!(again_keys.first(), keys.first(), "stable for the same call");
}

#[tokio::test]
async fn a_page_cursor_that_is_a_token_rests_redacted_and_replays_as_shown() {
    let store = Arc::new(Recording::default());
    let (runtime, _) = runtime(Arc::clone(&store));
    let session = Session::new("s");
    let first = runtime
        .execute(&session, [ToolCall::new("1", "import_contacts", json!({}))])
        .await;
    let again = runtime
        .execute(&session, [ToolCall::new("2", "import_contacts", json!({}))])
        .await;
    let (first, again) = (&first.observations()[0], &again.observations()[0]);
    assert!(again.replayed(), "{again:?}");
    let content = first.content().unwrap_or_default();
    assert!(!content.contains(SECRET), "{content}");
    assert_eq!(again.content(), first.content());
    let kept = store.kept();
    assert_eq!(kept.len(), 1);
    assert!(
        kept.iter()
            .all(|kept| !kept.page.as_deref().unwrap_or_default().contains(SECRET)),
        "{kept:?}"
    );
}
