//! Log lines, for the tests that read what the runtime or a store logs.

use std::io;
use std::sync::{Arc, Mutex};

use tracing::subscriber::DefaultGuard;

/// The text a subscriber writes, kept in memory. Clones share it.
#[derive(Clone, Default)]
pub struct Log(Arc<Mutex<Vec<u8>>>);

impl io::Write for Log {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Ok(mut log) = self.0.lock() {
            log.extend_from_slice(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Log {
    /// Makes a subscriber writing to a new log, from `level` up and without colours, this
    /// thread's default until the guard is dropped (a `#[tokio::test]` runtime and its tasks
    /// run on the test's thread).
    pub fn capture(level: tracing::Level) -> (Self, DefaultGuard) {
        let log = Self::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer({
                let log = log.clone();
                move || log.clone()
            })
            .with_ansi(false)
            .with_max_level(level)
            .finish();
        let guard = tracing::subscriber::set_default(subscriber);
        (log, guard)
    }

    /// Everything written so far.
    pub fn text(&self) -> String {
        self.0
            .lock()
            .map(|log| String::from_utf8_lossy(&log).into_owned())
            .unwrap_or_default()
    }

    /// The lines at `level` (`WARN`, `INFO`, ...).
    pub fn lines_at(&self, level: &str) -> Vec<String> {
        self.text()
            .lines()
            .filter(|line| line.split_whitespace().nth(1) == Some(level))
            .map(str::to_owned)
            .collect()
    }
}
