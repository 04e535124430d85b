//! The `support_desk` program, run as the README's main command runs it: each request routed
//! and run by the scripted model, the text output with each gate event and each run's end, the
//! `--json` output, budgets from the transcript, the audit trail it verifies, a closed stdout,
//! and `--model openai` against a Chat Completions endpoint on a loopback port.

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

/// The runs of the `--json` output.
fn runs(printed: &Value) -> &Vec<Value> {
    printed["runs"].as_array().expect("a list of runs")
}

/// Every report of the `--json` output: each round's, and each resume's.
fn reports(printed: &Value) -> Vec<&Value> {
    let mut reports = Vec::new();
    for run in runs(printed) {
        for turn in run["turns"].as_array().expect("turns") {
            reports.push(&turn["report"]);
        }
        if !run["resumed"].is_null() {
            reports.push(&run["resumed"]["report"]);
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

    // The session's principal; each run's route, and the scope of its intent as the model is
    // shown it.
    assert!(
        text.contains("   principal: ada (agent, supervisor)\n"),
        "{text}"
    );
    let shown = from_line(
        &text,
        "   route:     complaint (rule, confidence 0.90): the model is shown ",
    )[0];
    assert!(shown.contains("cancel_order"), "{shown}");
    assert!(!shown.contains("issue_refund"), "{shown}");
    let shown = from_line(
        &text,
        "   route:     order_status (rule, confidence 0.85, order_id A-1016): the model is shown ",
    )[0];
    assert!(shown.contains("get_order_status"), "{shown}");
    assert!(!shown.contains("create_ticket"), "{shown}");
    assert!(
        text.contains("   budget:    10 rounds, 50 tool calls, 300 s, 2 duplicate calls, 3 rounds without progress\n"),
        "the complaint's budget, from the transcript: {text}"
    );

    // Each run's end: the answer, or the budget's stop.
    let answered = from_line(&text, "   answer:    I opened ticket T-1");
    assert!(
        answered[1].starts_with("   run ended: answered after 9 rounds; "),
        "{}",
        answered[1]
    );
    let stopped = from_line(
        &text,
        "   run ended: stopped by the budget (no_progress) after 3 rounds; ",
    )[0];
    assert!(stopped.contains("(2 repeated)"), "{stopped}");
    let asked = from_line(
        &text,
        "   route:     order_status (rule, confidence 0.85, entity_unverified), to be clarified: the model is shown no tools",
    );
    assert_eq!(
        asked[3],
        "   asks:      Which order is it? Its id looks like A-1024."
    );
    assert!(
        asked[4].starts_with("   run ended: asks the user to clarify after 0 rounds; "),
        "{}",
        asked[4]
    );

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
    let catalog = runs(&printed)[0]["catalog"]
        .as_array()
        .expect("the catalog");
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
    let printed = json_output();
    let calls: usize = reports(&printed)
        .iter()
        .map(|report| report["observations"].as_array().map_or(0, Vec::len))
        .sum();
    assert!(calls >= 20, "{calls}");
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
    assert_eq!(printed["model"], "scripted");
    let expected_runs = transcript["runs"].as_array().expect("runs");
    assert_eq!(runs(&printed).len(), expected_runs.len());
    let mut artifacts: std::collections::HashMap<String, String> = std::collections::HashMap::new();
    for (run, expected_run) in runs(&printed).iter().zip(expected_runs) {
        assert_eq!(run["id"], expected_run["id"]);
        assert_eq!(run["request"], expected_run["request"]);
        let turns = run["turns"].as_array().expect("a list of rounds");
        let expected = expected_run["turns"].as_array().expect("turns");
        assert!(turns.len() <= expected.len());
        for (number, (turn, expected)) in turns.iter().zip(expected).enumerate() {
            assert_eq!(turn["round"], number + 1);
            assert_eq!(turn["note"], expected["note"]);
            let calls = turn["calls"].as_array().expect("the round's calls");
            let observations = turn["report"]["observations"]
                .as_array()
                .expect("the round's report");
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
        }
        // The resume once the run ended: the decisions and the report of the resumed calls.
        let decisions: serde_json::Map<String, Value> = expected
            .iter()
            .filter_map(|turn| turn["resume"].as_object())
            .flatten()
            .map(|(call, answer)| (call.clone(), answer.clone()))
            .collect();
        if decisions.is_empty() {
            assert!(run["resumed"].is_null(), "{run}");
            continue;
        }
        let resumed = &run["resumed"];
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
            let pending = observation_of(run, call);
            assert_eq!(
                pending["outcome"]["error"]["details"]["request_id"],
                decided["request_id"]
            );
        }
    }

    // The complaint: routed by rule, answered with the script's text. It names two orders, so
    // no order id is taken as its entity.
    let complaint = &runs(&printed)[0];
    assert_eq!(complaint["route"]["intent"], "complaint");
    assert_eq!(complaint["route"]["source"], "rule");
    assert!(
        complaint["route"]["entities"].is_null(),
        "{}",
        complaint["route"]
    );
    assert_eq!(runs(&printed)[1]["route"]["entities"]["order_id"], "A-1016");
    assert_eq!(complaint["end"], "answered");
    assert_eq!(complaint["answer"], transcript["runs"][0]["answer"]);
    assert_eq!(complaint["spent"]["rounds"], 9);
    assert_eq!(complaint["budget"]["max_no_progress_rounds"], 3);
    let read = &complaint["turns"][5]["calls"][0];
    assert_eq!(read["name"], "read_artifact");
    assert!(
        read["arguments"]
            .as_str()
            .is_some_and(|arguments| arguments.contains("\"art-")),
        "the artifact id the model copied: {read}"
    );
    // The loop: stopped by the no-progress guard before its fourth round.
    let looping = &runs(&printed)[1];
    assert_eq!(looping["route"]["intent"], "order_status");
    assert_eq!(looping["end"], "stopped");
    assert_eq!(looping["reason"], "no_progress");
    assert!(looping["answer"].is_null());
    assert_eq!(looping["turns"].as_array().map(Vec::len), Some(3));
    assert_eq!(looping["spent"]["duplicates"], 2);
    assert!(
        !looping["catalog"]
            .as_array()
            .expect("a catalog")
            .contains(&"create_ticket".into())
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

/// The observation of `call` in the run's rounds.
fn observation_of<'a>(run: &'a Value, call: &str) -> &'a Value {
    run["turns"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|turn| turn["report"]["observations"].as_array())
        .flatten()
        .find(|observation| observation["call_id"] == call)
        .unwrap_or_else(|| panic!("an observation of {call} in {run}"))
}

#[test]
fn a_resume_of_a_call_that_waits_for_nothing_fails_naming_it() {
    let path = temporary("bad-transcript");
    let mut transcript = transcript();
    transcript["runs"][0]["turns"][0]["resume"] = serde_json::json!({ "call_01": "approve" });
    std::fs::write(&path, transcript.to_string()).expect("write the transcript");
    let output = support_desk(&["--transcript", path.to_str().expect("a UTF-8 path")]);
    assert!(!output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .contains("run `run-complaint` turn 1 resumes `call_01`, which waits for no decision"),
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

#[test]
fn a_transcripts_budget_stops_its_run_at_the_call_past_the_limit() {
    let path = temporary("budget");
    let mut transcript = transcript();
    transcript["runs"][0]["budget"] = serde_json::json!({ "max_tool_calls": 4 });
    std::fs::write(&path, transcript.to_string()).expect("write the transcript");
    let output = support_desk(&[
        "--json",
        "--transcript",
        path.to_str().expect("a UTF-8 path"),
    ]);
    let _ = std::fs::remove_file(path);
    assert!(output.status.success(), "{output:?}");
    let printed: Value = serde_json::from_slice(&output.stdout).expect("stdout is JSON");
    let run = &runs(&printed)[0];
    assert_eq!(run["end"], "stopped", "{run}");
    assert_eq!(run["reason"], "max_tool_calls");
    assert_eq!(run["budget"]["max_tool_calls"], 4);
    assert_eq!(run["spent"]["calls"], 4);
    // Round 2's fifth call is the one past the limit: refused, its reason in its details.
    let refused: Vec<&Value> = run["turns"][1]["report"]["observations"]
        .as_array()
        .expect("round 2's observations")
        .iter()
        .filter(|observation| observation["outcome"]["error"]["kind"] == "budget_exceeded")
        .collect();
    assert!(!refused.is_empty(), "{run}");
    assert_eq!(
        refused[0]["outcome"]["error"]["details"]["reason"],
        "max_tool_calls"
    );
    assert_eq!(run["turns"].as_array().map(Vec::len), Some(2));
    // The other run has its own budget, and answers as before.
    assert_eq!(runs(&printed)[1]["reason"], "no_progress");
}

#[test]
fn a_model_flag_other_than_scripted_or_openai_is_refused() {
    let output = support_desk(&["--model", "gpt"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--model is scripted or openai, not `gpt`"),
        "{stderr}"
    );
}

#[test]
fn the_openai_model_without_a_model_name_says_what_to_set() {
    let output = Command::new(env!("CARGO_BIN_EXE_support_desk"))
        .args(["--model", "openai"])
        .env_remove("OPENAI_MODEL")
        .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
        .output()
        .expect("the support_desk program runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--model openai: "), "{stderr}");
    assert!(stderr.contains("OPENAI_MODEL"), "{stderr}");
}

/// A Chat Completions endpoint on a loopback port: it answers a request without tool results
/// with one call of `get_order_status` for A-1016, and a request with them with a text. It
/// keeps each request's body.
struct ChatEndpoint {
    base_url: String,
    bodies: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
}

impl ChatEndpoint {
    fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let base_url = format!("http://{}/v1", listener.local_addr().expect("the port"));
        let bodies = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let kept = std::sync::Arc::clone(&bodies);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let kept = std::sync::Arc::clone(&kept);
                std::thread::spawn(move || serve_chat(stream, &kept));
            }
        });
        Self { base_url, bodies }
    }
}

/// Answers the requests of one connection until the client closes it.
fn serve_chat(stream: std::net::TcpStream, bodies: &std::sync::Mutex<Vec<Value>>) {
    use std::io::{BufRead, BufReader, Read, Write};
    let mut reader = BufReader::new(stream.try_clone().expect("a second handle"));
    let mut writer = stream;
    loop {
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let observed = request["messages"]
            .as_array()
            .is_some_and(|messages| messages.iter().any(|message| message["role"] == "tool"));
        bodies.lock().expect("not poisoned").push(request);
        let message = if observed {
            serde_json::json!({"role": "assistant", "content": "A-1016 was delivered."})
        } else {
            serde_json::json!({"role": "assistant", "content": null, "tool_calls": [{
                "id": "call_m1", "type": "function",
                "function": {"name": "get_order_status", "arguments": "{\"order_id\":\"A-1016\"}"}
            }]})
        };
        let answer = serde_json::json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "desk-test",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": if observed { "stop" } else { "tool_calls" }}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 9, "total_tokens": 129}
        })
        .to_string();
        let response = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
            answer.len()
        );
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

#[test]
fn the_openai_model_runs_the_requests_against_the_endpoint_in_the_environment() {
    let endpoint = ChatEndpoint::start();
    let path = temporary("openai");
    let transcript = serde_json::json!({
        "session": "desk-openai",
        "principal": {"id": "ada", "roles": ["agent"]},
        "runs": [{"id": "run-1", "request": "Where is my order A-1016?", "turns": []}]
    });
    std::fs::write(&path, transcript.to_string()).expect("write the transcript");
    let output = Command::new(env!("CARGO_BIN_EXE_support_desk"))
        .args(["--model", "openai", "--transcript"])
        .arg(&path)
        .env("OPENAI_BASE_URL", &endpoint.base_url)
        .env("OPENAI_API_KEY", "sk-test")
        .env("OPENAI_MODEL", "desk-test")
        .output()
        .expect("the support_desk program runs");
    let _ = std::fs::remove_file(path);
    let text = text_of(&output);
    assert!(
        text.contains(&format!(
            "   model:     desk-test at {}/chat/completions\n",
            endpoint.base_url
        )),
        "{text}"
    );
    assert!(
        text.contains("   ok    call_m1 get_order_status ("),
        "{text}"
    );
    assert!(
        text.contains("   answer:    A-1016 was delivered.\n"),
        "{text}"
    );
    assert!(
        text.contains("   run ended: answered after 2 rounds; 1 tool call at the gate, 240 tokens in, 18 out, "),
        "the endpoint's usage is the run's: {text}"
    );
    // What the endpoint was sent: the route's tools only, and the call's answer.
    let bodies = endpoint.bodies.lock().expect("not poisoned").clone();
    assert_eq!(bodies.len(), 2, "{bodies:?}");
    let tools: Vec<&str> = bodies[0]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["function"]["name"].as_str())
        .collect();
    assert!(tools.contains(&"get_order_status"), "{tools:?}");
    assert!(
        !tools.contains(&"create_ticket"),
        "an order_status request: {tools:?}"
    );
    assert_eq!(bodies[0]["model"], "desk-test");
    let answered = bodies[1]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .find(|message| message["role"] == "tool")
        .expect("the call's answer");
    assert_eq!(answered["tool_call_id"], "call_m1");
    assert!(
        answered["content"]
            .as_str()
            .is_some_and(|content| content.contains("delivered")),
        "{answered}"
    );
}

#[test]
fn trace_writes_each_runs_steps_as_json_lines() {
    let path = temporary("trace");
    let output = support_desk(&["--json", "--trace", path.to_str().expect("a UTF-8 path")]);
    assert!(output.status.success(), "{output:?}");
    let printed: Value = serde_json::from_slice(&output.stdout).expect("stdout is JSON");
    let text = std::fs::read_to_string(&path).expect("the trace file");
    let _ = std::fs::remove_file(&path);
    let events: Vec<Value> = text
        .lines()
        .map(|line| serde_json::from_str(line).expect("each line is JSON"))
        .collect();
    let of = |name: &str| -> Vec<&Value> {
        events
            .iter()
            .filter(|event| event["event"] == name)
            .collect()
    };
    let started: Vec<&str> = of("run_started")
        .iter()
        .filter_map(|event| event["run"].as_str())
        .collect();
    assert_eq!(
        started,
        ["run-complaint", "run-where-is", "run-which-order"]
    );
    let ended: Vec<&str> = of("run_ended")
        .iter()
        .filter_map(|event| event["end"].as_str())
        .collect();
    assert_eq!(ended, ["answered", "stopped", "clarify"]);
    assert_eq!(of("budget_stopped")[0]["reason"], "no_progress");
    // One `call` event per observation of the runs' rounds (the resume after a run is not
    // one of its rounds).
    let observations: usize = runs(&printed)
        .iter()
        .flat_map(|run| run["turns"].as_array().into_iter().flatten())
        .map(|turn| {
            turn["report"]["observations"]
                .as_array()
                .map_or(0, Vec::len)
        })
        .sum();
    assert_eq!(of("call").len(), observations);
    let gates: Vec<&str> = of("call")
        .iter()
        .filter_map(|event| event["gate"].as_str())
        .collect();
    for gate in ["auto", "edited", "approved", "denied", "pending"] {
        assert!(gates.contains(&gate), "{gate} in {gates:?}");
    }
}
