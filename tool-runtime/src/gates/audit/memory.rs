//! [`MemoryAudit`]: the trail in memory, line for line as a
//! [`JsonlAudit`](super::jsonl::JsonlAudit) writes it.

use std::io;
use std::sync::Mutex;

use serde_json::Value;

use super::chain::{Chain, line_of, now_rfc3339};
use super::sink::{AuditRecord, AuditSink};

/// An audit trail in memory, in the same format as [`JsonlAudit`]'s lines (each a JSON
/// object with `seq`, `time`, the record's fields, `prev` and `hash`): for tests, and for
/// applications that ship records elsewhere themselves.
///
/// [`JsonlAudit`]: super::jsonl::JsonlAudit
#[derive(Debug, Default)]
pub struct MemoryAudit {
    with_arguments: bool,
    failing: bool,
    state: Mutex<MemoryState>,
}

#[derive(Debug)]
struct MemoryState {
    chain: Chain,
    lines: Vec<Value>,
}

impl Default for MemoryState {
    fn default() -> Self {
        MemoryState {
            chain: Chain::genesis(),
            lines: Vec::new(),
        }
    }
}

impl MemoryAudit {
    /// An empty trail.
    #[must_use]
    pub fn new() -> Self {
        MemoryAudit::default()
    }

    /// A trail that cannot be written: every [`AuditSink::record`] returns an error (so the
    /// runtime refuses the writes it would record).
    #[must_use]
    pub fn failing() -> Self {
        MemoryAudit {
            failing: true,
            ..MemoryAudit::default()
        }
    }

    /// Whether records carry the (redacted) arguments ([`AuditSink::wants_arguments`]);
    /// default `false`.
    #[must_use]
    pub fn with_arguments(mut self, with_arguments: bool) -> Self {
        self.with_arguments = with_arguments;
        self
    }

    /// The lines recorded so far, oldest first.
    #[must_use]
    pub fn lines(&self) -> Vec<Value> {
        match self.state.lock() {
            Ok(state) => state.lines.clone(),
            Err(poisoned) => poisoned.into_inner().lines.clone(),
        }
    }
}

impl AuditSink for MemoryAudit {
    fn record(&self, record: &AuditRecord<'_>) -> io::Result<()> {
        if self.failing {
            return Err(io::Error::other(
                "the audit trail is unavailable (MemoryAudit::failing)",
            ));
        }
        let mut state = self
            .state
            .lock()
            .map_err(|_| io::Error::other("the audit trail's lock is poisoned"))?;
        let time = now_rfc3339();
        let content = state.chain.content(record, self.with_arguments, &time);
        let line = line_of(&content)?;
        // The value is built, not parsed from the line: no parser depth limit applies to the
        // arguments. Its fields keep their order (serde_json's `preserve_order`).
        let mut value = serde_json::to_value(&content).map_err(io::Error::other)?;
        let Value::Object(fields) = &mut value else {
            return Err(io::Error::other(
                "an audit line did not serialize as a JSON object",
            ));
        };
        fields.insert("hash".to_owned(), Value::String(line.hash.clone()));
        state.lines.push(value);
        state.chain.advance(line.hash);
        Ok(())
    }

    fn wants_arguments(&self) -> bool {
        self.with_arguments
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gates::audit::chain::GENESIS;
    use crate::gates::audit::sink::AuditDecision;
    use crate::gates::audit::testing::{record, verify_text};

    #[test]
    fn memory_lines_have_the_file_format() {
        let memory = MemoryAudit::new();
        for i in 1..=3 {
            memory
                .record(&record(&format!("c{i}"), AuditDecision::Ask))
                .expect("record");
        }
        let lines = memory.lines();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["prev"], GENESIS);
        assert_eq!(lines[2]["seq"], 3);
        assert_eq!(lines[1]["decision"], "ask");
        let keys: Vec<&str> = lines[0]
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "seq",
                "time",
                "session",
                "principal",
                "call_id",
                "tool",
                "version",
                "arguments_digest",
                "decision",
                "reason",
                "approval_id",
                "outcome",
                "prev",
                "hash"
            ]
        );
        // Written out, the lines are a file that verifies.
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        assert_eq!(verify_text(&text).expect("verifies").lines, 3);
    }

    #[test]
    fn a_failing_memory_audit_refuses_every_record() {
        let memory = MemoryAudit::failing();
        assert!(memory.record(&record("c1", AuditDecision::Auto)).is_err());
        assert!(memory.lines().is_empty());
    }
}
