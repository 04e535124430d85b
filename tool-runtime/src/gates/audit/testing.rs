//! What the unit tests of the trail share: temporary files, records, written files.

use std::path::PathBuf;

use serde_json::Value;

use super::jsonl::JsonlAudit;
use super::sink::{AuditDecision, AuditRecord, AuditSink};
use super::verify::{AuditError, AuditSummary, verify_lines};

pub(super) fn temp_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "tool-runtime-audit-{name}-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

pub(super) fn record<'a>(call_id: &'a str, decision: AuditDecision) -> AuditRecord<'a> {
    AuditRecord {
        session: "s-1",
        principal: Some("ada"),
        call_id,
        tool: "refund_order",
        version: Some("2"),
        arguments_digest: Some("abc"),
        arguments: None,
        decision,
        reason: None,
        approval_id: None,
        outcome: None,
    }
}

/// A file of `n` lines (calls `c1`..`cn`), returned as its lines (with their `\n`).
pub(super) fn written(name: &str, n: usize) -> (PathBuf, Vec<String>) {
    let path = temp_file(name);
    let audit = JsonlAudit::open(&path).expect("open");
    for i in 1..=n {
        audit
            .record(&record(&format!("c{i}"), AuditDecision::Auto))
            .expect("record");
    }
    let text = std::fs::read_to_string(&path).expect("read");
    let lines = text.split_inclusive('\n').map(str::to_owned).collect();
    (path, lines)
}

pub(super) fn verify_text(text: &str) -> Result<AuditSummary, AuditError> {
    verify_lines(text.as_bytes())
}

pub(super) fn parsed(line: &str) -> Value {
    serde_json::from_str(line).expect("a JSON line")
}
