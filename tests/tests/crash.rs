//! A run killed between its write and the next round, continued by a new process (a real
//! `redis-server`, `crash_run` processes whose idempotency, run and decision stores are all
//! `RedisStore`s on it): the write ran once, the run ends with the scripted answer, the
//! continued run says it resumed, its write's answer is the kept result (what an uninterrupted
//! run in another session gets), and the route was decided once.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::{Value, json};
use tests::redis_server::{RedisServer, command};
use tool_runtime::idempotency::RedisStore;
use tool_runtime::run::{RunEvent, RunKey, RunStore};

const RUN: &str = "r-crash";

fn crash_run(server: &RedisServer, prefix: &str, session: &str, mode: &str) -> Command {
    let mut process = Command::new(env!("CARGO_BIN_EXE_crash_run"));
    process.args([server.url().as_str(), prefix, session, RUN, mode]);
    process
}

/// Starts a `hold` process, waits until it says `wrote`, and kills it (SIGKILL) right there.
fn run_until_the_write_and_kill(server: &RedisServer, prefix: &str, session: &str) {
    let spawned = crash_run(server, prefix, session, "hold")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(error) => panic!("crash_run does not start: {error}"),
    };
    let Some(stderr) = child.stderr.take() else {
        panic!("the process's standard error is piped");
    };
    let mut said = Vec::new();
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap_or_else(|error| panic!("crash_run's standard error: {error}"));
        if line == "wrote" {
            break;
        }
        said.push(line);
    }
    // `kill` is SIGKILL on unix: the process writes nothing more.
    if let Err(error) = child.kill() {
        panic!("crash_run ended before `wrote` ({error}); it said: {said:?}");
    }
    let status = child.wait().expect("the process is reaped");
    assert!(!status.success(), "killed: {status}; it said: {said:?}");
}

/// Runs a `finish` process to its end and answers its report line.
fn run_to_the_end(server: &RedisServer, prefix: &str, session: &str) -> Value {
    let output = crash_run(server, prefix, session, "finish")
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("crash_run runs");
    assert!(
        output.status.success(),
        "crash_run failed: {}",
        output.status
    );
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim()).unwrap_or_else(|error| panic!("{error}: {text:?}"))
}

/// A counter of the processes (0 when none counted).
fn counter(server: &RedisServer, prefix: &str, name: &str) -> i64 {
    let address = format!("127.0.0.1:{}", server.port());
    command(&address, &["GET", &format!("{prefix}:{name}")]).expect("GET answers")
}

#[tokio::test]
async fn a_run_killed_after_its_write_continues_in_a_new_process_without_writing_again() {
    let server = RedisServer::start();
    run_until_the_write_and_kill(&server, "crash", "s-crash");
    assert_eq!(counter(&server, "crash", "executions"), 1);

    // The record holds the model's answer of round 1, not what its call got.
    let store = RedisStore::connect(&server.url())
        .await
        .expect("connects")
        .with_prefix("crash");
    let events = store
        .load(&RunKey::new("s-crash", RUN))
        .await
        .expect("loads");
    assert!(
        matches!(
            &events[..],
            [
                RunEvent::Started { .. },
                RunEvent::Routed { .. },
                RunEvent::Answered { round: 1, .. }
            ]
        ),
        "{events:#?}"
    );

    let continued = run_to_the_end(&server, "crash", "s-crash");
    assert_eq!(
        counter(&server, "crash", "executions"),
        1,
        "the write did not run again: {continued:#}"
    );
    assert_eq!(
        continued["end"],
        json!({"end": "answered"}),
        "{continued:#}"
    );
    assert_eq!(continued["answer"], "A-1 is refunded.", "{continued:#}");
    assert_eq!(continued["rounds"], 2, "{continued:#}");
    assert_eq!(continued["resumed"], true, "{continued:#}");
    assert_eq!(continued["route"], "refund", "{continued:#}");
    // Round 1's call ran again in the new process, under the key it had, and was answered
    // from the idempotency store.
    assert_eq!(continued["write"]["ran_here"], true, "{continued:#}");
    assert_eq!(continued["write"]["replayed"], true, "{continued:#}");
    assert_eq!(
        counter(&server, "crash", "routed"),
        1,
        "the route was not decided again: {continued:#}"
    );

    // The same run, uninterrupted, in another session (and counters of its own).
    let reference = run_to_the_end(&server, "crash-ref", "s-ref");
    assert_eq!(reference["resumed"], false, "{reference:#}");
    assert_eq!(reference["write"]["replayed"], false, "{reference:#}");
    assert_eq!(counter(&server, "crash-ref", "executions"), 1);
    assert_eq!(
        continued["write"]["content"], reference["write"]["content"],
        "the replayed result is the write's own"
    );
    let content: Value = continued["write"]["content"]
        .as_str()
        .and_then(|text| serde_json::from_str(text).ok())
        .unwrap_or_else(|| panic!("the write's answer is JSON text: {continued:#}"));
    assert_eq!(
        content,
        json!({"refund": "RF-A-1", "order_id": "A-1", "execution": 1})
    );

    // Started once more, the run is answered from its record: nothing runs or routes.
    let again = run_to_the_end(&server, "crash", "s-crash");
    assert_eq!(again["answer"], "A-1 is refunded.", "{again:#}");
    assert_eq!(again["write"]["ran_here"], false, "{again:#}");
    assert_eq!(counter(&server, "crash", "executions"), 1);
    assert_eq!(counter(&server, "crash", "routed"), 1);
}
