//! Prints the registered support-desk catalog and, given a tool name and JSON arguments,
//! invokes that tool.
//!
//! ```text
//! cargo run -p examples --bin catalog
//! cargo run -p examples --bin catalog -- get_order_status '{"order_id":"A-1024"}'
//! ```
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line program prints its results"
)]

use std::process::ExitCode;
use std::sync::Arc;

use examples::support::SupportDeps;
use tool_runtime::{CallContext, Registry};

#[tokio::main]
async fn main() -> ExitCode {
    let registry = match Registry::from_inventory::<SupportDeps>() {
        Ok(registry) => registry,
        Err(error) => {
            eprintln!("error: {error}");
            return ExitCode::FAILURE;
        }
    };
    let mut args = std::env::args().skip(1);
    let Some(name) = args.next() else {
        print_catalog(&registry);
        return ExitCode::SUCCESS;
    };
    let arguments = args.next().unwrap_or_else(|| "{}".to_owned());
    let call = CallContext::new(
        Arc::new(SupportDeps::demo()),
        "cli",
        "call-1",
        name.as_str(),
    );
    match registry.invoke(&name, &arguments, call).await {
        Ok(output) => {
            println!("{}", output.text());
            ExitCode::SUCCESS
        }
        Err(error) => {
            let rendered =
                serde_json::to_string_pretty(&error).unwrap_or_else(|_| error.to_string());
            eprintln!("{rendered}");
            ExitCode::FAILURE
        }
    }
}

fn print_catalog(registry: &Registry) {
    println!("{} tools for SupportDeps\n", registry.len());
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
        println!("{}", spec.name());
        println!("  flags:    {}", flags.join(", "));
        println!(
            "  parallel: {}",
            if execution.parallel_safe() {
                "yes"
            } else {
                "no (runs alone)"
            }
        );
        println!("  risk:     {}", spec.risk());
        if let Some(timeout) = spec.timeout() {
            println!("  timeout:  {timeout:?}");
        }
        let resources: Vec<&str> = spec.resources().collect();
        if !resources.is_empty() {
            println!("  resources: {}", resources.join(", "));
        }
        let first_line = spec.description().lines().next().unwrap_or_default();
        println!("  about:    {first_line}");
        println!("  schema:   {}", spec.input_schema());
        println!();
    }
}
