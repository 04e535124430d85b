//! Prints the catalog of the support-desk runtime and, given a tool name and JSON arguments,
//! invokes that tool through the runtime.
//!
//! ```text
//! cargo run -p examples --bin catalog
//! cargo run -p examples --bin catalog -- get_order_status '{"order_id":"A-1024"}'
//! cargo run -p examples --bin catalog -- --export openai   # the catalog lowered for a provider
//! cargo run -p examples --bin catalog -- --tokens          # what it costs, per target and tool
//! ```
//!
//! `--export` takes `openai` (Chat Completions `tools`), `openai-responses`, `anthropic`,
//! `anthropic-strict`, `gemini` (`parametersJsonSchema`), `gemini-parameters` (the OpenAPI
//! subset) or `mcp` (`tools/list` entries), and prints the request's `tools` as JSON.
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
use tool_runtime::providers::{self, LoweredCatalog, Target, anthropic, gemini, mcp, openai};
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
    let session = Session::new("cli");
    let written = match args.next() {
        None => print_catalog(&mut io::stdout().lock(), runtime.registry()).map(|()| true),
        Some(flag) if flag == "--export" => {
            let format = args.next().unwrap_or_default();
            match export(&runtime, &session, &format) {
                Ok(tools) => writeln!(io::stdout().lock(), "{tools:#}").map(|()| true),
                Err(error) => {
                    eprintln!("error: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
        Some(flag) if flag == "--tokens" => {
            match print_tokens(&mut io::stdout().lock(), &runtime, &session) {
                Ok(written) => Ok(written),
                Err(error) => {
                    eprintln!("error: {error}");
                    return ExitCode::FAILURE;
                }
            }
        }
        Some(name) => {
            let arguments = args.next().unwrap_or_else(|| "{}".to_owned());
            let report = runtime
                .execute(&session, [ToolCall::new("call-1", name, arguments)])
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

/// The formats `--export` takes, with the target each is lowered for.
const FORMATS: [(&str, Target); 7] = [
    ("openai", Target::OpenAiStrict),
    ("openai-responses", Target::OpenAiStrict),
    ("anthropic", Target::Anthropic),
    ("anthropic-strict", Target::AnthropicStrict),
    ("gemini", Target::Gemini),
    ("gemini-parameters", Target::GeminiParameters),
    ("mcp", Target::Mcp),
];

/// The session's catalog as `format`'s request carries it.
fn export(
    runtime: &Runtime<SupportDeps>,
    session: &Session,
    format: &str,
) -> Result<serde_json::Value, String> {
    let Some(&(_, target)) = FORMATS.iter().find(|(name, _)| *name == format) else {
        let names: Vec<&str> = FORMATS.iter().map(|(name, _)| *name).collect();
        return Err(format!(
            "--export takes one of {}; got `{format}`",
            names.join(", ")
        ));
    };
    if target == Target::Mcp {
        return mcp::tools(runtime, session)
            .map(serde_json::Value::from)
            .map_err(|error| error.to_string());
    }
    let catalog: LoweredCatalog = runtime
        .lowered_catalog(session, target)
        .map_err(|error| error.to_string())?;
    Ok(serde_json::Value::from(match format {
        "openai" => openai::chat_tools(&catalog),
        "openai-responses" => openai::responses_tools(&catalog),
        "gemini" | "gemini-parameters" => gemini::tools(&catalog),
        _ => anthropic::tools(&catalog),
    }))
}

/// The catalog's tokens per target, then per tool for each target. A target the catalog
/// cannot be lowered for is named with the reason.
fn print_tokens(
    out: &mut impl Write,
    runtime: &Runtime<SupportDeps>,
    session: &Session,
) -> Result<bool, String> {
    let mut counts = Vec::new();
    let mut lowered_all = true;
    let write_error = |error: io::Error| error.to_string();
    writeln!(
        out,
        "tokens (o200k_base) of the tools each request carries\n"
    )
    .map_err(write_error)?;
    for &target in Target::ALL {
        match runtime.lowered_catalog(session, target) {
            Ok(catalog) => {
                let count = providers::tokens::count(&catalog);
                writeln!(out, "{:<18} {:>6}", target.as_str(), count.total).map_err(write_error)?;
                counts.push(count);
            }
            Err(error) => {
                lowered_all = false;
                writeln!(out, "{:<18} cannot lower: {error}", target.as_str())
                    .map_err(write_error)?;
            }
        }
    }
    let Some(first) = counts.first() else {
        return Ok(false);
    };
    write!(out, "\n{:<28}", "tool").map_err(write_error)?;
    for count in &counts {
        write!(out, " {:>17}", count.target.as_str()).map_err(write_error)?;
    }
    writeln!(out).map_err(write_error)?;
    for (index, (tool, _)) in first.per_tool.iter().enumerate() {
        write!(out, "{tool:<28}").map_err(write_error)?;
        for count in &counts {
            let tokens = count.per_tool.get(index).map_or(0, |(_, tokens)| *tokens);
            write!(out, " {tokens:>17}").map_err(write_error)?;
        }
        writeln!(out).map_err(write_error)?;
    }
    out.flush().map_err(write_error)?;
    Ok(lowered_all)
}
