//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/mcp-clients/package.json`) against the `mcp_conformance` program over Streamable
//! HTTP: every server scenario the suite knows, each in its own process with a time limit,
//! compared with `tests/mcp/conformance-baseline.txt`, the scenarios expected not to pass.
//!
//! A scenario passes when none of its checks is `FAILURE` or `WARNING` (the rule of the
//! suite's own `--expected-failures`). The test fails when a scenario outside the baseline does
//! not pass (printing its checks and output) and when a baseline scenario passes, so the
//! baseline stays true. Node 22 and the suite come from `bash .ci/test.sh` (`MCP_NODE`,
//! `MCP_CLIENTS`); without them the test fails.

#[path = "mcp/common.rs"]
mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::thread;
use std::time::Duration;

use serde_json::Value;

use common::{Finished, ScratchDir, ServerProcess, client_file, node_command, run_with_timeout};

/// The suite's entry point inside `MCP_CLIENTS`.
const SUITE: &str = "@modelcontextprotocol/conformance/dist/index.js";

/// The longest a scenario may run: its requests time out after 60 s in the suite's client,
/// and its slowest wait on a stream is 10 s.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(90);

/// Scenarios run at once: each is a node process of its own with a client session; a few at a
/// time keep the run short on a two-core machine.
const PARALLEL: usize = 4;

/// The baseline: scenario name to the reason it is expected not to pass.
const BASELINE: &str = include_str!("mcp/conformance-baseline.txt");

/// The server under test, started with an ephemeral port.
fn conformance_server() -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp_conformance"));
    command.args(["--http", "127.0.0.1:0"]);
    command
}

/// The baseline's entries; panics on a line that is not `scenario: reason` or names a
/// scenario twice.
fn baseline() -> BTreeMap<String, String> {
    let mut entries = BTreeMap::new();
    for (number, line) in BASELINE.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((scenario, reason)) = line.split_once(':') else {
            panic!(
                "conformance-baseline.txt:{}: `{line}` is not `scenario: reason`",
                number + 1
            );
        };
        let (scenario, reason) = (scenario.trim(), reason.trim());
        assert!(
            !scenario.is_empty() && !reason.is_empty(),
            "conformance-baseline.txt:{}: `{line}` needs a scenario and a reason",
            number + 1
        );
        let previous = entries.insert(scenario.to_owned(), reason.to_owned());
        assert!(
            previous.is_none(),
            "conformance-baseline.txt:{}: `{scenario}` is listed twice",
            number + 1
        );
    }
    entries
}

/// The server scenarios of the installed suite (`list --server`: lines `  - name [versions]`).
fn server_scenarios(suite: &Path) -> Vec<String> {
    let mut command = node_command(suite);
    command.args(["list", "--server"]);
    let listed = run_with_timeout(command, SCENARIO_TIMEOUT);
    assert!(
        listed.status.is_some_and(|status| status.success()),
        "`conformance list --server` failed: {}",
        describe(&listed)
    );
    let scenarios: Vec<String> = common::strip_ansi(&listed.stdout)
        .lines()
        .filter_map(|line| line.trim().strip_prefix("- "))
        .filter_map(|entry| entry.split_whitespace().next())
        .map(str::to_owned)
        .collect();
    assert!(
        !scenarios.is_empty(),
        "`conformance list --server` listed no scenario: {}",
        describe(&listed)
    );
    scenarios
}

/// One scenario's run: the suite's checks (from `checks.json`) and its process.
struct Outcome {
    scenario: String,
    checks: Result<Vec<Value>, String>,
    finished: Finished,
}

impl Outcome {
    /// Passes: the process ended, it wrote its checks, there is at least one, and none is a
    /// `FAILURE` or `WARNING`.
    fn passed(&self) -> bool {
        !self.finished.timed_out()
            && self.checks.as_ref().is_ok_and(|checks| {
                !checks.is_empty()
                    && checks
                        .iter()
                        .all(|check| !matches!(status(check), "FAILURE" | "WARNING"))
            })
    }

    /// The checks that are not `INFO`, one a line, then the suite's output.
    fn report(&self) -> String {
        let mut report = format!("--- scenario {}", self.scenario);
        match &self.checks {
            Ok(checks) => {
                for check in checks.iter().filter(|check| status(check) != "INFO") {
                    let _ = write!(
                        report,
                        "\n  {} {}: {}",
                        status(check),
                        text(check, "id"),
                        text(check, "description")
                    );
                    if let Some(message) = check.get("errorMessage").and_then(Value::as_str) {
                        let _ = write!(report, "\n      {message}");
                    }
                }
            }
            Err(error) => {
                let _ = write!(report, "\n  no checks: {error}");
            }
        }
        let _ = write!(report, "\n{}", describe(&self.finished));
        report
    }
}

fn status(check: &Value) -> &str {
    text(check, "status")
}

fn text<'a>(check: &'a Value, key: &str) -> &'a str {
    check.get(key).and_then(Value::as_str).unwrap_or("?")
}

/// A finished process's status, time and output, ANSI colours removed.
fn describe(finished: &Finished) -> String {
    let status = match finished.status {
        Some(status) => status.to_string(),
        None => format!("killed after {SCENARIO_TIMEOUT:?}"),
    };
    format!(
        "({status}, {:.1} s)\n  stdout:\n{}\n  stderr:\n{}",
        finished.elapsed.as_secs_f64(),
        common::strip_ansi(&finished.stdout),
        common::strip_ansi(&finished.stderr)
    )
}

/// Runs one scenario against `url`; the suite writes its checks under `output`.
fn run_scenario(suite: &Path, url: &str, scenario: &str, output: &Path) -> Outcome {
    let mut command = node_command(suite);
    command
        .args([
            "server",
            "--url",
            url,
            "--scenario",
            scenario,
            "--output-dir",
        ])
        .arg(output);
    let finished = run_with_timeout(command, SCENARIO_TIMEOUT);
    let checks = read_checks(output);
    Outcome {
        scenario: scenario.to_owned(),
        checks,
        finished,
    }
}

/// The `checks.json` the suite wrote in a folder of its own under `output`
/// (`server-<scenario>-<time>/checks.json`).
fn read_checks(output: &Path) -> Result<Vec<Value>, String> {
    let entries = std::fs::read_dir(output).map_err(|error| format!("{error}"))?;
    let files: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path().join("checks.json"))
        .filter(|file| file.is_file())
        .collect();
    let [file] = files.as_slice() else {
        return Err(format!(
            "{} checks.json files under {}",
            files.len(),
            output.display()
        ));
    };
    let text = std::fs::read_to_string(file).map_err(|error| format!("{error}"))?;
    serde_json::from_str(&text).map_err(|error| format!("{}: {error}", file.display()))
}

/// Every scenario against `url`, [`PARALLEL`] at a time, in the suite's order.
fn run_all(suite: &Path, url: &str, scenarios: &[String], scratch: &Path) -> Vec<Outcome> {
    let queue = Mutex::new(scenarios.iter().enumerate());
    let outcomes = Mutex::new(Vec::new());
    thread::scope(|scope| {
        for _ in 0..PARALLEL {
            scope.spawn(|| {
                loop {
                    let next = queue
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .next();
                    let Some((index, scenario)) = next else {
                        break;
                    };
                    let output = scratch.join(scenario);
                    if let Err(error) = std::fs::create_dir_all(&output) {
                        panic!("cannot make {}: {error}", output.display());
                    }
                    let outcome = run_scenario(suite, url, scenario, &output);
                    outcomes
                        .lock()
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .push((index, outcome));
                }
            });
        }
    });
    let mut outcomes = outcomes
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    outcomes.sort_by_key(|(index, _)| *index);
    outcomes.into_iter().map(|(_, outcome)| outcome).collect()
}

#[test]
fn the_conformance_suite_passes_every_scenario_outside_the_baseline() {
    let suite = client_file(SUITE);
    let baseline = baseline();
    let scenarios = server_scenarios(&suite);
    let known: BTreeSet<&str> = scenarios.iter().map(String::as_str).collect();
    let unknown: Vec<&String> = baseline
        .keys()
        .filter(|scenario| !known.contains(scenario.as_str()))
        .collect();
    assert!(
        unknown.is_empty(),
        "conformance-baseline.txt names scenarios the suite does not have: {unknown:?} \
         (the suite's server scenarios: {scenarios:?})"
    );

    let scratch = ScratchDir::new("mcp-conformance");
    let mut server = ServerProcess::start(conformance_server());
    let outcomes = run_all(&suite, server.url(), &scenarios, scratch.path());
    let still_running = server.is_running();

    let passed = outcomes.iter().filter(|outcome| outcome.passed()).count();
    let mut problems = Vec::new();
    for outcome in &outcomes {
        match (outcome.passed(), baseline.get(&outcome.scenario)) {
            (false, None) => problems.push(format!(
                "{} does not pass and is not in the baseline:\n{}",
                outcome.scenario,
                outcome.report()
            )),
            (true, Some(reason)) => problems.push(format!(
                "{} passes but the baseline expects it not to (`{reason}`): remove its line \
                 from tests/mcp/conformance-baseline.txt",
                outcome.scenario
            )),
            _ => {}
        }
    }
    #[allow(
        clippy::print_stdout,
        reason = "the counts are the test's summary, shown with --nocapture"
    )]
    {
        println!(
            "{passed} of {} server scenarios pass; {} in the baseline",
            outcomes.len(),
            baseline.len()
        );
    }
    assert!(
        still_running,
        "the server exited during the suite{}",
        server.log()
    );
    assert!(
        problems.is_empty(),
        "{} of {} server scenarios pass; {} in the baseline\n\n{}\n{}",
        passed,
        outcomes.len(),
        baseline.len(),
        problems.join("\n\n"),
        server.log()
    );
}
