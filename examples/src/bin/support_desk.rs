//! A scripted support-desk session: each turn is the tool calls a model would emit, run by the
//! runtime; every turn prints its batches, each observation and the timings.
//!
//! ```text
//! cargo run -p examples --bin support_desk                          # the built-in transcript
//! cargo run -p examples --bin support_desk -- --transcript FILE     # another transcript
//! cargo run -p examples --bin support_desk -- --json                # reports as JSON
//! ```
//!
//! A transcript is `{"session": "...", "turns": [{"note": "...", "calls": [{"id", "name",
//! "arguments"}]}]}`; in arguments, `$artifact_of:<call id>` stands for the artifact id an
//! earlier observation named, as a model would copy it from a truncation notice.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a command-line program prints its results"
)]

use std::collections::HashMap;
use std::process::ExitCode;

use examples::support::SupportDeps;
use serde::Deserialize;
use tool_runtime::{Arguments, Observation, Runtime, Session, ToolCall, TurnReport};

const BUILT_IN: &str = include_str!("../../transcripts/support_desk.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Transcript {
    session: String,
    turns: Vec<Turn>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    #[serde(default)]
    note: String,
    calls: Vec<ToolCall>,
}

struct Options {
    transcript: Option<String>,
    json: bool,
}

fn options() -> Result<Options, String> {
    let mut options = Options {
        transcript: None,
        json: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--transcript" => {
                options.transcript = Some(args.next().ok_or("--transcript needs a file")?);
            }
            "--json" => options.json = true,
            "--help" | "-h" => {
                return Err(
                    "usage: support_desk [--transcript FILE] [--json]\n\nRuns a scripted support-desk session (the built-in one by default)."
                        .to_owned(),
                );
            }
            other => return Err(format!("unknown argument `{other}`; try --help")),
        }
    }
    Ok(options)
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::FAILURE;
        }
    };
    let text = match &options.transcript {
        None => BUILT_IN.to_owned(),
        Some(path) => match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("cannot read {path}: {error}");
                return ExitCode::FAILURE;
            }
        },
    };
    let transcript: Transcript = match serde_json::from_str(&text) {
        Ok(transcript) => transcript,
        Err(error) => {
            eprintln!("the transcript is not valid: {error}");
            return ExitCode::FAILURE;
        }
    };
    let runtime = match Runtime::builder(SupportDeps::demo()).build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("cannot build the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };

    if !options.json {
        println!(
            "support desk: {} tools, session `{}`, {} turns\n",
            runtime.registry().len(),
            transcript.session,
            transcript.turns.len()
        );
    }
    let session = Session::new(transcript.session);
    let mut artifacts: HashMap<String, String> = HashMap::new();
    let mut reports = Vec::new();
    for (number, turn) in transcript.turns.into_iter().enumerate() {
        let calls: Vec<ToolCall> = turn
            .calls
            .into_iter()
            .map(|call| substitute_artifacts(call, &artifacts))
            .collect();
        let report = runtime.execute(&session, calls.clone()).await;
        for observation in report.observations() {
            if let Some(artifact) = observation.artifact() {
                artifacts.insert(observation.call_id().to_owned(), artifact.to_owned());
            }
        }
        if options.json {
            reports.push(report);
        } else {
            print_turn(number + 1, &turn.note, &calls, &report);
        }
    }
    if options.json {
        match serde_json::to_string_pretty(&reports) {
            Ok(json) => println!("{json}"),
            Err(error) => {
                eprintln!("cannot render the reports: {error}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        let tickets = runtime.deps().tickets();
        println!("tickets created during the session: {}", tickets.len());
    }
    ExitCode::SUCCESS
}

/// Replaces `$artifact_of:<call id>` in string arguments with that call's artifact id.
fn substitute_artifacts(mut call: ToolCall, artifacts: &HashMap<String, String>) -> ToolCall {
    if let Arguments::Json(text) = &mut call.arguments {
        for (call_id, artifact) in artifacts {
            *text = text.replace(&format!("$artifact_of:{call_id}"), artifact);
        }
    }
    call
}

fn print_turn(number: usize, note: &str, calls: &[ToolCall], report: &TurnReport) {
    println!("━━ turn {number}: {note}");
    let rejected = report
        .observations()
        .iter()
        .filter(|observation| observation.batch().is_none())
        .count();
    println!(
        "   plan: {} -> {}{}",
        plural(calls.len(), "call"),
        plural(report.batches().len(), "batch"),
        if rejected > 0 {
            format!(", {rejected} rejected before running")
        } else {
            String::new()
        }
    );
    for batch in report.batches() {
        println!(
            "   batch {} ({}): {}",
            batch.index(),
            if batch.concurrent() {
                "concurrent"
            } else {
                "alone"
            },
            report.batch_call_ids(batch).collect::<Vec<_>>().join(", ")
        );
    }
    for (call, observation) in calls.iter().zip(report.observations()) {
        print_observation(call, observation);
    }
    println!("   turn took {}\n", millis(report.elapsed()));
}

fn print_observation(call: &ToolCall, observation: &Observation) {
    let mut facts = vec![millis(observation.elapsed())];
    if observation.attempts() > 1 {
        facts.push(format!("{} attempts", observation.attempts()));
    }
    if observation.truncated() {
        facts.push("truncated".to_owned());
    }
    if observation.redactions() > 0 {
        facts.push(format!("{} secrets redacted", observation.redactions()));
    }
    match (observation.content(), observation.error()) {
        (Some(content), _) => {
            println!(
                "   ok    {} {} ({})",
                observation.call_id(),
                observation.tool(),
                facts.join(", ")
            );
            print_indented(content);
        }
        (None, Some(error)) => {
            println!(
                "   error {} {} ({}) {}",
                observation.call_id(),
                observation.tool(),
                facts.join(", "),
                error.kind()
            );
            let arguments = match &call.arguments {
                Arguments::Json(text) => text.clone(),
                Arguments::Value(value) => value.to_string(),
            };
            println!("         sent:    {}", shorten(&arguments, 100));
            println!("         message: {}", error.message());
            if let Some(hint) = error.hint() {
                println!("         hint:    {}", shorten(hint, 160));
            }
        }
        (None, None) => {
            println!(
                "   ?     {} {} ({})",
                observation.call_id(),
                observation.tool(),
                facts.join(", ")
            );
            print_indented(&observation.text_for_model());
        }
    }
}

fn plural(count: usize, noun: &str) -> String {
    match (count, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "batch") => format!("{count} batches"),
        _ => format!("{count} {noun}s"),
    }
}

fn millis(duration: std::time::Duration) -> String {
    format!("{:.1} ms", duration.as_secs_f64() * 1000.0)
}

fn print_indented(content: &str) {
    for line in content.lines() {
        println!("         {line}");
    }
}

fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    format!("{cut}...")
}
