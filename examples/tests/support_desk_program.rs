//! The `support_desk` program, run as the README's main command runs it: the text output with
//! each gate event, the `--json` output, the audit trail it verifies, and a closed stdout.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

use serde_json::Value;
use tool_runtime::audit::verify_audit;

const TRANSCRIPT: &str = include_str!("../transcripts/support_desk.json");

fn support_desk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_support_desk"))
        .args(args)
        .output()
        .expect("the support_desk program runs")
}

fn text_of(output: &Output) -> String {
    assert!(output.status.success(), "{output:?}");
    assert!(
        output.stderr.is_empty(),
        "nothing on stderr: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).expect("stdout is UTF-8")
}

fn text_output() -> String {
    text_of(&support_desk(&[]))
}

fn json_output() -> Value {
    let output = support_desk(&["--json"]);
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).expect("stdout is JSON")
}

fn transcript() -> Value {
    serde_json::from_str(TRANSCRIPT).expect("the built-in transcript is JSON")
}

/// A path in the temporary directory no other test uses.
fn temporary(name: &str) -> PathBuf {
    let path = std::env::temp_dir().join(format!(
        "examples-support-desk-{name}-{}.jsonl",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&path);
    path
}

/// The observations' lines of the text output: `   ok    <call> <tool> (<facts>)` and
/// `   error <call> <tool> (<facts>) <kind>`.
fn observation_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|line| line.starts_with("   ok    ") || line.starts_with("   error "))
        .collect()
}

/// The line that starts with `prefix`, and the lines after it.
fn from_line<'a>(text: &'a str, prefix: &str) -> Vec<&'a str> {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|line| line.starts_with(prefix))
        .unwrap_or_else(|| panic!("a line starting with {prefix:?}:\n{text}"));
    lines[start..].to_vec()
}

/// Every report of the `--json` output: each turn's, and each resume's.
fn reports(printed: &Value) -> Vec<&Value> {
    let mut reports = Vec::new();
    for turn in printed["turns"].as_array().expect("turns") {
        reports.push(&turn["report"]);
        if !turn["resumed"].is_null() {
            reports.push(&turn["resumed"]["report"]);
        }
    }
    reports
}

#[test]
fn shows_each_gate_and_verifies_the_audit() {
    let audit = temporary("gates");
    let text = text_of(&support_desk(&[
        "--audit",
        audit.to_str().expect("a UTF-8 path"),
    ]));

    // The session: its principal, and the scope of its intent as the model is shown it.
    assert!(
        text.contains("   principal: ada (agent, supervisor)\n"),
        "{text}"
    );
    let shown = from_line(&text, "   intent:    complaint: the model is shown ")[0];
    assert!(shown.contains("cancel_order"), "{shown}");
    assert!(!shown.contains("issue_refund"), "{shown}");

    // Out of scope: the refund is not one of a complaint's tools.
    let refund = from_line(&text, "   error call_20 issue_refund (");
    assert!(refund[0].ends_with(") out_of_scope"), "{}", refund[0]);
    assert_eq!(
        refund[2],
        "         message: the tool `issue_refund` is not available for this request"
    );

    // An ask with its preview, approved with edited arguments: the ticket runs as edited.
    let ticket = from_line(&text, "   ask   call_06 create_ticket: ");
    assert_eq!(
        ticket[0],
        "   ask   call_06 create_ticket: urgent tickets page the on-call team"
    );
    assert_eq!(
        ticket[1],
        "         preview: open a ticket, priority urgent: A-1008 is late"
    );
    assert_eq!(
        ticket[3],
        r#"         answer:  approve with edits: priority "urgent" -> "normal""#
    );
    assert!(
        ticket[4].starts_with("   ok    call_06 create_ticket ("),
        "{}",
        ticket[4]
    );
    assert!(
        ticket[5].contains(r#""priority":"normal""#),
        "{}",
        ticket[5]
    );
    assert!(
        text.contains("\n   T-1 (normal, A-1008): A-1008 is late\n"),
        "{text}"
    );

    // An approval as asked: the export runs (and is cut).
    let export = from_line(&text, "   ask   call_16 export_order_history: ");
    assert_eq!(export[3], "         answer:  approve");
    assert!(export[4].contains("truncated"), "{}", export[4]);

    // A denial: the model is told the person's reason.
    let cancel = from_line(&text, "   ask   call_21 cancel_order: ");
    assert!(
        cancel[1].starts_with("         preview: cancel order A-1040"),
        "{}",
        cancel[1]
    );
    let answer = cancel
        .iter()
        .position(|line| line.starts_with("         answer:  "))
        .expect("the answer");
    assert_eq!(
        cancel[answer],
        "         answer:  deny: A-1040 has shipped: offer a return instead"
    );
    assert!(
        cancel[answer + 1].starts_with("   error call_21 cancel_order (")
            && cancel[answer + 1].ends_with(") denied"),
        "{}",
        cancel[answer + 1]
    );
    assert!(
        cancel[answer + 3].contains("A-1040 has shipped: offer a return instead"),
        "{}",
        cancel[answer + 3]
    );

    // Pending, then resumed with a signed decision: the same request, run once.
    let pending = from_line(&text, "   error call_19 escalate_to_human (");
    assert!(pending[0].ends_with(") approval_pending"), "{}", pending[0]);
    let details = pending
        .iter()
        .find_map(|line| line.strip_prefix("         details: "))
        .expect("the pending call's details");
    let details: Value = serde_json::from_str(details).expect("details are JSON");
    let request = details["request_id"].as_str().expect("a request id");
    let decided = from_line(&text, "   decide call_19 escalate_to_human (request ");
    assert_eq!(
        decided[0],
        format!("   decide call_19 escalate_to_human (request {request}): approve")
    );
    let ran = decided
        .iter()
        .find(|line| line.starts_with("   ok    call_19 escalate_to_human ("))
        .expect("the resumed call ran");
    assert!(
        text.find(ran).expect("found") > text.find(pending[0]).expect("found"),
        "the call runs after it was pending"
    );

    // The audit trail: verified, every kind of decision recorded.
    let summary = verify_audit(&audit).expect("the audit file verifies");
    assert!(
        text.ends_with(&format!(
            "\naudit: ok, {lines} lines in {file}, last hash {hash}\n   (check it again: cargo run -p examples --bin verify_audit -- {file})\n",
            lines = summary.lines,
            file = audit.display(),
            hash = summary.last_hash
        )),
        "{text}"
    );
    let content = std::fs::read_to_string(&audit).expect("the audit file");
    let decisions: Vec<(String, String)> = content
        .lines()
        .map(|line| {
            let line: Value = serde_json::from_str(line).expect("a JSON line");
            (
                line["call_id"].as_str().unwrap_or_default().to_owned(),
                line["decision"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    for (call, decision) in [
        ("call_06", "ask"),
        ("call_06", "edit"),
        ("call_06", "outcome"),
        ("call_16", "approve"),
        ("call_19", "pending"),
        ("call_19", "resume"),
        ("call_19", "outcome"),
        ("call_20", "out_of_scope"),
        ("call_21", "deny"),
    ] {
        assert!(
            decisions.contains(&(call.to_owned(), decision.to_owned())),
            "the audit records {decision} for {call}: {decisions:?}"
        );
    }
    // Reads the policy lets run write nothing.
    assert!(
        !decisions.iter().any(|(call, _)| call == "call_01"),
        "{decisions:?}"
    );
    let _ = std::fs::remove_file(audit);
}

#[test]
fn without_audit_the_trail_is_a_temporary_file_verified_and_removed() {
    let text = text_output();
    let last = text.lines().last().expect("a last line");
    let lines: usize = last
        .strip_prefix("audit: ok, ")
        .and_then(|rest| rest.split_once(" lines"))
        .and_then(|(count, _)| count.parse().ok())
        .unwrap_or_else(|| panic!("`audit: ok, N lines` ends the output: {last}"));
    assert!(lines >= 9, "{last}");
    assert!(text.contains("   audit:     a temporary file\n"), "{text}");
}

#[test]
fn prints_every_error_whole() {
    let text = text_output();
    let printed = json_output();
    let mut errors = 0;
    for report in reports(&printed) {
        for observation in report["observations"].as_array().expect("observations") {
            let outcome = &observation["outcome"];
            if outcome["status"] != "error" {
                continue;
            }
            errors += 1;
            let error = &outcome["error"];
            let message = error["message"].as_str().expect("a message");
            assert!(
                text.contains(&format!("message: {message}\n")),
                "the message of {} is printed whole: {message}\n{text}",
                observation["call_id"]
            );
            if let Some(hint) = error["hint"].as_str() {
                assert!(
                    text.contains(&format!("hint:    {hint}\n")),
                    "the hint of {} is printed whole: {hint}\n{text}",
                    observation["call_id"]
                );
            }
        }
    }
    assert!(errors >= 8, "the transcript has its errors");
    let hint = text
        .lines()
        .find(|line| line.contains("hint:    available tools:"))
        .expect("the unknown tool's hint");
    let catalog = printed["catalog"].as_array().expect("the catalog");
    for name in catalog {
        let name = name.as_str().expect("a name");
        assert!(hint.contains(name), "the hint names `{name}`: {hint}");
    }
    assert!(
        !hint.contains("issue_refund"),
        "the hint names only tools the model is shown: {hint}"
    );
    assert!(!hint.ends_with("..."), "{hint}");
}

#[test]
fn prints_each_calls_elapsed_time_below_a_millisecond() {
    let text = text_output();
    let lines = observation_lines(&text);
    let transcript = transcript();
    let turns = transcript["turns"].as_array().expect("turns");
    let calls: usize = turns
        .iter()
        .map(|turn| {
            turn["calls"].as_array().map_or(0, Vec::len)
                + turn["resume"].as_object().map_or(0, serde_json::Map::len)
        })
        .sum();
    assert_eq!(
        lines.len(),
        calls,
        "one line per call and per resumed call:\n{text}"
    );
    for line in lines {
        let facts = &line[line.find('(').expect("facts") + 1..];
        let elapsed = &facts[..facts.find(" ms").expect("an elapsed time in ms")];
        let millis: f64 = elapsed.parse().expect("a number of milliseconds");
        let decimals = elapsed.split_once('.').map_or(0, |(_, part)| part.len());
        if millis < 1.0 {
            assert!(
                decimals >= 2,
                "a call under a millisecond shows its fraction (`0.04 ms`): {line}"
            );
        }
        if line.contains(" timeout") {
            assert!(millis >= 2000.0, "the timeout's own time: {line}");
        }
    }
}

#[test]
fn json_turns_carry_their_note_the_calls_as_sent_and_the_gates() {
    let printed = json_output();
    let transcript = transcript();
    assert_eq!(printed["session"], transcript["session"]);
    assert_eq!(printed["principal"], transcript["principal"]);
    assert_eq!(printed["intent"], transcript["intent"]);
    let turns = printed["turns"].as_array().expect("a list of turns");
    let expected = transcript["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), expected.len());
    let mut artifacts: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for (turn, expected) in turns.iter().zip(expected) {
        assert_eq!(turn["note"], expected["note"]);
        let calls = turn["calls"].as_array().expect("the turn's calls");
        let observations = turn["report"]["observations"]
            .as_array()
            .expect("the turn's report");
        assert_eq!(calls.len(), observations.len());
        for ((call, expected), observation) in calls
            .iter()
            .zip(expected["calls"].as_array().expect("calls"))
            .zip(observations)
        {
            assert_eq!(call["id"], expected["id"]);
            assert_eq!(call["name"], expected["name"]);
            assert_eq!(observation["call_id"], call["id"]);
            let mut sent = expected["arguments"].as_str().expect("text").to_owned();
            for (id, artifact) in &artifacts {
                sent = sent.replace(&format!("$artifact_of:{id}"), artifact);
            }
            assert_eq!(call["arguments"], sent.as_str(), "arguments as sent");
            if let Some(artifact) = observation["artifact"].as_str() {
                artifacts.insert(
                    call["id"].as_str().expect("id").to_owned(),
                    artifact.to_owned(),
                );
            }
        }
        // What the approver was shown: one request per scripted answer, with the answer.
        let answers = expected["approvals"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let asked = turn["asked"].as_array().cloned().unwrap_or_default();
        assert_eq!(asked.len(), answers.len(), "{turn}");
        for asked in &asked {
            let call = asked["request"]["call_id"].as_str().expect("a call id");
            assert_eq!(asked["answer"], answers[call], "{asked}");
            assert!(asked["request"]["preview"]["title"].is_string(), "{asked}");
            assert!(asked["request"]["reason"].is_string(), "{asked}");
        }
        // A resume: the decisions and the report of the resumed calls.
        match expected["resume"].as_object() {
            None => assert!(turn["resumed"].is_null(), "{turn}"),
            Some(decisions) => {
                let resumed = &turn["resumed"];
                let decided = resumed["decisions"].as_array().expect("decisions");
                assert_eq!(decided.len(), decisions.len());
                let observations = resumed["report"]["observations"]
                    .as_array()
                    .expect("the resume's report");
                for (decided, observation) in decided.iter().zip(observations) {
                    let call = decided["call_id"].as_str().expect("a call id");
                    assert_eq!(decided["decision"], decisions[call]);
                    assert_eq!(observation["call_id"], call);
                    assert_eq!(observation["outcome"]["status"], "success", "{observation}");
                    let pending = observations_of(turn, call);
                    assert_eq!(
                        pending["outcome"]["error"]["details"]["request_id"],
                        decided["request_id"]
                    );
                }
            }
        }
    }
    let read = &turns[5]["calls"][0];
    assert_eq!(read["name"], "read_artifact");
    assert!(
        read["arguments"]
            .as_str()
            .is_some_and(|arguments| arguments.contains("\"art-")),
        "the artifact id the model copied: {read}"
    );
    let kinds: Vec<&str> = reports(&printed)
        .into_iter()
        .flat_map(|report| report["observations"].as_array().expect("observations"))
        .filter_map(|observation| observation["outcome"]["error"]["kind"].as_str())
        .collect();
    for kind in ["out_of_scope", "denied", "approval_pending"] {
        assert!(kinds.contains(&kind), "{kind} in {kinds:?}");
    }
    assert!(
        printed["audit"]["lines"]
            .as_u64()
            .is_some_and(|lines| lines > 0)
    );
    assert_eq!(
        printed["audit"]["last_hash"].as_str().map(str::len),
        Some(64)
    );
    assert_eq!(printed["tickets"][0]["priority"], "normal");
}

/// The observation of `call` in the turn's own report.
fn observations_of<'a>(turn: &'a Value, call: &str) -> &'a Value {
    turn["report"]["observations"]
        .as_array()
        .and_then(|observations| {
            observations
                .iter()
                .find(|observation| observation["call_id"] == call)
        })
        .unwrap_or_else(|| panic!("an observation of {call} in {turn}"))
}

#[test]
fn a_resume_of_a_call_that_waits_for_nothing_fails_naming_it() {
    let path = temporary("bad-transcript");
    let mut transcript = transcript();
    transcript["turns"][0]["resume"] = serde_json::json!({ "call_01": "approve" });
    std::fs::write(&path, transcript.to_string()).expect("write the transcript");
    let output = support_desk(&["--transcript", path.to_str().expect("a UTF-8 path")]);
    assert!(!output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("turn 1 resumes `call_01`, which waits for no decision"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(path);
}

/// Runs the program with a stdout whose reading end is already closed, as `| head` leaves it.
fn with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_support_desk"))
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .output()
        .expect("the support_desk program runs")
}

#[test]
fn stops_quietly_when_stdout_is_closed() {
    for args in [&[][..], &["--json"][..]] {
        let output = with_closed_stdout(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "support_desk {args:?} exits with success on a closed pipe: {output:?}"
        );
        assert!(stderr.is_empty(), "and says nothing: {stderr}");
    }
}

#[test]
fn a_ticket_opened_again_is_answered_from_the_idempotency_layer() {
    let text = text_output();
    let repeat = text
        .lines()
        .find(|line| line.contains("ok    call_22 create_ticket"))
        .unwrap_or_else(|| panic!("the repeated ticket is answered: {text}"));
    assert!(repeat.contains("replayed"), "{repeat}");
    assert!(
        text.contains("tickets created during the session: 1\n"),
        "{text}"
    );
}
