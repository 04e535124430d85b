//! The `eval` program, run as a user runs it: on a trace file with a bad line (table on
//! stdout, the problem on stderr as file:line, the page written), on files with no event
//! (exit 2), comparing two traces, and asking for help.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

fn eval(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_eval"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the eval program runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("UTF-8 output")
}

/// A fresh directory for one test.
fn dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("examples-eval-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// One run of `calls` calls to get_order_status taking `ms` each, ended; line 3 is not JSON.
fn trace(calls: u32, ms: f64) -> String {
    let mut lines = vec![
        json!({"event":"run_started","run":"r1","session":"s1","at_ms":0,"input":"Where is A-1024?","resumed":false,"catalog":[{"name":"get_order_status","tokens":61}]}),
        json!({"event":"model_answered","run":"r1","session":"s1","at_ms":1,"round":1,"input_tokens":120,"output_tokens":9,"calls":calls,"elapsed_ms":0.4}),
    ]
    .into_iter()
    .map(|v| v.to_string())
    .collect::<Vec<_>>();
    lines.push("this line is not JSON".to_owned());
    for call in 0..calls {
        lines.push(json!({"event":"call","run":"r1","session":"s1","at_ms":1,"round":1,"call_id":format!("c{call}"),"tool":"get_order_status","arguments_digest":"5f","gate":"auto","attempts":1,"elapsed_ms":ms,"error_kind":null,"invalid_field":null,"replayed":false,"truncated":false,"redactions":0,"nested":false}).to_string());
    }
    lines.push(json!({"event":"run_ended","run":"r1","session":"s1","at_ms":2,"end":"answered","reason":null,"rounds":1,"calls":calls,"duplicates":0,"input_tokens":120,"output_tokens":9,"elapsed_ms":2.1}).to_string());
    lines.join("\n") + "\n"
}

#[test]
fn a_trace_file_gives_the_table_the_page_and_its_problems_by_line() {
    let dir = dir("one");
    std::fs::write(dir.join("run.jsonl"), trace(2, 0.5)).expect("the trace is written");
    let output = eval(&["run.jsonl", "--json", "figures.json"], &dir);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stdout.contains("== Policy compliance (calls by gate)"),
        "{stdout}"
    );
    assert!(
        stdout.lines().any(|l| l == "auto             2  100.0%"),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l == "get_order_status      2  0.500  0.500  0.500  0.500"),
        "{stdout}"
    );
    assert!(
        stderr.contains("warning: run.jsonl:3: not JSON"),
        "{stderr}"
    );
    // The page goes to eval-report.html in the current directory by default.
    let page = std::fs::read_to_string(dir.join("eval-report.html")).expect("the page is written");
    assert!(page.contains("<figure class=\"chart\" id=\"chart-latency\">"));
    let figures: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("figures.json")).expect("json"))
            .expect("the figures are JSON");
    assert_eq!(figures["gates"]["auto"], 2);
    assert_eq!(figures["problems"], 1);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn no_event_read_exits_with_2() {
    let dir = dir("empty");
    std::fs::write(dir.join("bad.jsonl"), "not json\n{\"event\":\"nope\"}\n").expect("written");
    let output = eval(&["bad.jsonl", "missing.jsonl", "--no-html"], &dir);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad.jsonl:1:"), "{stderr}");
    assert!(stderr.contains("bad.jsonl:2:"), "{stderr}");
    assert!(stderr.contains("missing.jsonl:0: cannot open"), "{stderr}");
    assert!(stderr.contains("no event could be read"), "{stderr}");
    assert!(!dir.join("eval-report.html").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn comparing_two_traces_marks_the_differences() {
    let dir = dir("compare");
    std::fs::write(dir.join("before.jsonl"), trace(2, 0.5)).expect("written");
    std::fs::write(dir.join("after.jsonl"), trace(3, 0.25)).expect("written");
    let output = eval(
        &[
            "--compare",
            "before.jsonl",
            "--against",
            "after.jsonl",
            "--html",
            "cmp.html",
        ],
        &dir,
    );
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("auto · calls") && l.ends_with("+1")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("get_order_status · p95") && l.ends_with("-0.25")),
        "{stdout}"
    );
    let page = std::fs::read_to_string(dir.join("cmp.html")).expect("the page is written");
    assert!(page.contains("changed up"));
    assert!(page.contains("changed down"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_and_a_wrong_command_line() {
    let dir = dir("help");
    let help = eval(&["--help"], &dir);
    assert_eq!(help.status.code(), Some(0));
    assert!(text(&help.stdout).contains("--compare"));
    let wrong = eval(&["--compare", "a.jsonl"], &dir);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(text(&wrong.stderr).contains("--against"));
    let none = eval(&[], &dir);
    assert_eq!(none.status.code(), Some(1));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_support_desks_own_trace_is_evaluated_without_a_problem() {
    let dir = dir("desk");
    let trace = dir.join("desk.jsonl");
    let desk = Command::new(env!("CARGO_BIN_EXE_support_desk"))
        .arg("--trace")
        .arg(&trace)
        .output()
        .expect("the support_desk program runs");
    assert!(desk.status.success(), "{desk:?}");
    let output = eval(
        &[
            "desk.jsonl",
            "--json",
            "figures.json",
            "--html",
            "desk.html",
        ],
        &dir,
    );
    assert!(output.status.success(), "{output:?}");
    let stderr = text(&output.stderr);
    assert!(
        !stderr.contains("warning:"),
        "no problem in the trace the runtime wrote: {stderr}"
    );
    let figures: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("figures.json")).expect("the figures"),
    )
    .expect("JSON figures");
    assert_eq!(figures["problems"], 0);
    assert_eq!(
        figures["runs"]["ends"],
        json!({"answered": 1, "clarify": 1, "stopped": 1})
    );
    // The built-in runs: every gate decision once at least, the refund refused by the
    // complaint's scope, the loop stopped by the no-progress guard, one request asked back.
    let gates = &figures["gates"];
    assert_eq!(gates["edited"], 2, "{gates}");
    assert_eq!(gates["approved"], 1, "{gates}");
    assert_eq!(gates["denied"], 1, "{gates}");
    assert_eq!(gates["pending"], 1, "{gates}");
    assert_eq!(
        figures["routing"]["out_of_scope"],
        json!([{"intent": "complaint", "tool": "issue_refund", "refusals": 1}])
    );
    assert_eq!(figures["routing"]["clarify"], 1);
    assert_eq!(figures["budget_stops"], json!({"no_progress": 1}));
    assert!(
        std::fs::read_to_string(dir.join("desk.html"))
            .expect("the page")
            .contains("<svg"),
        "the page has its charts"
    );
    let _ = std::fs::remove_dir_all(dir);
}
