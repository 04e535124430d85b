//! The audit trail: one JSON line per gate decision and per executed write's outcome.
//!
//! [`JsonlAudit`] appends hash-chained JSON lines to a file (its documentation defines the
//! format), [`verify_audit`] checks such a file, [`MemoryAudit`] keeps the same lines in memory.

mod chain;
mod jsonl;
mod memory;
mod sink;
mod ticket;
mod verify;

pub use jsonl::JsonlAudit;
pub use memory::MemoryAudit;
pub use sink::{AuditDecision, AuditRecord, AuditSink};
pub use ticket::{AuditCompleter, AuditTicket};
pub use verify::{AuditError, AuditSummary, verify_audit};

#[cfg(test)]
mod testing;
