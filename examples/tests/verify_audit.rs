//! The `verify_audit` program, run as a user runs it on an audit trail the runtime's
//! `JsonlAudit` wrote: a good file, an edited one, one with a line removed, and no file.

use std::path::PathBuf;
use std::process::{Command, Output};

use tool_runtime::audit::{AuditDecision, AuditRecord, AuditSink, JsonlAudit, verify_audit};

fn verify(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_verify_audit"))
        .args(args)
        .output()
        .expect("the verify_audit program runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 output")
}

/// An audit file of three records, as the runtime writes them.
fn audit_file(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "examples-verify-audit-{name}-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    let audit = JsonlAudit::open(&path).expect("the audit file opens");
    for (call_id, decision, outcome) in [
        ("call_1", AuditDecision::Approve, None),
        ("call_1", AuditDecision::Outcome, Some("success")),
        ("call_2", AuditDecision::Deny, None),
    ] {
        audit
            .record(&AuditRecord {
                session: "s-1",
                principal: Some("ada"),
                call_id,
                tool: "refund_order",
                version: None,
                arguments_digest: None,
                arguments: None,
                decision,
                reason: None,
                approval_id: None,
                outcome,
            })
            .expect("a record is written");
    }
    path
}

#[test]
fn a_good_file_prints_its_line_count_and_last_hash() {
    let path = audit_file("good");
    let output = verify(&[path.as_os_str()]);
    assert!(output.status.success(), "{output:?}");
    let summary = verify_audit(&path).expect("the file verifies");
    assert_eq!(
        text(&output.stdout),
        format!("ok: 3 lines, last hash {}\n", summary.last_hash)
    );
    assert!(output.stderr.is_empty(), "{output:?}");
    let _ = std::fs::remove_file(path);
}

#[test]
fn an_edited_line_is_named_and_fails() {
    let path = audit_file("edited");
    let content = std::fs::read_to_string(&path).expect("read");
    let edited = content.replacen("\"decision\":\"deny\"", "\"decision\":\"approve\"", 1);
    assert_ne!(edited, content);
    std::fs::write(&path, edited).expect("write");
    let output = verify(&[path.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty(), "{output:?}");
    assert_eq!(
        text(&output.stderr),
        "line 3: edited: its hash does not match its content\n"
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_removed_line_is_named_and_fails() {
    let path = audit_file("removed");
    let content = std::fs::read_to_string(&path).expect("read");
    let without_first: String = content.split_inclusive('\n').skip(1).collect();
    std::fs::write(&path, without_first).expect("write");
    let output = verify(&[path.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    let stderr = text(&output.stderr);
    assert!(
        stderr.starts_with("line 1: removed: seq mismatch, expected seq 1, found 2"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(path);
}

#[test]
fn a_missing_file_or_argument_fails() {
    let path = std::env::temp_dir().join("examples-verify-audit-no-such-file.jsonl");
    let output = verify(&[path.as_os_str()]);
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(
        text(&output.stderr).starts_with("cannot open the audit file"),
        "{output:?}"
    );
    let output = verify(&[]);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}
