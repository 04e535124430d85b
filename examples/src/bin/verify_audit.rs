//! Verifies an audit trail written by `JsonlAudit`: every line is valid JSON, matches its own
//! hash, and links to the line before it.
//!
//! ```text
//! cargo run -p examples --bin verify_audit -- audit.jsonl
//! ```
//!
//! A good file prints `ok: N lines, last hash <hex>` and exits with success; keep the last hash
//! somewhere else to detect a later rewrite of the file or the removal of its last lines. A
//! file that fails prints its first bad line and why to stderr, `line L: <problem>` (edited,
//! removed, reordered, malformed), and exits with failure (1); a missing path argument exits
//! with 2.
#![allow(
    clippy::print_stderr,
    reason = "a command-line program reports its own failures"
)]

use std::io::{self, Write};
use std::process::ExitCode;

use tool_runtime::audit::verify_audit;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let (Some(path), None) = (args.next(), args.next()) else {
        eprintln!("usage: verify_audit <audit file>");
        return ExitCode::from(2);
    };
    match verify_audit(&path) {
        Ok(summary) => {
            let mut out = io::stdout().lock();
            let written = writeln!(
                out,
                "ok: {} lines, last hash {}",
                summary.lines, summary.last_hash
            )
            .and_then(|()| out.flush());
            match written {
                Ok(()) => ExitCode::SUCCESS,
                // The reader went away: the verdict was success all the same.
                Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(error) => {
                    eprintln!("error: cannot write to stdout: {error}");
                    ExitCode::FAILURE
                }
            }
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
