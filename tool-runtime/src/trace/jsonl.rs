//! [`JsonlTrace`]: a trace written as JSON lines by a thread of its own.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::mpsc;
use std::thread;

use tokio::sync::oneshot;
use tool_core::BoxFuture;

use super::{TraceEvent, TraceSink};

/// Writes each event as one JSON line to a file, on a thread of its own: recording an event
/// is a channel send, so a slow or stuck disk never holds up a run.
///
/// A line that cannot be written is logged (`tracing`, at error level) and reported by the
/// next [`flush`](TraceSink::flush) (through [`Agent::flush_trace`](crate::run::Agent::flush_trace)),
/// which answers `Ok` only when every line recorded since the previous flush was written.
/// Call it before the process exits: lines still queued when the last handle is dropped are
/// written by the thread, which a process that exits first does not wait for. Lines are handed
/// to the operating system as they come (a batch at a time, so a reader sees them without a
/// flush); a flush does not sync the file to disk. A batch that fails to write is dropped, not
/// tried again: its lines are the ones the flush reports.
///
/// ```no_run
/// use tool_runtime::trace::JsonlTrace;
///
/// let trace = JsonlTrace::append("runs.jsonl")?;
/// # let _ = trace;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug)]
pub struct JsonlTrace {
    sender: mpsc::Sender<Job>,
}

/// What the writer thread is asked.
enum Job {
    Write(Box<TraceEvent>),
    Flush(oneshot::Sender<io::Result<()>>),
}

impl JsonlTrace {
    /// A trace written to `path`, created or emptied.
    ///
    /// # Errors
    ///
    /// The file cannot be created (its directory does not exist, permissions), or the writer
    /// thread cannot be started. Nothing is reported later for these: they fail here.
    pub fn create(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::start(File::create(path)?)
    }

    /// A trace appended to `path`, created when missing.
    ///
    /// # Errors
    ///
    /// As for [`create`](Self::create).
    pub fn append(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::start(OpenOptions::new().create(true).append(true).open(path)?)
    }

    fn start(file: File) -> io::Result<Self> {
        let (sender, receiver) = mpsc::channel();
        thread::Builder::new()
            .name("jsonl-trace".to_owned())
            .spawn(move || Writer::new(file).run(&receiver))?;
        Ok(Self { sender })
    }
}

impl TraceSink for JsonlTrace {
    fn record(&self, event: &TraceEvent) {
        // Serialized on the writer thread: the run's task only clones and sends.
        if self
            .sender
            .send(Job::Write(Box::new(event.clone())))
            .is_err()
        {
            tracing::error!(
                event = event.name(),
                "the trace writer has stopped; the event is lost"
            );
        }
    }

    fn flush(&self) -> BoxFuture<'_, io::Result<()>> {
        let (answer, answered) = oneshot::channel();
        let sent = self.sender.send(Job::Flush(answer));
        Box::pin(async move {
            let stopped = || io::Error::new(io::ErrorKind::BrokenPipe, "the trace writer stopped");
            sent.map_err(|_| stopped())?;
            answered.await.map_err(|_| stopped())?
        })
    }
}

/// The writer thread's state: the file, the lines of the batch being gathered, and what it
/// could not write since the last flush.
struct Writer {
    file: File,
    /// The lines received together, written with one call: a batch that fails is dropped
    /// whole rather than kept to fail again.
    batch: Vec<u8>,
    batch_lines: u64,
    lost: u64,
    first_error: Option<io::Error>,
}

impl Writer {
    fn new(file: File) -> Self {
        Self {
            file,
            batch: Vec::new(),
            batch_lines: 0,
            lost: 0,
            first_error: None,
        }
    }

    fn run(mut self, receiver: &mpsc::Receiver<Job>) {
        while let Ok(job) = receiver.recv() {
            self.handle(job);
            // Lines that came together are written together, once none waits: a reader
            // sees them without a flush.
            while let Ok(job) = receiver.try_recv() {
                self.handle(job);
            }
            self.write_batch();
        }
    }

    fn handle(&mut self, job: Job) {
        match job {
            Job::Write(event) => match serde_json::to_writer(&mut self.batch, &event) {
                Ok(()) => {
                    self.batch.push(b'\n');
                    self.batch_lines += 1;
                }
                Err(error) => self.failed(error.into(), 1),
            },
            Job::Flush(answer) => {
                self.write_batch();
                let result = match self.first_error.take() {
                    None => Ok(()),
                    Some(error) => Err(io::Error::new(
                        error.kind(),
                        format!(
                            "{} trace line(s) could not be written since the last flush: {error}",
                            self.lost
                        ),
                    )),
                };
                self.lost = 0;
                // The flush's caller may have gone: nothing to tell.
                let _ = answer.send(result);
            }
        }
    }

    fn write_batch(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        if let Err(error) = self.file.write_all(&self.batch) {
            self.failed(error, self.batch_lines);
        }
        self.batch.clear();
        self.batch_lines = 0;
    }

    /// Notes a failed write of `lines` lines: logged now, reported by the next flush.
    fn failed(&mut self, error: io::Error, lines: u64) {
        tracing::error!(%error, lines, "trace lines could not be written");
        self.lost += lines;
        if self.first_error.is_none() {
            self.first_error = Some(error);
        }
    }
}
