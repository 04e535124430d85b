//! A `JsonlAudit` under turns of audited writes: what a slow disk costs the turn (syncs, not
//! wall time), what a failing one refuses, and the chain after turns that run at once.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tool_core::ErrorKind;

use super::{AuditRecord, AuditSink, JsonlAudit, Storage};
use crate::audit::{AuditDecision, MemoryAudit};
use crate::dynamic::DynamicTool;
use crate::gates::audit::verify::verify_audit;
use crate::{Runtime, Session, ToolCall};

/// The audit file's storage as a test sees it: every sync is counted and takes `sync_takes`;
/// the first `failing_syncs` syncs fail.
struct Disk {
    file: File,
    syncs: Arc<AtomicUsize>,
    sync_takes: Duration,
    failing_syncs: usize,
}

impl Storage for Disk {
    fn len(&mut self) -> io::Result<u64> {
        self.file.len()
    }

    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.append(bytes)
    }

    fn sync(&mut self) -> io::Result<()> {
        let done = self.syncs.fetch_add(1, Ordering::SeqCst);
        std::thread::sleep(self.sync_takes);
        if done < self.failing_syncs {
            return Err(io::Error::other("the disk is full"));
        }
        self.file.sync()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.truncate(len)
    }
}

fn temp_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "tool-runtime-audit-turns-{name}-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

/// A `JsonlAudit` on `path` whose syncs take `sync_takes`, the first `failing_syncs` failing;
/// with the count of its syncs.
fn audit_on(
    path: &Path,
    sync_takes: Duration,
    failing_syncs: usize,
) -> (Arc<JsonlAudit>, Arc<AtomicUsize>) {
    let syncs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&syncs);
    let audit = JsonlAudit::open_with(path, move |file| Disk {
        file,
        syncs: counted,
        sync_takes,
        failing_syncs,
    })
    .expect("the audit file opens");
    (Arc::new(audit), syncs)
}

/// What the write tool saw: how many times it ran, and how many of those runs did not find
/// their call's decision line in the audit file.
#[derive(Default)]
struct Seen {
    runs: AtomicUsize,
    line_missing: AtomicUsize,
}

/// A write (`note`) that checks, as it starts, that its decision line is in the audit file;
/// and a read (`look`).
fn runtime(audit: impl AuditSink, path: &Path, seen: &Arc<Seen>) -> Runtime<()> {
    let schema = json!({
        "type": "object",
        "properties": {"n": {"type": "integer"}},
        "required": ["n"]
    });
    let (path, seen) = (path.to_owned(), Arc::clone(seen));
    let note = DynamicTool::builder("note", "Writes a note.", schema.clone())
        .handler(move |args: Value, _ctx| {
            let (path, seen) = (path.clone(), Arc::clone(&seen));
            async move {
                seen.runs.fetch_add(1, Ordering::SeqCst);
                let line = format!(
                    "\"call_id\":\"call_{}\",\"tool\":\"note\"",
                    args["n"].as_u64().unwrap_or_default()
                );
                let written = std::fs::read_to_string(&path).unwrap_or_default();
                if !written.lines().any(|text| text.contains(&line)) {
                    seen.line_missing.fetch_add(1, Ordering::SeqCst);
                }
                Ok(json!("noted"))
            }
        })
        .build()
        .expect("a tool");
    let look = DynamicTool::builder("look", "Reads.", schema)
        .read_only()
        .handler(|_args: Value, _ctx| async { Ok(json!("seen")) })
        .build()
        .expect("a tool");
    Runtime::builder(())
        .tool(note)
        .tool(look)
        .audit(audit)
        .build()
        .expect("a runtime")
}

fn calls(tool: &str, count: usize) -> Vec<ToolCall> {
    calls_from(tool, 0, count)
}

/// Calls `call_<n>` with the argument `n`, from `first` on (each a write of its own: the same
/// arguments again would be answered from the idempotency store).
fn calls_from(tool: &str, first: usize, count: usize) -> Vec<ToolCall> {
    (first..first + count)
        .map(|n| ToolCall::new(format!("call_{n}"), tool, json!({ "n": n })))
        .collect()
}

fn kinds(report: &crate::TurnReport) -> Vec<Option<&str>> {
    report
        .observations()
        .iter()
        .map(crate::Observation::error_kind)
        .collect()
}

/// 64 lines submitted together against a disk whose sync takes 5 ms: a few syncs (the first
/// line alone, perhaps, then the rest while it syncs), not 64.
#[test]
fn lines_submitted_together_share_their_sync() {
    let path = temp_file("submitted-together");
    let (audit, syncs) = audit_on(&path, Duration::from_millis(5), 0);
    let tickets: Vec<_> = (0..64)
        .map(|n| {
            audit.submit(&AuditRecord {
                session: "s-1",
                principal: None,
                call_id: &format!("call_{n}"),
                tool: "note",
                version: None,
                arguments_digest: None,
                arguments: None,
                decision: AuditDecision::Auto,
                reason: None,
                approval_id: None,
                outcome: None,
            })
        })
        .collect();
    for ticket in tickets {
        ticket.wait().expect("durable");
    }
    let syncs = syncs.load(Ordering::SeqCst);
    assert!(syncs <= 4, "{syncs} syncs for 64 lines submitted together");
    assert_eq!(verify_audit(&path).expect("the chain verifies").lines, 64);
    let _ = std::fs::remove_file(path);
}

/// A turn of 64 writes, each with its decision line and its outcome line, against a disk whose
/// sync takes 5 ms: the lines submitted together share syncs (a group commit), where one sync
/// per line made the turn wait for 128 syncs in a row.
#[tokio::test]
async fn a_turn_of_64_audited_writes_costs_a_few_syncs_not_one_per_line() {
    let path = temp_file("group-commit");
    let (audit, syncs) = audit_on(&path, Duration::from_millis(5), 0);
    let seen = Arc::new(Seen::default());
    let runtime = runtime(Arc::clone(&audit), &path, &seen);
    let report = runtime
        .execute(&Session::new("s-1"), calls("note", 64))
        .await;
    assert_eq!(kinds(&report), vec![None; 64], "every write ran");
    assert_eq!(seen.runs.load(Ordering::SeqCst), 64);
    assert_eq!(
        seen.line_missing.load(Ordering::SeqCst),
        0,
        "a write started before its decision line was durable"
    );
    // Dropped, the sink writes what is still queued (the last outcome lines).
    drop(runtime);
    drop(audit);
    let syncs = syncs.load(Ordering::SeqCst);
    assert_eq!(verify_audit(&path).expect("the chain verifies").lines, 128);
    assert!(
        syncs <= 8,
        "{syncs} syncs for 128 lines (64 decisions, 64 outcomes)"
    );
    let _ = std::fs::remove_file(path);
}

/// A disk that fails at the sync: the write whose line it could not make durable is answered
/// `audit_unavailable` and never runs, reads go on, and once the disk works again writes run
/// and the chain goes on from the last durable line.
#[tokio::test]
async fn a_write_whose_line_is_not_durable_does_not_run() {
    let path = temp_file("failing-sync");
    let (audit, _) = audit_on(&path, Duration::ZERO, 1);
    let seen = Arc::new(Seen::default());
    let runtime = runtime(Arc::clone(&audit), &path, &seen);
    let session = Session::new("s-1");
    let report = runtime.execute(&session, calls("note", 1)).await;
    assert_eq!(kinds(&report), [Some("audit_unavailable")]);
    let error = report.observations()[0].error().expect("an error");
    assert_eq!(
        error.message(),
        "the audit trail could not be written, so this call was not run"
    );
    assert_eq!(seen.runs.load(Ordering::SeqCst), 0, "the write never ran");
    let report = runtime.execute(&session, calls("look", 1)).await;
    assert_eq!(kinds(&report), [None], "reads write no line and go on");
    let report = runtime.execute(&session, calls("note", 2)).await;
    assert_eq!(kinds(&report), [None, None], "the disk works again");
    assert_eq!(seen.runs.load(Ordering::SeqCst), 2);
    drop(runtime);
    drop(audit);
    let summary = verify_audit(&path).expect("the chain verifies");
    assert_eq!(summary.lines, 4, "two decision lines and two outcome lines");
    let _ = std::fs::remove_file(path);
}

/// A sink that refuses at once refuses the write too (`MemoryAudit::failing`).
#[tokio::test]
async fn a_failing_memory_audit_still_refuses_writes() {
    let path = temp_file("memory-failing");
    let seen = Arc::new(Seen::default());
    let runtime = runtime(MemoryAudit::failing(), &path, &seen);
    let report = runtime
        .execute(&Session::new("s-1"), calls("note", 2))
        .await;
    assert_eq!(
        kinds(&report),
        [Some("audit_unavailable"), Some("audit_unavailable")]
    );
    assert_eq!(
        report.observations()[0]
            .error()
            .map(tool_core::ToolError::kind),
        Some(&ErrorKind::AuditUnavailable)
    );
    assert_eq!(seen.runs.load(Ordering::SeqCst), 0);
}

/// Turns of several sessions at once against one `JsonlAudit`: one chain, every line in it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_chain_verifies_after_concurrent_turns() {
    let path = temp_file("concurrent-turns");
    let (audit, _) = audit_on(&path, Duration::from_millis(1), 0);
    let seen = Arc::new(Seen::default());
    let runtime = runtime(Arc::clone(&audit), &path, &seen);
    let turns: Vec<_> = (0..8)
        .map(|task| {
            let runtime = runtime.clone();
            tokio::spawn(async move {
                let session = Session::new(format!("s-{task}"));
                let mut kinds = Vec::new();
                for turn in 0..3 {
                    let report = runtime
                        .execute(&session, calls_from("note", turn * 4, 4))
                        .await;
                    kinds.extend(
                        report
                            .observations()
                            .iter()
                            .map(|o| o.error_kind().is_none()),
                    );
                }
                kinds
            })
        })
        .collect();
    for turn in turns {
        let ran = turn.await.expect("a turn task");
        assert!(ran.iter().all(|ran| *ran), "every write ran");
    }
    assert_eq!(seen.line_missing.load(Ordering::SeqCst), 0);
    drop(runtime);
    drop(audit);
    let summary = verify_audit(&path).expect("the chain verifies");
    assert_eq!(summary.lines, 8 * 3 * 4 * 2);
    let _ = std::fs::remove_file(path);
}
