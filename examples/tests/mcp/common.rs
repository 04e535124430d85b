//! What the MCP client tests share: where node 22 and the installed clients are, a server
//! process started from a test and read until it prints its address, and a client process run
//! with a time limit. A test file includes it with `#[path = "mcp/common.rs"] mod common;`.
//!
//! The clients (`tests/mcp-clients/package.json`) are installed by `bash .ci/test.sh`, which
//! exports `MCP_NODE` (the node 22 binary) and `MCP_CLIENTS` (their `node_modules`). Without
//! them the tests fail rather than pass unchecked.
#![allow(
    dead_code,
    reason = "each test binary that includes this module uses a part of it"
)]

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What a server started for a test prints, once it accepts connections, before its URL.
pub(crate) const LISTENING: &str = "listening on ";

/// How long a server may take to print its address line.
pub(crate) const START_TIMEOUT: Duration = Duration::from_secs(30);

/// A path from an environment variable that `.ci/test.sh` sets; a relative one is read from
/// the workspace root, where that script runs.
fn path_from_env(variable: &str, what: &str) -> PathBuf {
    let Some(value) = std::env::var_os(variable) else {
        panic!(
            "{variable} is not set: run `bash .ci/test.sh`, which installs {what} \
             (tests/mcp-clients) into target/mcp-clients and sets it, or set it yourself"
        );
    };
    let path = PathBuf::from(value);
    let path = if path.is_absolute() {
        path
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
    };
    if !path.exists() {
        panic!(
            "{variable}={} does not exist: run `bash .ci/test.sh` to install {what}",
            path.display()
        );
    }
    path
}

/// The node 22 binary the clients run on (`MCP_NODE`).
pub(crate) fn node() -> PathBuf {
    path_from_env("MCP_NODE", "node 22")
}

/// The `node_modules` folder with the MCP clients (`MCP_CLIENTS`).
pub(crate) fn clients() -> PathBuf {
    path_from_env("MCP_CLIENTS", "the MCP clients")
}

/// A file inside an installed client package, e.g.
/// `client_file("@modelcontextprotocol/conformance/dist/index.js")`.
pub(crate) fn client_file(relative: &str) -> PathBuf {
    let path = clients().join(relative);
    if !path.is_file() {
        panic!(
            "{} is missing: the MCP clients are not fully installed; run `bash .ci/test.sh`",
            path.display()
        );
    }
    path
}

/// A command that runs `script` (a file of an installed client) on node 22, with loopback
/// exempt from any proxy the environment names.
pub(crate) fn node_command(script: &Path) -> Command {
    let mut command = Command::new(node());
    command
        .arg(script)
        .env("NO_PROXY", "127.0.0.1,localhost,::1")
        .env("no_proxy", "127.0.0.1,localhost,::1")
        .stdin(Stdio::null());
    command
}

/// Collects what a reader yields, on a thread of its own, so a child never blocks on a full
/// pipe; the text so far can be read at any time.
#[derive(Clone, Default)]
pub(crate) struct Collected(Arc<Mutex<Vec<u8>>>);

impl Collected {
    /// Starts draining `reader` into a new buffer.
    fn drain(mut reader: impl Read + Send + 'static) -> (Self, thread::JoinHandle<()>) {
        let collected = Self::default();
        let sink = collected.clone();
        let handle = thread::spawn(move || {
            let mut chunk = [0_u8; 8192];
            loop {
                match reader.read(&mut chunk) {
                    Ok(0) | Err(_) => break,
                    Ok(read) => sink.push(&chunk[..read]),
                }
            }
        });
        (collected, handle)
    }

    fn push(&self, bytes: &[u8]) {
        // A poisoned buffer only means a reader thread panicked; its bytes are still good.
        let mut buffer = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        buffer.extend_from_slice(bytes);
    }

    /// The text collected so far (lossy UTF-8).
    pub(crate) fn text(&self) -> String {
        let buffer = self
            .0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        String::from_utf8_lossy(&buffer).into_owned()
    }
}

/// A server process started for a test: killed and reaped when dropped, on a panic too.
pub(crate) struct ServerProcess {
    child: Child,
    url: String,
    name: String,
    stdout: Collected,
    stderr: Collected,
}

impl ServerProcess {
    /// Starts `command` and waits (up to [`START_TIMEOUT`]) for the line
    /// `listening on <url>` on its stdout; panics with what it printed if the line does not
    /// come. Later stdout and all stderr are collected for [`ServerProcess::log`].
    pub(crate) fn start(mut command: Command) -> Self {
        let name = command.get_program().to_string_lossy().into_owned();
        let args: Vec<&OsStr> = command.get_args().collect();
        let name = format!("{name} {}", args.join(OsStr::new(" ")).to_string_lossy());
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(error) => panic!("cannot start `{name}`: {error}"),
        };
        let stderr = child
            .stderr
            .take()
            .map(|pipe| Collected::drain(pipe).0)
            .unwrap_or_default();
        let Some(pipe) = child.stdout.take() else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`{name}` has no stdout pipe");
        };
        let stdout = Collected::default();
        let (address_tx, address_rx) = mpsc::channel();
        Self::read_stdout(pipe, stdout.clone(), address_tx);
        let mut server = Self {
            child,
            url: String::new(),
            name,
            stdout,
            stderr,
        };
        match address_rx.recv_timeout(START_TIMEOUT) {
            Ok(url) => server.url = url,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!(
                "`{}` printed no `{LISTENING}<url>` line within {START_TIMEOUT:?}{}",
                server.name,
                server.log()
            ),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                // Its stdout closed before the line: it has exited, or is about to.
                let status = server.wait_briefly();
                panic!(
                    "`{}` closed its stdout without printing a `{LISTENING}<url>` line \
                     ({status}){}",
                    server.name,
                    server.log()
                );
            }
        }
        server
    }

    /// The exit status, waiting up to 5 s for it.
    fn wait_briefly(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return status.to_string(),
                Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(20)),
                Ok(None) => return "still running".to_owned(),
                Err(error) => return error.to_string(),
            }
        }
    }

    /// Reads stdout line by line on a thread: the first `listening on` line is sent to
    /// `address`; every line is kept.
    fn read_stdout(pipe: ChildStdout, stdout: Collected, address: mpsc::Sender<String>) {
        thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            let mut sent = false;
            let mut line = String::new();
            loop {
                line.clear();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
                stdout.push(line.as_bytes());
                if !sent && let Some(url) = line.trim_end().strip_prefix(LISTENING) {
                    sent = address.send(url.to_owned()).is_ok();
                }
            }
        });
    }

    /// The URL from the address line, e.g. `http://127.0.0.1:41234/mcp`.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Whether the process is still running.
    pub(crate) fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// What the server printed so far, for a failure message.
    pub(crate) fn log(&self) -> String {
        format!(
            "\n--- {} stdout:\n{}\n--- stderr:\n{}",
            self.name,
            self.stdout.text(),
            self.stderr.text()
        )
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a process run by [`run_with_timeout`] ended.
pub(crate) struct Finished {
    /// Its exit status; `None` when it was killed at the time limit.
    pub(crate) status: Option<ExitStatus>,
    /// Its stdout.
    pub(crate) stdout: String,
    /// Its stderr.
    pub(crate) stderr: String,
    /// How long it ran.
    pub(crate) elapsed: Duration,
}

impl Finished {
    /// Whether it was killed at the time limit.
    pub(crate) fn timed_out(&self) -> bool {
        self.status.is_none()
    }
}

/// Runs `command` to its end, killing it after `limit`; stdout and stderr are collected.
pub(crate) fn run_with_timeout(mut command: Command, limit: Duration) -> Finished {
    let program = command.get_program().to_string_lossy().into_owned();
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let started = Instant::now();
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => panic!("cannot start `{program}`: {error}"),
    };
    let mut readers = Vec::new();
    let stdout = child.stdout.take().map(|pipe| {
        let (collected, handle) = Collected::drain(pipe);
        readers.push(handle);
        collected
    });
    let stderr = child.stderr.take().map(|pipe| {
        let (collected, handle) = Collected::drain(pipe);
        readers.push(handle);
        collected
    });
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() >= limit => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => thread::sleep(Duration::from_millis(20)),
            Err(error) => panic!("waiting for `{program}`: {error}"),
        }
    };
    // The pipes close when the process ends, unless something it started still holds them:
    // then the text is what came before, and the readers are left to end on their own.
    let drained = Instant::now() + Duration::from_secs(2);
    while readers.iter().any(|reader| !reader.is_finished()) && Instant::now() < drained {
        thread::sleep(Duration::from_millis(10));
    }
    Finished {
        status,
        stdout: stdout.map(|text| text.text()).unwrap_or_default(),
        stderr: stderr.map(|text| text.text()).unwrap_or_default(),
        elapsed: started.elapsed(),
    }
}

/// `text` without ANSI colour sequences (the conformance suite colours its output even into
/// a pipe).
pub(crate) fn strip_ansi(text: &str) -> String {
    let mut plain = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            // ESC [ parameters final-byte: skip up to the final byte (a letter).
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        plain.push(c);
    }
    plain
}

/// A scratch directory for one test, removed (with its contents) when dropped.
pub(crate) struct ScratchDir(PathBuf);

impl ScratchDir {
    /// Makes a new empty directory named after `name` and this process.
    pub(crate) fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("examples-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        if let Err(error) = std::fs::create_dir_all(&path) {
            panic!("cannot make {}: {error}", path.display());
        }
        Self(path)
    }

    /// Its path.
    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The Python with the MCP SDK; a relative path is read from the workspace root.
pub(crate) fn vendor_python() -> PathBuf {
    let Some(python) = std::env::var_os("VENDOR_PYTHON") else {
        panic!(
            "VENDOR_PYTHON is not set: run `bash .ci/test.sh`, which installs the MCP Python SDK \
             into target/vendor-venv and sets it, or set it to that environment's python"
        );
    };
    let python = PathBuf::from(python);
    if python.is_absolute() {
        python
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(python)
    }
}
