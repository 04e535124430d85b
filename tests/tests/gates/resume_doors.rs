//! Resuming a pending call: key rotations, the audit lines of resumed decisions (edits and
//! denials, written once, put back when they cannot be written), and replays.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tests::approver::Always;
use tests::assert_send;
use tests::decisions::{deferring, keys, pend};
use tests::report::kinds;
use tool_runtime::approvals::{
    Approval, ApprovalStore, DecisionKeys, MemoryApprovalStore, PendingApproval,
};
use tool_runtime::audit::MemoryAudit;
use tool_runtime::gates::{Action, Policy};
use tool_runtime::{
    BoxFuture, RunContext, Runtime, RuntimeBuilder, Session, ToolCall, tool, tools,
};

/// What the tools did.
#[derive(Default)]
pub struct Desk {
    transfers: AtomicU32,
}

/// Moves money.
#[tool(stateful)]
async fn transfer(
    ctx: RunContext<Desk>,
    /// The account.
    to: String,
    /// How much.
    amount: u32,
) -> String {
    ctx.deps().transfers.fetch_add(1, Ordering::SeqCst);
    format!("sent {amount} to {to}")
}

/// Issues an API key (a write whose output holds a secret).
#[tool(stateful)]
async fn issue_key(
    _ctx: RunContext<Desk>,
    /// For whom.
    owner: String,
) -> String {
    format!("key for {owner}: sk-proj-abcdefghijklmnopqrstuvwx1234567890")
}

fn desk(
    settings: impl FnOnce(RuntimeBuilder<Desk>) -> RuntimeBuilder<Desk>,
) -> (Runtime<Desk>, Arc<Desk>) {
    let desk = Arc::new(Desk::default());
    let builder = Runtime::builder_shared(Arc::clone(&desk))
        .inventory(false)
        .tools(tools![transfer, issue_key])
        .policy(Policy::new().tool("transfer", Action::Ask));
    match settings(builder).build() {
        Ok(runtime) => (runtime, desk),
        Err(error) => panic!("{error}"),
    }
}

/// A transfer of 5 to `to`, as call `c1`.
fn transfer_to(to: &str) -> ToolCall {
    ToolCall::new("c1", "transfer", json!({ "to": to, "amount": 5 }))
}

fn runtime_with(
    store: Arc<dyn ApprovalStore>,
    keys: DecisionKeys,
    audit: Arc<MemoryAudit>,
) -> (Runtime<Desk>, Arc<Desk>) {
    desk(move |builder| deferring(builder, store, keys).audit(audit))
}

/// A key rotation whose grace has passed (the README's example uses one hour; the Redis
/// approval store keeps requests 24 hours) leaves pending calls that cannot even be denied:
/// the deny path opens the sealed arguments it never uses.
#[tokio::test]
async fn a_denial_of_a_call_sealed_before_a_rotation_is_refused() {
    let store: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::default());
    let session = Session::new("s-1");
    let (before, _) = runtime_with(Arc::clone(&store), keys(), Arc::default());
    let pending = pend(&before, &session, transfer_to("acct-1")).await;

    let rotated = keys().rotate("k2", [9_u8; 32].to_vec(), Duration::ZERO);
    let (after, _) = runtime_with(Arc::clone(&store), rotated, Arc::default());
    let deny = after
        .sign_decision(&pending, Approval::Deny("no".into()))
        .expect("signed with the current key");
    let report = after.resume(&session, [deny]).await;
    assert_eq!(
        kinds(&report),
        [Some("denied")],
        "{:?}",
        report.observations()
    );
}

/// The same, for an approval: the decision verifies (signed with the current key), the call
/// cannot run, and the request can never be resumed; nothing says grace must outlive the
/// approval store's TTL.
#[tokio::test]
async fn an_approval_of_a_call_sealed_before_a_rotation_never_runs() {
    let store: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::default());
    let session = Session::new("s-1");
    let (before, _) = runtime_with(Arc::clone(&store), keys(), Arc::default());
    let pending = pend(&before, &session, transfer_to("acct-1")).await;

    let rotated = keys().rotate("k2", [9_u8; 32].to_vec(), Duration::ZERO);
    let (after, desk) = runtime_with(Arc::clone(&store), rotated, Arc::default());
    let approve = after
        .sign_decision(&pending, Approval::Approve)
        .expect("signed with the current key");
    let report = after.resume(&session, [approve]).await;
    assert_eq!(kinds(&report), [None], "{:?}", report.observations());
    assert_eq!(desk.transfers.load(Ordering::SeqCst), 1);
}

/// An edit given at once leaves a line with the edited arguments (and their digest); a
/// resumed edit's line carries the *original* digest and no arguments: the trail never says
/// what ran.
#[tokio::test]
async fn a_resumed_edit_is_audited_with_the_arguments_that_ran() {
    let edited = json!({ "to": "acct-EDITED", "amount": 5 });
    // At once.
    let audit_now = Arc::new(MemoryAudit::new().with_arguments(true));
    let (now, _) = desk({
        let audit = Arc::clone(&audit_now);
        let edited = edited.clone();
        move |builder| {
            builder
                .approver(Always(Approval::ApproveWith(edited)))
                .audit(audit)
        }
    });
    let report = now
        .execute(
            &Session::new("s"),
            [ToolCall::new(
                "c1",
                "transfer",
                json!({ "to": "acct-1", "amount": 5 }),
            )],
        )
        .await;
    assert_eq!(kinds(&report), [None]);
    let says_edit = |lines: &[Value]| {
        lines
            .iter()
            .any(|line| line.to_string().contains("acct-EDITED"))
    };
    assert!(says_edit(&audit_now.lines()), "{:?}", audit_now.lines());

    // Resumed.
    let store: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::default());
    let session = Session::new("s-1");
    let audit_later = Arc::new(MemoryAudit::new().with_arguments(true));
    let (later, desk) = runtime_with(store, keys(), Arc::clone(&audit_later));
    let pending = pend(&later, &session, transfer_to("acct-1")).await;
    let decision = later
        .sign_decision(&pending, Approval::ApproveWith(edited))
        .expect("signed");
    let report = later.resume(&session, [decision]).await;
    assert_eq!(kinds(&report), [None], "{:?}", report.observations());
    assert_eq!(desk.transfers.load(Ordering::SeqCst), 1);
    let lines = audit_later.lines();
    assert!(
        says_edit(&lines),
        "no line of the resumed edit names what ran: {lines:#?}"
    );
}

/// A person's denial, resumed against a trail that cannot be written: consumed, and no line
/// anywhere (the AuditSink contract says lines about a person's decision are waited for).
#[tokio::test]
async fn a_resumed_denial_is_not_consumed_without_its_line() {
    let store: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::default());
    let session = Session::new("s-1");
    let (first, _) = runtime_with(Arc::clone(&store), keys(), Arc::default());
    let pending = pend(&first, &session, transfer_to("acct-1")).await;
    let (broken, _) = runtime_with(Arc::clone(&store), keys(), Arc::new(MemoryAudit::failing()));
    let deny = broken
        .sign_decision(&pending, Approval::Deny("no".into()))
        .expect("signed");
    let report = broken.resume(&session, [deny]).await;
    let left = broken
        .pending_approvals(&session)
        .await
        .map(|pending| pending.len())
        .unwrap_or(0);
    assert!(
        kinds(&report) == [Some("audit_unavailable")] && left == 1,
        "denial consumed without a line: {:?}, {left} pending left",
        kinds(&report)
    );
}

/// An approval store whose reads yield once (as any networked store does).
struct Yielding(MemoryApprovalStore);

impl ApprovalStore for Yielding {
    fn put(&self, pending: PendingApproval) -> BoxFuture<'_, std::io::Result<()>> {
        ApprovalStore::put(&self.0, pending)
    }
    fn pending<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, std::io::Result<Vec<PendingApproval>>> {
        Box::pin(async move {
            let read = ApprovalStore::pending(&self.0, session).await;
            tokio::task::yield_now().await;
            read
        })
    }
    fn take<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
    ) -> BoxFuture<'a, std::io::Result<Option<PendingApproval>>> {
        ApprovalStore::take(&self.0, session, request_id)
    }
}

/// One decision handed in twice at once: one call runs (good), but the trail records two
/// approvals of it, because the `resume` line is written before the request is consumed.
#[tokio::test]
async fn one_decision_resumed_twice_at_once_is_audited_once() {
    let store: Arc<dyn ApprovalStore> = Arc::new(Yielding(MemoryApprovalStore::default()));
    let session = Session::new("s-1");
    let audit = Arc::new(MemoryAudit::new());
    let (runtime, desk) = runtime_with(store, keys(), Arc::clone(&audit));
    let pending = pend(&runtime, &session, transfer_to("acct-1")).await;
    let decision = runtime
        .sign_decision(&pending, Approval::Approve)
        .expect("signed");
    let (a, b) = tokio::join!(
        runtime.resume(&session, [decision.clone()]),
        runtime.resume(&session, [decision])
    );
    let mut all = [kinds(&a), kinds(&b)].concat();
    all.sort_unstable();
    assert_eq!(all, [None, Some("invalid_decision")]);
    assert_eq!(desk.transfers.load(Ordering::SeqCst), 1);
    let approvals = audit
        .lines()
        .iter()
        .filter(|line| line["decision"] == "resume" && line["reason"] == "approved")
        .count();
    assert_eq!(approvals, 1, "{:#?}", audit.lines());
}

/// A replay is the first call's content, but not its observation: `redactions()` says 1 the
/// first time and 0 on the replay.
#[tokio::test]
async fn a_replay_reads_as_the_first_call_and_counts_no_redaction_again() {
    let (runtime, _) = desk(|builder| builder);
    let session = Session::new("s");
    let call = || ToolCall::new("c1", "issue_key", json!({ "owner": "ada" }));
    let first = runtime.execute(&session, [call()]).await;
    let again = runtime.execute(&session, [call()]).await;
    let (first, again) = (&first.observations()[0], &again.observations()[0]);
    assert!(again.replayed());
    assert_eq!(first.content(), again.content());
    // The secret was taken out once, before the result was kept: the replay redacts nothing.
    assert_eq!((first.redactions(), again.redactions()), (1, 0));
}

/// `Runtime::flush_audit` is a new public future; it is `Send` (compile check only).
#[tokio::test]
async fn flush_audit_is_send() {
    let (runtime, _) = desk(|builder| builder.audit(MemoryAudit::new()));
    let flush = runtime.flush_audit();
    assert_send(&flush);
    assert!(flush.await.is_ok());
}

/// A store that answers `take` with a request other than the one it listed.
struct SwapsOnTake(MemoryApprovalStore);

impl ApprovalStore for SwapsOnTake {
    fn put(&self, pending: PendingApproval) -> BoxFuture<'_, std::io::Result<()>> {
        ApprovalStore::put(&self.0, pending)
    }

    fn pending<'a>(
        &'a self,
        session: &'a str,
    ) -> BoxFuture<'a, std::io::Result<Vec<PendingApproval>>> {
        ApprovalStore::pending(&self.0, session)
    }

    fn take<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
    ) -> BoxFuture<'a, std::io::Result<Option<PendingApproval>>> {
        Box::pin(async move {
            let taken = ApprovalStore::take(&self.0, session, request_id).await?;
            Ok(taken.map(|mut pending| {
                pending.call_id = "another-call".into();
                pending
            }))
        })
    }
}

#[tokio::test]
async fn what_runs_is_the_request_that_was_checked_whatever_take_answers() {
    let store: Arc<dyn ApprovalStore> = Arc::new(SwapsOnTake(MemoryApprovalStore::default()));
    let session = Session::new("s");
    let (runtime, desk) =
        runtime_with(Arc::clone(&store), keys(), Arc::new(MemoryAudit::default()));
    let pending = pend(&runtime, &session, transfer_to("acct-1")).await;
    let decision = match runtime.sign_decision(&pending, Approval::Approve) {
        Ok(decision) => decision,
        Err(error) => panic!("{error}"),
    };
    let report = runtime.resume(&session, [decision]).await;
    assert_eq!(kinds(&report), [None], "{:?}", report.observations());
    assert_eq!(report.observations()[0].call_id(), pending.call_id);
    assert_eq!(desk.transfers.load(Ordering::SeqCst), 1);
}
