//! The public surface in layers: the root holds what an application writes, the rest lives in
//! modules named for what they are, and each setting of the builder has one setter.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tool_runtime::approvals::{
    Approval, ApprovalRequest, ApprovalStore, Approver, DecisionError, DecisionKeys,
    MemoryApprovalStore, PendingApproval, Preview, SealedArguments, SignedDecision,
};
use tool_runtime::audit::{
    AuditCompleter, AuditDecision, AuditError, AuditRecord, AuditSink, AuditSummary, AuditTicket,
    JsonlAudit, MemoryAudit, verify_audit,
};
use tool_runtime::core::{CallContext, Tool, ToolExecution};
use tool_runtime::dynamic::{DynamicTool, DynamicToolBuilder, DynamicToolError};
use tool_runtime::gates::{Action, Compare, Policy, PolicyFileError};
use tool_runtime::idempotency::{
    Claim, ConcurrentDuplicates, Holder, Idempotency, IdempotencyKey, IdempotencyStore, Lookup,
    MemoryIdempotency, SharedFailure, StoreError, StoredResult,
};
use tool_runtime::output::{
    ArtifactError, ArtifactLimits, ArtifactStore, DirectoryArtifacts, MemoryArtifacts,
    READ_ARTIFACT, Redactor, SecretPattern,
};
use tool_runtime::{
    BuildError, Limits, MAX_CALL_DEPTH, Runtime, Session, ToolCall, ToolError, tool, tools,
};

/// Every name of the modules is reachable by its module's path.
#[test]
fn module_paths_name_the_types() {
    fn named<T: ?Sized>() -> &'static str {
        std::any::type_name::<T>()
    }
    let names = [
        named::<Approval>(),
        named::<ApprovalRequest>(),
        named::<dyn ApprovalStore>(),
        named::<dyn Approver>(),
        named::<DecisionError>(),
        named::<DecisionKeys>(),
        named::<PendingApproval>(),
        named::<Preview>(),
        named::<SealedArguments>(),
        named::<SignedDecision>(),
        named::<AuditCompleter>(),
        named::<AuditDecision>(),
        named::<AuditError>(),
        named::<AuditRecord<'static>>(),
        named::<dyn AuditSink>(),
        named::<AuditSummary>(),
        named::<AuditTicket>(),
        named::<JsonlAudit>(),
        named::<CallContext>(),
        named::<dyn Tool>(),
        named::<ToolExecution>(),
        named::<DynamicToolBuilder>(),
        named::<DynamicToolError>(),
        named::<Action>(),
        named::<Compare>(),
        named::<PolicyFileError>(),
        named::<Claim>(),
        named::<ConcurrentDuplicates>(),
        named::<Holder>(),
        named::<IdempotencyKey>(),
        named::<dyn IdempotencyStore>(),
        named::<Lookup>(),
        named::<SharedFailure>(),
        named::<StoreError>(),
        named::<StoredResult>(),
        named::<ArtifactError>(),
        named::<ArtifactLimits>(),
        named::<dyn ArtifactStore>(),
        named::<DirectoryArtifacts>(),
        named::<SecretPattern>(),
    ];
    assert!(names.iter().all(|name| !name.is_empty()));
    assert_eq!(READ_ARTIFACT, "read_artifact");
    let missing = verify_audit(std::path::Path::new("/nonexistent/audit.jsonl"));
    assert!(
        matches!(missing, Err(AuditError::Open { .. })),
        "{missing:?}"
    );
}

static CALLS: AtomicUsize = AtomicUsize::new(0);

/// Returns a long text.
#[tool(read_only)]
fn long_text() -> String {
    "x".repeat(500)
}

/// Sends one message (a write: the idempotency layer answers its repeats).
#[tool]
fn send(to: String) -> Result<String, ToolError> {
    CALLS.fetch_add(1, Ordering::SeqCst);
    Ok(format!("sent to {to}"))
}

#[tokio::test]
async fn one_setter_per_setting_and_stores_alike() {
    let approvals = Arc::new(MemoryApprovalStore::new());
    let audit = Arc::new(MemoryAudit::new());
    let runtime = Runtime::builder(())
        .inventory(false)
        .tools(tools![long_text, send])
        .limits(
            Limits::default()
                .with_max_concurrency(2)
                .with_max_output_chars(100)
                .with_default_timeout(Some(Duration::from_secs(5))),
        )
        .idempotency(
            Idempotency::new(MemoryIdempotency::default())
                .ttl(Duration::from_secs(60))
                .wait(Duration::from_secs(1))
                .concurrent_duplicates(ConcurrentDuplicates::Refuse)
                .fail_open(false)
                .scope(|session| session.id().to_owned()),
        )
        // Each store setter takes `impl Trait`; a shared store is an `Arc` of one.
        .approval_store(Arc::clone(&approvals))
        .artifacts(Arc::new(MemoryArtifacts::default()))
        .audit(Arc::clone(&audit))
        .redactor(Redactor::default())
        .build()
        .expect("builds");
    assert_eq!(runtime.limits().max_concurrency(), 2);
    assert_eq!(runtime.limits().max_output_chars(), 100);
    assert_eq!(
        runtime.limits().default_timeout(),
        Some(Duration::from_secs(5))
    );

    let session = Session::new("s-1");
    let report = runtime
        .execute(
            &session,
            vec![
                ToolCall::new("c1", "long_text", "{}"),
                ToolCall::new("c2", "send", r#"{"to": "ana"}"#),
                ToolCall::new("c3", "send", r#"{"to": "ana"}"#),
            ],
        )
        .await;
    let observations = report.observations();
    assert!(observations[0].truncated(), "{:?}", observations[0]);
    assert_eq!(observations[1].content(), Some("sent to ana"));
    assert_eq!(observations[2].content(), Some("sent to ana"));
    assert_eq!(
        CALLS.load(Ordering::SeqCst),
        1,
        "the repeat was answered once"
    );
    // The shared audit sink saw the write's outcome through the `Arc` the runtime holds.
    assert!(!audit.lines().is_empty());
}

#[test]
fn limits_beyond_their_bounds_are_refused_at_build() {
    let built = Runtime::builder(())
        .inventory(false)
        .limits(Limits::default().with_max_call_depth(MAX_CALL_DEPTH + 1))
        .build();
    assert!(
        matches!(
            built,
            Err(BuildError::Limit {
                name: "max_call_depth",
                ..
            })
        ),
        "{:?}",
        built.err()
    );
}

#[test]
fn a_dynamic_tool_is_named_from_its_module() {
    let tool: Result<DynamicTool, DynamicToolError> = DynamicTool::builder(
        "echo",
        "Echoes.",
        serde_json::json!({"type": "object", "properties": {}}),
    )
    .read_only()
    .handler(|args, _ctx| async move { Ok(args.to_string().into()) })
    .build();
    assert!(tool.is_ok());
    let _ = Policy::new().tool("echo", Action::Auto);
}

/// The stores' errors carry the error that says why as their source, one shape for each store
/// family: idempotency's as artifacts'.
#[test]
fn store_errors_carry_their_source() {
    use std::error::Error as _;
    let refused = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "connection refused");
    let error = StoreError::new(refused);
    assert_eq!(
        error.to_string(),
        "the idempotency store is unavailable: connection refused"
    );
    let source = error.source().expect("a source");
    assert_eq!(
        source
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind),
        Some(std::io::ErrorKind::ConnectionRefused)
    );
    let message = StoreError::new("the table is full");
    assert_eq!(
        message.source().map(ToString::to_string).as_deref(),
        Some("the table is full")
    );
    let artifact = ArtifactError::new(std::io::Error::other("disk full"));
    let source = artifact.source().expect("a source");
    assert_eq!(source.to_string(), "disk full");
    assert!(source.downcast_ref::<std::io::Error>().is_some());
}
