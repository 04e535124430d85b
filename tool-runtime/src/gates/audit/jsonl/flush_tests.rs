//! What `flush` answers after lines were lost: lines nobody waited for that failed in a batch,
//! lines refused at once, and after the writer thread stopped.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{AuditRecord, AuditSink, JsonlAudit, Storage};
use crate::gates::audit::sink::AuditDecision;
use crate::gates::audit::verify::verify_audit;

fn temp_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "tool-runtime-audit-flush-{name}-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

fn record(call_id: &str, decision: AuditDecision) -> AuditRecord<'_> {
    AuditRecord {
        session: "s",
        principal: None,
        call_id,
        tool: "t",
        version: None,
        arguments_digest: None,
        arguments: None,
        decision,
        reason: None,
        approval_id: None,
        outcome: Some("success"),
    }
}

/// The first `failing_writes` appends fail (and are rolled back); later ones work.
/// Optionally every append panics.
struct Flaky {
    file: File,
    appends: AtomicUsize,
    failing_writes: usize,
    panic_on_append: bool,
}

impl Storage for Flaky {
    fn len(&mut self) -> io::Result<u64> {
        self.file.len()
    }
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        assert!(!self.panic_on_append, "the disk driver panicked");
        if self.appends.fetch_add(1, Ordering::SeqCst) < self.failing_writes {
            return Err(io::Error::other("the disk is full"));
        }
        self.file.append(bytes)
    }
    fn sync(&mut self) -> io::Result<()> {
        self.file.sync()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.truncate(len)
    }
}

fn flaky(path: &std::path::Path, failing_writes: usize, panic_on_append: bool) -> JsonlAudit {
    JsonlAudit::open_with(path, move |file| Flaky {
        file,
        appends: AtomicUsize::new(0),
        failing_writes,
        panic_on_append,
    })
    .expect("opens")
}

/// An outcome line (its ticket dropped, as the runtime does) that failed is reported by the
/// next flush, whether the writer took it alone or with the flush, and only by that flush.
#[test]
fn a_flush_reports_the_lines_lost_before_it_once() {
    let path = temp_file("lost-outcome");
    let audit = flaky(&path, 1, false);
    drop(audit.submit(&record("c1", AuditDecision::Outcome)));
    let flushed = audit.flush().wait();
    let Err(error) = flushed else {
        panic!("the flush answered Ok, but the outcome line c1 is not on disk");
    };
    assert!(
        error.to_string().starts_with(
            "1 audit line submitted since the last flush could not be written and is missing \
             from the trail (last cause: the disk is full)"
        ),
        "{error}"
    );
    // The chain went on from the last line on disk: the file verifies, without c1.
    assert_eq!(verify_audit(&path).expect("verifies").lines, 0);
    // Reported once: the lines written since are durable, and the next flush says so.
    drop(audit.submit(&record("c2", AuditDecision::Outcome)));
    drop(audit.submit(&record("c3", AuditDecision::Deny)));
    assert!(audit.flush().wait().is_ok());
    let on_disk = std::fs::read_to_string(&path).expect("read");
    assert!(!on_disk.contains("\"c1\"") && on_disk.contains("\"c3\""));
    let _ = std::fs::remove_file(&path);
}

/// Two lines lost, a flush between them: each flush reports the line before it.
#[test]
fn each_flush_reports_only_what_was_lost_before_it() {
    let path = temp_file("lost-two");
    let audit = flaky(&path, 2, false);
    drop(audit.submit(&record("c1", AuditDecision::Outcome)));
    let first = audit.flush();
    drop(audit.submit(&record("c2", AuditDecision::Outcome)));
    let second = audit.flush();
    // The first write failed c1 (and whatever was queued behind it), or c1 alone and then the
    // second write failed c2's batch: either way one line before each flush.
    for flushed in [first.wait(), second.wait()] {
        let error = flushed.expect_err("a line before this flush was lost");
        assert!(error.to_string().starts_with("1 audit line "), "{error}");
    }
    assert!(audit.flush().wait().is_ok());
    let _ = std::fs::remove_file(&path);
}

/// After the writer thread stopped (it panicked), `submit` and `flush` answer an error at
/// once: nothing is queued where nobody will ever take it.
#[test]
fn after_the_writer_stopped_a_flush_answers_at_once() {
    let path = temp_file("writer-stopped");
    let mut audit = flaky(&path, 0, true);
    let failed = audit.submit(&record("c1", AuditDecision::Auto)).wait();
    assert!(failed.is_err(), "the writer stopped");
    // Until the thread has ended, a flush would still be taken by its exit; after, never.
    let writer = audit.thread.take().expect("the writer thread");
    assert!(writer.join().is_err(), "the writer thread panicked");
    let mut flush = audit.flush();
    let Some(Err(error)) = flush.answer_now() else {
        panic!("the flush was queued for a writer that stopped: it would never answer");
    };
    assert!(
        error.to_string().contains("audit writer thread stopped"),
        "{error}"
    );
    let mut submitted = audit.submit(&record("c2", AuditDecision::Auto));
    assert!(submitted.answer_now().is_some_and(|answer| answer.is_err()));
    // The line refused since is reported too.
    let mut flush = audit.flush();
    let Some(Err(error)) = flush.answer_now() else {
        panic!("a flush after the writer stopped answers at once");
    };
    assert!(error.to_string().contains("1 audit line "), "{error}");
    let _ = std::fs::remove_file(&path);
}
