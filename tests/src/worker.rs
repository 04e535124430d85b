//! A worker process of a cross-process race (`src/bin/*_worker.rs`): started, `ready`, told
//! `go`, answering one JSON line.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdout, Command, Stdio};

use serde_json::Value;

/// One worker process, started and `ready`.
pub struct Worker {
    child: Child,
    stdout: BufReader<ChildStdout>,
}

impl Worker {
    /// Starts `program` with `arguments` and waits for its `ready` line.
    ///
    /// # Panics
    ///
    /// If it does not start or says something else first.
    pub fn start(program: &str, arguments: &[&str]) -> Self {
        let spawned = Command::new(program)
            .args(arguments)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(error) => panic!("{program} does not start: {error}"),
        };
        let Some(stdout) = child.stdout.take() else {
            panic!("the worker's output is piped");
        };
        let mut stdout = BufReader::new(stdout);
        let mut line = String::new();
        if let Err(error) = stdout.read_line(&mut line) {
            panic!("the worker does not write: {error}");
        }
        assert_eq!(line.trim(), "ready", "the worker did not get ready");
        Self { child, stdout }
    }

    /// Tells the worker to go.
    ///
    /// # Panics
    ///
    /// If it was told already, or its input is closed.
    pub fn go(&mut self) {
        let Some(mut stdin) = self.child.stdin.take() else {
            panic!("the worker was told to go already");
        };
        if let Err(error) = stdin.write_all(b"go\n") {
            panic!("the worker does not read: {error}");
        }
    }

    /// The worker's observation, once it has exited.
    ///
    /// # Panics
    ///
    /// If the worker fails, or its line is not JSON.
    pub fn observation(mut self) -> Value {
        let mut line = String::new();
        if let Err(error) = self.stdout.read_line(&mut line) {
            panic!("the worker does not write: {error}");
        }
        match self.child.wait() {
            Ok(status) => assert!(status.success(), "the worker failed: {status}"),
            Err(error) => panic!("the worker does not exit: {error}"),
        }
        serde_json::from_str(&line).unwrap_or_else(|error| panic!("{error}: {line:?}"))
    }
}
