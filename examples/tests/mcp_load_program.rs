//! The `mcp_load` program, on a small load: every call answered, by id, without error.

use std::process::Command;

#[test]
fn every_concurrent_call_is_answered() {
    let output = Command::new(env!("CARGO_BIN_EXE_mcp_load"))
        .arg("200")
        .output()
        .expect("mcp_load runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.starts_with("200 concurrent tools/call over HTTP: 0 errors; latency p50 "),
        "{stdout}"
    );
}
