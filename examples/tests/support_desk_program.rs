//! The `support_desk` program, run as the README's main command runs it: the text output, the
//! `--json` output and a closed stdout.

use std::process::{Command, Output, Stdio};

use examples::support::SupportDeps;
use serde_json::Value;
use tool_runtime::{Runtime, Session, ToolCall};

const TRANSCRIPT: &str = include_str!("../transcripts/support_desk.json");

fn support_desk(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_support_desk"))
        .args(args)
        .output()
        .expect("the support_desk program runs")
}

fn text_output() -> String {
    let output = support_desk(&[]);
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).expect("stdout is UTF-8")
}

fn transcript() -> Value {
    serde_json::from_str(TRANSCRIPT).expect("the built-in transcript is JSON")
}

/// The observations' lines of the text output: `   ok    <call> <tool> (<facts>)` and
/// `   error <call> <tool> (<facts>) <kind>`.
fn observation_lines(text: &str) -> Vec<&str> {
    text.lines()
        .filter(|line| line.starts_with("   ok    ") || line.starts_with("   error "))
        .collect()
}

#[test]
fn prints_every_error_whole() {
    let text = text_output();
    let runtime = Runtime::builder(SupportDeps::demo())
        .build()
        .expect("the runtime builds");
    let tokio = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let mut errors = 0;
    for turn in transcript()["turns"].as_array().expect("turns") {
        let calls: Vec<ToolCall> =
            serde_json::from_value(turn["calls"].clone()).expect("the turn's calls");
        if turn["calls"].to_string().contains("$artifact_of:") {
            continue;
        }
        let report = tokio.block_on(runtime.execute(&Session::new("errors"), &calls));
        for observation in report.observations() {
            let Some(error) = observation.error() else {
                continue;
            };
            errors += 1;
            assert!(
                text.contains(&format!("message: {}\n", error.message())),
                "the message of {} is printed whole:\n{text}",
                observation.call_id()
            );
            if let Some(hint) = error.hint() {
                assert!(
                    text.contains(&format!("hint:    {hint}\n")),
                    "the hint of {} is printed whole: {hint}\n{text}",
                    observation.call_id()
                );
            }
        }
    }
    assert!(errors >= 5, "the transcript has its errors");
    let hint = text
        .lines()
        .find(|line| line.contains("hint:    available tools:"))
        .expect("the unknown tool's hint");
    for name in runtime.registry().names() {
        assert!(hint.contains(name), "the hint names `{name}`: {hint}");
    }
    assert!(!hint.ends_with("..."), "{hint}");
}

#[test]
fn prints_each_calls_elapsed_time_below_a_millisecond() {
    let text = text_output();
    let lines = observation_lines(&text);
    let calls = TRANSCRIPT.matches("\"id\":").count();
    assert_eq!(lines.len(), calls, "one line per call:\n{text}");
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
fn json_turns_carry_their_note_and_the_calls_as_sent() {
    let output = support_desk(&["--json"]);
    assert!(output.status.success(), "{output:?}");
    let printed: Value = serde_json::from_slice(&output.stdout).expect("stdout is JSON");
    let transcript = transcript();
    assert_eq!(printed["session"], transcript["session"]);
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
    }
    let read = &turns[5]["calls"][0];
    assert_eq!(read["name"], "read_artifact");
    assert!(
        read["arguments"]
            .as_str()
            .is_some_and(|arguments| arguments.contains("\"art-")),
        "the artifact id the model copied: {read}"
    );
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
