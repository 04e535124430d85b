//! Prints the catalog of the support-desk runtime and, given a tool name and JSON arguments,
//! invokes that tool through the runtime.
//!
//! ```text
//! cargo run -p examples --bin catalog
//! cargo run -p examples --bin catalog -- get_order_status '{"order_id":"A-1024"}'
//! ```
//!
//! The catalog is the runtime's registry: the support-desk tools and the built-in
//! `read_artifact`. An invocation is a one-call turn of `Runtime::execute`, the path every
//! model call takes (lookup, argument checks, scheduling, timeout, redaction, truncation); the
//! program prints what the model would read, the content or the error as JSON, and exits with
//! failure when the call failed.
#![allow(
    clippy::print_stderr,
    reason = "a command-line program reports its own failures"
)]

use std::io::{self, Write};
use std::process::ExitCode;

use examples::support::SupportDeps;
use tool_runtime::{Registry, Runtime, Session, ToolCall};

#[tokio::main]
async fn main() -> ExitCode {
    let runtime = match Runtime::builder(SupportDeps::demo()).build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("error: cannot build the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut args = std::env::args().skip(1);
    let written = match args.next() {
        None => print_catalog(&mut io::stdout().lock(), runtime.registry()).map(|()| true),
        Some(name) => {
            let arguments = args.next().unwrap_or_else(|| "{}".to_owned());
            let report = runtime
                .execute(
                    &Session::new("cli"),
                    [ToolCall::new("call-1", name, arguments)],
                )
                .await;
            let Some(observation) = report.get("call-1") else {
                eprintln!("error: the runtime did not answer the call");
                return ExitCode::FAILURE;
            };
            let mut out = io::stdout().lock();
            writeln!(out, "{}", observation.text_for_model())
                .and_then(|()| out.flush())
                .map(|()| observation.is_success())
        }
    };
    match written {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        // The reader went away (`catalog | head`): nothing left to say to anyone.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: cannot write to stdout: {error}");
            ExitCode::FAILURE
        }
    }
}

fn print_catalog(out: &mut impl Write, registry: &Registry) -> io::Result<()> {
    writeln!(out, "{} tools for SupportDeps\n", registry.len())?;
    for spec in registry.specs() {
        let execution = spec.execution();
        let mut flags = Vec::new();
        for (set, flag) in [
            (execution.read_only, "read_only"),
            (execution.mutates_workspace, "mutates_workspace"),
            (execution.exclusive, "exclusive"),
            (execution.stateful_action, "stateful"),
            (execution.pagination, "pagination"),
            (spec.hints().idempotent, "idempotent"),
            (spec.hints().destructive, "destructive"),
            (spec.hints().open_world, "open_world"),
        ] {
            if set {
                flags.push(flag);
            }
        }
        writeln!(out, "{}", spec.name())?;
        writeln!(out, "  flags:    {}", flags.join(", "))?;
        writeln!(
            out,
            "  parallel: {}",
            if execution.parallel_safe() {
                "yes"
            } else {
                "no (runs alone)"
            }
        )?;
        writeln!(out, "  risk:     {}", spec.risk())?;
        if let Some(timeout) = spec.timeout() {
            writeln!(out, "  timeout:  {timeout:?}")?;
        }
        let resources: Vec<&str> = spec.resources().collect();
        if !resources.is_empty() {
            writeln!(out, "  resources: {}", resources.join(", "))?;
        }
        let first_line = spec.description().lines().next().unwrap_or_default();
        writeln!(out, "  about:    {first_line}")?;
        writeln!(out, "  schema:   {}", spec.input_schema())?;
        writeln!(out)?;
    }
    out.flush()
}
