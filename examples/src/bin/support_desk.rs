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
//!
//! The text output shows each call's own elapsed time and every error whole (message, hint,
//! details), as the model receives it. `--json` prints the transcript with each turn's report
//! beside it: `{"session", "turns": [{"note", "calls", "report"}]}`, where `calls` are the
//! calls as sent (artifact ids filled in) and `report` is the runtime's `TurnReport`.
//!
//! When the reader of stdout goes away (`support_desk | head`), the program stops quietly.
#![allow(
    clippy::print_stderr,
    reason = "a command-line program reports its own failures"
)]

use std::collections::HashMap;
use std::io::{self, Write};
use std::process::ExitCode;
use std::time::Duration;

use examples::support::SupportDeps;
use serde::{Deserialize, Serialize};
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

/// The `--json` output: the session's turns, each with what the runtime reported.
#[derive(Debug, Serialize)]
struct SessionRun {
    session: String,
    turns: Vec<TurnRun>,
}

/// One turn as it ran: its note, its calls as sent, and the report.
#[derive(Debug, Serialize)]
struct TurnRun {
    note: String,
    calls: Vec<ToolCall>,
    report: TurnReport,
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
    match run(&runtime, transcript, options.json).await {
        Ok(()) => ExitCode::SUCCESS,
        // The reader went away (`support_desk | head`): nothing left to say to anyone.
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("cannot write to stdout: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the transcript's turns; the text output is written turn by turn as each ends, the JSON
/// output once at the end. Stops at the first write that fails.
async fn run(runtime: &Runtime<SupportDeps>, transcript: Transcript, json: bool) -> io::Result<()> {
    if !json {
        let mut out = io::stdout().lock();
        writeln!(
            out,
            "support desk: {} tools, session `{}`, {} turns\n",
            runtime.registry().len(),
            transcript.session,
            transcript.turns.len()
        )?;
        out.flush()?;
    }
    let session = Session::new(transcript.session.as_str());
    let mut artifacts: HashMap<String, String> = HashMap::new();
    let mut turns = Vec::new();
    for (number, turn) in transcript.turns.into_iter().enumerate() {
        let calls: Vec<ToolCall> = turn
            .calls
            .into_iter()
            .map(|call| substitute_artifacts(call, &artifacts))
            .collect();
        let report = runtime.execute(&session, &calls).await;
        for observation in report.observations() {
            if let Some(artifact) = observation.artifact() {
                artifacts.insert(observation.call_id().to_owned(), artifact.to_owned());
            }
        }
        if json {
            turns.push(TurnRun {
                note: turn.note,
                calls,
                report,
            });
        } else {
            let mut out = io::stdout().lock();
            print_turn(&mut out, number + 1, &turn.note, &calls, &report)?;
            out.flush()?;
        }
    }
    let mut out = io::stdout().lock();
    if json {
        let run = SessionRun {
            session: transcript.session,
            turns,
        };
        let rendered = serde_json::to_string_pretty(&run).map_err(io::Error::other)?;
        writeln!(out, "{rendered}")?;
    } else {
        let tickets = runtime.deps().tickets();
        writeln!(out, "tickets created during the session: {}", tickets.len())?;
    }
    out.flush()
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

fn print_turn(
    out: &mut impl Write,
    number: usize,
    note: &str,
    calls: &[ToolCall],
    report: &TurnReport,
) -> io::Result<()> {
    if note.is_empty() {
        writeln!(out, "━━ turn {number}")?;
    } else {
        writeln!(out, "━━ turn {number}: {note}")?;
    }
    let rejected = report
        .observations()
        .iter()
        .filter(|observation| observation.batch().is_none())
        .count();
    writeln!(
        out,
        "   plan: {} -> {}{}",
        plural(calls.len(), "call"),
        plural(report.batches().len(), "batch"),
        if rejected > 0 {
            format!(", {rejected} rejected before running")
        } else {
            String::new()
        }
    )?;
    for batch in report.batches() {
        writeln!(
            out,
            "   batch {} ({}): {}",
            batch.index(),
            if batch.concurrent() {
                "concurrent"
            } else {
                "alone"
            },
            report.batch_call_ids(batch).collect::<Vec<_>>().join(", ")
        )?;
    }
    for (call, observation) in calls.iter().zip(report.observations()) {
        print_observation(out, call, observation)?;
    }
    writeln!(out, "   turn took {}\n", millis(report.elapsed()))
}

fn print_observation(
    out: &mut impl Write,
    call: &ToolCall,
    observation: &Observation,
) -> io::Result<()> {
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
    let id = observation.call_id();
    let tool = observation.tool();
    let facts = facts.join(", ");
    if let Some(error) = observation.error() {
        let retryable = if error.is_retryable() {
            ", retryable"
        } else {
            ""
        };
        writeln!(
            out,
            "   error {id} {tool} ({facts}) {}{retryable}",
            error.kind()
        )?;
        let arguments = match &call.arguments {
            Arguments::Json(text) => text.clone(),
            Arguments::Value(value) => value.to_string(),
        };
        print_field(out, "sent:    ", &arguments)?;
        print_field(out, "message: ", error.message())?;
        if let Some(hint) = error.hint() {
            print_field(out, "hint:    ", hint)?;
        }
        if let Some(details) = error.details() {
            print_field(out, "details: ", &details.to_string())?;
        }
        Ok(())
    } else {
        let label = if observation.is_success() {
            "ok   "
        } else {
            "other"
        };
        writeln!(out, "   {label} {id} {tool} ({facts})")?;
        for line in observation.text_for_model().lines() {
            writeln!(out, "         {line}")?;
        }
        Ok(())
    }
}

/// Writes `label` and `text` whole; the lines after the first are indented under the first.
fn print_field(out: &mut impl Write, label: &str, text: &str) -> io::Result<()> {
    let mut lines = text.lines();
    writeln!(out, "         {label}{}", lines.next().unwrap_or_default())?;
    for line in lines {
        writeln!(out, "         {:width$}{line}", "", width = label.len())?;
    }
    Ok(())
}

fn plural(count: usize, noun: &str) -> String {
    match (count, noun) {
        (1, _) => format!("1 {noun}"),
        (_, "batch") => format!("{count} batches"),
        _ => format!("{count} {noun}s"),
    }
}

/// Milliseconds with about three significant digits: most calls take microseconds
/// (`0.042 ms`), a timeout takes seconds (`2002 ms`).
fn millis(duration: Duration) -> String {
    let millis = duration.as_secs_f64() * 1000.0;
    let decimals = match millis {
        m if m < 1.0 => 3,
        m if m < 10.0 => 2,
        m if m < 100.0 => 1,
        _ => 0,
    };
    format!("{millis:.decimals$} ms")
}
