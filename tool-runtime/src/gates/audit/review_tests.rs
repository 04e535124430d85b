//! Review scratch tests (wt-review): `flush` after lines nobody waited for failed, and after
//! the writer thread stopped.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::{AuditDecision, AuditRecord, AuditSink, JsonlAudit, Storage};

fn temp_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "tool-runtime-audit-review-{name}-{}.jsonl",
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

/// The first sync fails (rolled back); later ones work. Optionally the first append panics.
struct Flaky {
    file: File,
    syncs: Arc<AtomicUsize>,
    panic_on_append: bool,
}

impl Storage for Flaky {
    fn len(&mut self) -> io::Result<u64> {
        self.file.len()
    }
    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        assert!(!self.panic_on_append, "the disk driver panicked");
        self.file.append(bytes)
    }
    fn sync(&mut self) -> io::Result<()> {
        if self.syncs.fetch_add(1, Ordering::SeqCst) == 0 {
            return Err(io::Error::other("the disk is full"));
        }
        self.file.sync()
    }
    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.file.truncate(len)
    }
}

/// `Runtime::flush_audit` documents "Errors: the sink could not make a line durable" and is
/// what the support desk calls before verifying its trail. An outcome line (ticket dropped,
/// as the runtime does) that failed is lost, and the flush after it still answers `Ok`.
#[test]
fn review_flush_reports_a_lost_line_nobody_waited_for() {
    let path = temp_file("lost-outcome");
    let syncs = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&syncs);
    let audit = JsonlAudit::open_with(&path, move |file| Flaky {
        file,
        syncs: counted,
        panic_on_append: false,
    })
    .expect("opens");
    drop(audit.submit(&record("c1", AuditDecision::Outcome)));
    // Let the writer take it alone (and fail it).
    while syncs.load(Ordering::SeqCst) == 0 {
        std::thread::sleep(Duration::from_millis(5));
    }
    std::thread::sleep(Duration::from_millis(20));
    let flushed = audit.flush().wait();
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    assert!(
        flushed.is_err() || on_disk.contains("\"c1\""),
        "flush answered {flushed:?} but the outcome line is not on disk: {on_disk:?}"
    );
}

/// After the writer thread stopped (it panicked), `submit` answers an error at once, but a
/// `flush` is queued where nobody will ever take it: `flush_audit().await` never returns.
#[test]
fn review_flush_after_the_writer_stopped_answers() {
    let path = temp_file("writer-stopped");
    let audit = JsonlAudit::open_with(&path, |file| Flaky {
        file,
        syncs: Arc::new(AtomicUsize::new(1)),
        panic_on_append: true,
    })
    .expect("opens");
    let failed = audit.submit(&record("c1", AuditDecision::Auto)).wait();
    assert!(failed.is_err(), "the writer stopped");
    let flush = audit.flush();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(flush.wait().is_err());
    });
    let answered = rx.recv_timeout(Duration::from_secs(3));
    let _ = std::fs::remove_file(&path);
    assert_eq!(answered, Ok(true), "flush never answered");
    // (Dropping `audit` here joins a finished thread: fine.)
}
