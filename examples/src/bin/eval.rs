//! Reads run traces (JSON lines, one event per step of a run) and reports their figures: a
//! table on stdout, one HTML page with charts, and optionally the figures as JSON.
//!
//! ```text
//! cargo run -p examples --bin eval -- TRACE... [--html FILE | --no-html] [--json FILE]
//! cargo run -p examples --bin eval -- --compare BEFORE... --against AFTER... [--html FILE]
//! ```
//!
//! The page is written to `eval-report.html` in the current directory (`eval-compare.html`
//! when comparing) unless `--html FILE` names another or `--no-html` asks for none. Lines that
//! cannot be read are warnings on stderr, `file:line: problem`; the rest is still evaluated.
//!
//! Exit codes: 0 when the traces were evaluated (even with problems), 2 when no event could be
//! read (from either side, when comparing), 1 for a wrong command line or a file that cannot
//! be written.
#![allow(
    clippy::print_stderr,
    reason = "a command-line program reports its own warnings and failures"
)]

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use tool_runtime::eval::{Report, Traces, read_traces};

const USAGE: &str = "\
usage: eval TRACE... [--html FILE | --no-html] [--json FILE]
       eval --compare BEFORE... --against AFTER... [--html FILE | --no-html] [--json FILE]

Reads run traces (JSON lines) and prints their figures as a table.
  --html FILE   write the HTML page to FILE (default: eval-report.html, or
                eval-compare.html with --compare, in the current directory)
  --no-html     write no HTML page
  --json FILE   write the figures (or the comparison) as JSON to FILE
  --compare     the traces before a change, up to --against
  --against     the traces after it
  -h, --help    this text

Problems (bad lines, files cut short) are warnings on stderr as file:line.
Exit: 0 evaluated, 2 no event could be read, 1 wrong command line or unwritable file.";

/// Which traces to read, and where to write.
#[derive(Default)]
struct Options {
    traces: Vec<PathBuf>,
    before: Vec<PathBuf>,
    after: Vec<PathBuf>,
    html: Option<PathBuf>,
    no_html: bool,
    json: Option<PathBuf>,
}

/// Where the next bare argument goes.
enum Into {
    Traces,
    Before,
    After,
}

fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Option<Options>, String> {
    let mut options = Options::default();
    let mut into = Into::Traces;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("-h" | "--help") => return Ok(None),
            Some("--html") => {
                options.html = Some(args.next().ok_or("--html needs a file")?.into());
            }
            Some("--json") => {
                options.json = Some(args.next().ok_or("--json needs a file")?.into());
            }
            Some("--no-html") => options.no_html = true,
            Some("--compare") => into = Into::Before,
            Some("--against") => into = Into::After,
            Some(flag) if flag.starts_with("--") => return Err(format!("unknown option {flag}")),
            _ => match into {
                Into::Traces => options.traces.push(arg.into()),
                Into::Before => options.before.push(arg.into()),
                Into::After => options.after.push(arg.into()),
            },
        }
    }
    let comparing = !options.before.is_empty() || !options.after.is_empty();
    if comparing && (options.before.is_empty() || options.after.is_empty()) {
        return Err("--compare needs trace files before and after --against".to_owned());
    }
    if comparing && !options.traces.is_empty() {
        return Err("give traces either alone or with --compare ... --against ...".to_owned());
    }
    if !comparing && options.traces.is_empty() {
        return Err("no trace file given".to_owned());
    }
    if options.html.is_some() && options.no_html {
        return Err("--html and --no-html together".to_owned());
    }
    Ok(Some(options))
}

/// Reads one side's traces, warning about each problem; `None` when no event could be read.
fn read(paths: &[PathBuf]) -> Option<Traces> {
    let traces = read_traces(paths);
    for problem in traces.problems() {
        eprintln!("warning: {problem}");
    }
    if traces.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        eprintln!("error: no event could be read from {}", names.join(", "));
        return None;
    }
    Some(traces)
}

fn write_file(path: &PathBuf, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|error| format!("cannot write {}: {error}", path.display()))
}

fn run(options: &Options) -> Result<ExitCode, String> {
    let comparing = !options.before.is_empty();
    let (table, html, json, default_page) = if comparing {
        let (Some(before), Some(after)) = (read(&options.before), read(&options.after)) else {
            return Ok(ExitCode::from(2));
        };
        let comparison = Report::compare(&Report::from(&before), &Report::from(&after));
        let json = serde_json::to_string_pretty(&comparison).map_err(|e| e.to_string())?;
        (
            comparison.table(),
            comparison.html(),
            json,
            "eval-compare.html",
        )
    } else {
        let Some(traces) = read(&options.traces) else {
            return Ok(ExitCode::from(2));
        };
        let report = Report::from(&traces);
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        (report.table(), report.html(), json, "eval-report.html")
    };
    let mut out = io::stdout().lock();
    // A closed stdout (a pager quit early) loses only the table; the files are still written.
    let _ = out.write_all(table.as_bytes()).and_then(|()| out.flush());
    if !options.no_html {
        let page = options
            .html
            .clone()
            .unwrap_or_else(|| PathBuf::from(default_page));
        write_file(&page, &html)?;
        eprintln!("wrote {}", page.display());
    }
    if let Some(path) = &options.json {
        write_file(path, &json)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let options = match parse(std::env::args_os().skip(1)) {
        Ok(Some(options)) => options,
        Ok(None) => {
            let _ = writeln!(io::stdout().lock(), "{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(error) => {
            eprintln!("error: {error}\n\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    match run(&options) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(1)
        }
    }
}
