//! A throwaway Redis server for one test: its own process, port and directory, gone when the
//! test ends.
//!
//! The tests that use it need `redis-server` on the `PATH` (`.ci/test.sh` installs it); without
//! it [`RedisServer::start`] panics with how to install it, so such tests never pass by
//! skipping.

use std::fs;
use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// How long a new server has to answer `PING`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(5);

/// How many ports are tried when another process takes the free port first.
const PORT_ATTEMPTS: usize = 3;

/// Tells the temporary directories of one process's servers apart.
static NEXT_DIR: AtomicU32 = AtomicU32::new(0);

/// A `redis-server` on a free loopback port, without persistence unless
/// [`start_with`](Self::start_with) asks for it, killed on drop.
#[derive(Debug)]
pub struct RedisServer {
    child: Option<Child>,
    port: u16,
    dir: PathBuf,
    /// Settings on top of the defaults, as `redis-server` arguments.
    settings: Vec<String>,
}

impl RedisServer {
    /// Starts a server on a free port of 127.0.0.1 in a new temporary directory, and waits
    /// (up to 5 s) until it answers `PING`.
    ///
    /// # Panics
    ///
    /// If `redis-server` is not on the `PATH` (the message says how to install it), or the
    /// server does not answer in time (the message holds its log).
    pub fn start() -> Self {
        Self::start_with(&[])
    }

    /// Starts a server like [`start`](Self::start), with `settings` (`redis-server`
    /// arguments, such as `["--appendonly", "yes"]`) after the defaults (no RDB snapshots,
    /// no AOF), so they override them.
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_with(settings: &[&str]) -> Self {
        let settings: Vec<String> = settings.iter().map(|&setting| setting.to_owned()).collect();
        let mut last_log = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port();
            let dir = std::env::temp_dir().join(format!(
                "redis-test-{}-{}-{port}",
                std::process::id(),
                NEXT_DIR.fetch_add(1, Ordering::Relaxed)
            ));
            if let Err(error) = fs::create_dir_all(&dir) {
                panic!("cannot create {}: {error}", dir.display());
            }
            let mut server = Self {
                child: Some(spawn(port, &dir, &settings)),
                port,
                dir,
                settings: settings.clone(),
            };
            match server.wait_until_ready() {
                Ok(()) => return server,
                // Another process took the port between our probe and the server's bind:
                // try another one.
                Err(log) => last_log = log,
            }
        }
        panic!(
            "redis-server did not answer PING within {STARTUP_TIMEOUT:?} ({PORT_ATTEMPTS} \
             attempts); its log:\n{last_log}"
        );
    }

    /// The server's URL, `redis://127.0.0.1:<port>/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// The server's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Kills the server (SIGKILL) and waits for it to exit: its port refuses connections from
    /// then on.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // An error means it has already exited.
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Kills the server (SIGKILL, so it writes nothing more) and starts it again on the same
    /// port, in the same directory, with the same settings: what it reloads is what its
    /// persistence kept.
    ///
    /// # Panics
    ///
    /// If the server does not answer `PING` within 5 s of its new start (the message holds
    /// its log).
    pub fn restart(&mut self) {
        self.kill();
        self.child = Some(spawn(self.port, &self.dir, &self.settings));
        if let Err(log) = self.wait_until_ready() {
            panic!(
                "redis-server did not answer PING within {STARTUP_TIMEOUT:?} of its restart on \
                 port {}; its log:\n{log}",
                self.port
            );
        }
    }

    /// Stops the server's process (SIGSTOP): connections stay open and nothing answers, as
    /// with a hung server. [`resume`](Self::resume) continues it.
    ///
    /// # Panics
    ///
    /// If the server was killed, or the signal cannot be sent.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// Continues a server [`pause`](Self::pause) stopped (SIGCONT).
    ///
    /// # Panics
    ///
    /// If the server was killed, or the signal cannot be sent.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let Some(child) = &self.child else {
            panic!("the redis-server on port {} was killed", self.port);
        };
        let status = Command::new("kill")
            .arg(signal)
            .arg(child.id().to_string())
            .status();
        match status {
            Ok(status) if status.success() => {}
            other => panic!("kill {signal} {} failed: {other:?}", child.id()),
        }
    }

    /// Waits until the server answers `PING`; on failure, kills it and returns its log.
    fn wait_until_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if ping(self.port) {
                return Ok(());
            }
            let exited = match self.child.as_mut().map(Child::try_wait) {
                Some(Ok(None)) => false,
                Some(Ok(Some(_)) | Err(_)) | None => true,
            };
            if exited || Instant::now() >= deadline {
                self.kill();
                return Err(read_log(&self.dir));
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        if let Some(child) = &self.child {
            // A paused server must run again to die of SIGKILL promptly on every platform.
            let _ = Command::new("kill")
                .arg("-CONT")
                .arg(child.id().to_string())
                .status();
        }
        self.kill();
        let _ = fs::remove_dir_all(&self.dir);
    }
}

/// A port of 127.0.0.1 that was free a moment ago.
fn free_port() -> u16 {
    let listener = match TcpListener::bind((Ipv4Addr::LOCALHOST, 0)) {
        Ok(listener) => listener,
        Err(error) => panic!("cannot bind a loopback port: {error}"),
    };
    match listener.local_addr() {
        Ok(address) => address.port(),
        Err(error) => panic!("cannot read the bound port: {error}"),
    }
}

fn spawn(port: u16, dir: &Path, settings: &[String]) -> Child {
    // Appended to: a restarted server's log follows the first one's.
    let log = match fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("redis.log"))
    {
        Ok(log) => log,
        Err(error) => panic!(
            "cannot create the server's log in {}: {error}",
            dir.display()
        ),
    };
    let log_err = match log.try_clone() {
        Ok(log) => log,
        Err(error) => panic!("cannot share the server's log: {error}"),
    };
    let spawned = Command::new("redis-server")
        .args(["--port", &port.to_string()])
        .args(["--bind", "127.0.0.1"])
        .args(["--save", ""])
        .args(["--appendonly", "no"])
        .arg("--dir")
        .arg(dir)
        .args(settings)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .spawn();
    match spawned {
        Ok(child) => child,
        Err(error) if error.kind() == ErrorKind::NotFound => panic!(
            "redis-server is not on the PATH; the Redis store's tests need it. Install it with \
             `apt-get install -y redis-server` (Debian, Ubuntu), `brew install redis` (macOS), \
             or run `bash .ci/test.sh`, which installs it"
        ),
        Err(error) => panic!("cannot start redis-server: {error}"),
    }
}

/// Whether a server on `port` answers `PING` with `+PONG`.
fn ping(port: u16) -> bool {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let Ok(mut stream) = TcpStream::connect_timeout(&address, Duration::from_millis(200)) else {
        return false;
    };
    let timeout = Some(Duration::from_millis(500));
    if stream.set_read_timeout(timeout).is_err() || stream.set_write_timeout(timeout).is_err() {
        return false;
    }
    if stream.write_all(b"PING\r\n").is_err() {
        return false;
    }
    let mut answer = [0u8; 7];
    stream.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n"
}

fn read_log(dir: &Path) -> String {
    fs::read_to_string(dir.join("redis.log")).unwrap_or_else(|error| format!("(no log: {error})"))
}

/// Sends one command over a plain connection (RESP) and answers its integer reply (a nil or a
/// bulk string holding a number too, as `GET` of a counter returns).
pub fn command(address: &str, arguments: &[&str]) -> std::io::Result<i64> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.set_write_timeout(Some(Duration::from_secs(2)))?;
    let mut request = format!("*{}\r\n", arguments.len());
    for argument in arguments {
        request.push_str(&format!("${}\r\n{argument}\r\n", argument.len()));
    }
    stream.write_all(request.as_bytes())?;
    let mut reader = std::io::BufReader::new(stream);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut reader, &mut line)?;
    let unexpected = |line: &str| std::io::Error::other(format!("unexpected reply {line:?}"));
    let line = line.trim_end();
    if let Some(number) = line.strip_prefix(':') {
        return number.parse().map_err(|_| unexpected(line));
    }
    if line == "$-1" {
        return Ok(0);
    }
    if line.starts_with('$') {
        let mut value = String::new();
        std::io::BufRead::read_line(&mut reader, &mut value)?;
        return value.trim_end().parse().map_err(|_| unexpected(&value));
    }
    Err(unexpected(line))
}
