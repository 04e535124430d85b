//! [`JsonlAudit`]: the trail in a file of hash-chained JSON lines, made durable by a writer
//! thread of its own, a batch of lines per sync.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use super::chain::{Chain, LineProblem, NextLine, check_line, now_rfc3339};
use super::sink::{AuditRecord, AuditSink};
use super::ticket::{AuditCompleter, AuditTicket};

/// An audit trail in a file of JSON lines, each linked to the one before by its hash.
///
/// # The line format
///
/// The file has one line of compact JSON (UTF-8, no whitespace, ending in `\n`) per
/// record, with its fields always in this order:
///
/// ```text
/// {"seq":1,"time":"2026-12-01T14:05:10.123Z","session":"s-1","principal":null,
///  "call_id":"call_1","tool":"refund_order","version":null,"arguments_digest":"…",
///  "arguments":{…},"decision":"approve","reason":null,"approval_id":"apr-1",
///  "outcome":null,"prev":"000…000","hash":"…"}
/// ```
///
/// (one line in the file; broken here for reading). `seq` is the line's 1-based line number in
/// the file; `time` is the UTC time the line was submitted, RFC 3339 with milliseconds; the record's
/// fields follow as [`AuditRecord`] names them, `null` when absent, except `arguments`, which
/// is left out unless the sink asked for arguments and the record carries them; `decision` is
/// the snake_case [`AuditDecision`]; `prev` is the `hash` of the line before (64 zeros on the
/// first line).
///
/// `hash` is the lowercase hex SHA-256 of the line's *content*: the exact bytes of the line
/// without its trailing `,"hash":"…"` field, that is the JSON text from `{"seq"` through the
/// `prev` field and the closing `}`. The line is the content with `,"hash":"<hex>"` inserted
/// before that closing brace. The verifier hashes the bytes as found, so the definition does
/// not depend on how a JSON library would re-serialize the line.
///
/// Because every line names the hash of the line before, an edited line no longer matches its
/// hash, and a removed or moved line breaks the `seq` numbering and the `prev` links:
/// [`verify_audit`] finds the first such line. The chain has no key: whoever can write the
/// file can rewrite it whole with fresh hashes. Keep the last hash ([`AuditSummary::last_hash`])
/// somewhere else from time to time to detect that, and the removal of lines at the end.
///
/// # Writing
///
/// [`AuditSink::submit`] chains a line at once (a mutex orders lines: the chain's order is the
/// order of submission, and each line's `time` is taken then) and queues it; a writer thread of
/// the sink's own takes every line queued since its last sync, writes them with one write and
/// calls `sync_data` once, then resolves all their tickets (a group commit). The task planning a
/// turn never waits on the disk: a turn of 64 audited writes costs a few syncs, one per batch of
/// lines that were queued together, not 64 in a row, and each call still starts only once its
/// own line is on disk. A ticket that resolves `Ok` also means every line submitted before it
/// is on disk.
///
/// A failed write or sync is rolled back (the file is cut back to its length before the
/// batch) and fails the batch's tickets and those of every line queued after it (they were
/// chained on lines that are not on disk); the chain goes on from the last line on disk. If
/// even the rollback fails, every later line fails too until the file is reopened.
/// [`AuditSink::record`] is `submit` and a wait for the ticket, on the calling thread.
///
/// Lines whose tickets nobody waits for (outcomes, refusals) may still be queued when a turn
/// returns: [`AuditSink::flush`] (or [`Runtime::flush_audit`](crate::Runtime::flush_audit))
/// waits for them, before the file is read by [`verify_audit`] or copied elsewhere. A flush
/// answers `Err`, saying how many, when lines submitted since the last flush were lost (a
/// failed batch, or the writer stopped), even those nobody waited for: the file then verifies
/// (the chain went on from the last line on disk) but is missing them. Once the writer thread
/// has stopped (it panicked) or the file could not be rolled back, every `submit` and `flush`
/// answers `Err` at once.
///
/// # Dropping
///
/// Dropping the sink writes what is still queued, then joins its writer thread: when lines
/// are queued, the drop waits for one write and one `sync_data`, on whatever thread drops it,
/// an async worker included. The runtime drops its sink with its last clone; to keep that
/// sync off a worker, `runtime.flush_audit().await` before dropping the last `Runtime` clone
/// (nothing is queued then, and the drop only wakes and joins an idle thread), or drop it on
/// the blocking pool. The drop waits so that every queued line is in the file once it returns:
/// a `JsonlAudit` opened on the same file afterwards continues the chain from it.
///
/// One `JsonlAudit` should write a file at a time: a batch fails if the file's length is not
/// what this sink last wrote, so a second writer (or a truncation) is noticed rather than
/// forking the chain.
///
/// [`AuditDecision`]: super::sink::AuditDecision
/// [`verify_audit`]: super::verify::verify_audit
/// [`AuditSummary::last_hash`]: super::verify::AuditSummary::last_hash
pub struct JsonlAudit {
    with_arguments: bool,
    writer: Arc<Writer>,
    /// The writer thread, joined on drop.
    thread: Option<JoinHandle<()>>,
}

/// What a `JsonlAudit` and its writer thread share.
struct Writer {
    queue: Mutex<Queue>,
    /// Wakes the writer thread: lines were queued, or the sink is closing.
    work: Condvar,
}

struct Queue {
    /// Where the chain stands after every line submitted.
    chain: Chain,
    /// Where it stands after the last line on disk: where it goes on from after a failure.
    durable: Chain,
    /// Submitted, not yet taken by the writer thread, oldest first.
    lines: Vec<Queued>,
    /// Why nothing more can be written (a failed write could not be rolled back, or the
    /// writer thread stopped).
    broken: Option<&'static str>,
    /// The sink is being dropped: the writer writes what is queued, then stops.
    closing: bool,
    /// Lines refused by `submit` since the last flush was submitted: that flush's to report.
    refused: Lost,
    /// Lines that failed on the writer thread since the last flush in the queue was answered.
    lost: Lost,
}

/// A line waiting for the writer, or a flush waiting for the lines before it.
struct Queued {
    entry: Entry,
    completer: AuditCompleter,
}

enum Entry {
    Line(NextLine),
    /// With the lines refused before it was submitted (they never reached the queue).
    Flush(Lost),
}

/// Lines that will never be written, for the next flush to report (a sticky failure: the
/// tickets of most lines are dropped, so a flush is the only one who hears of them).
#[derive(Default)]
struct Lost {
    lines: usize,
    /// The last failure's message.
    cause: Option<String>,
}

impl Lost {
    fn add(&mut self, cause: &impl std::fmt::Display) {
        self.lines += 1;
        self.cause = Some(cause.to_string());
    }

    fn merge(&mut self, other: Lost) {
        self.lines += other.lines;
        if other.cause.is_some() {
            self.cause = other.cause;
        }
    }

    /// What a flush answers: `Ok` when no line was lost.
    fn answer(self) -> io::Result<()> {
        match self.lines {
            0 => Ok(()),
            lines => Err(io::Error::other(format!(
                "{lines} audit line{} submitted since the last flush could not be written \
                 and {} missing from the trail (last cause: {}); see the error log for the \
                 calls they recorded",
                if lines == 1 { "" } else { "s" },
                if lines == 1 { "is" } else { "are" },
                self.cause.as_deref().unwrap_or("unknown"),
            ))),
        }
    }
}

const BROKEN: &str = "an earlier write to the audit file failed and could not be rolled back; \
                      reopen the file";

impl JsonlAudit {
    /// Opens the audit file at `path` for appending, creating it if it does not exist, and
    /// continues its chain: the next line's `seq` and `prev` follow the file's last line.
    /// Starts the sink's writer thread.
    ///
    /// # Errors
    ///
    /// The file cannot be opened or read, or its last line is incomplete (no final newline,
    /// as a write interrupted by a crash leaves it), malformed or does not match its hash:
    /// the chain cannot be continued from it. [`verify_audit`] tells what is wrong. Or the
    /// writer thread cannot be started.
    ///
    /// [`verify_audit`]: super::verify::verify_audit
    pub fn open(path: impl AsRef<Path>) -> io::Result<Self> {
        Self::open_with(path.as_ref(), |file| file)
    }

    /// Opens the file at `path` as [`JsonlAudit::open`] does, writing it through `storage`.
    pub(crate) fn open_with<S: Storage>(
        path: &Path,
        storage: impl FnOnce(File) -> S,
    ) -> io::Result<Self> {
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)?;
        let len = file.metadata()?.len();
        let chain = match read_last_line(&mut file, len)? {
            None => Chain::genesis(),
            Some(last) => {
                let Some(last) = last.strip_suffix(b"\n") else {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "the last line of the audit file {} is incomplete (no newline at \
                             its end): the chain cannot be continued",
                            path.display()
                        ),
                    ));
                };
                let checked = check_line(last).map_err(|problem| {
                    let reason = match problem {
                        LineProblem::Malformed(reason) => reason,
                        LineProblem::Edited => "it does not match its hash".to_owned(),
                    };
                    io::Error::new(
                        io::ErrorKind::InvalidData,
                        format!(
                            "the last line of the audit file {} cannot be continued: {reason}",
                            path.display()
                        ),
                    )
                })?;
                Chain {
                    next_seq: checked.seq.saturating_add(1),
                    prev: checked.hash,
                }
            }
        };
        let writer = Arc::new(Writer {
            queue: Mutex::new(Queue {
                durable: chain.clone(),
                chain,
                lines: Vec::new(),
                broken: None,
                closing: false,
                refused: Lost::default(),
                lost: Lost::default(),
            }),
            work: Condvar::new(),
        });
        let storage: Box<dyn Storage> = Box::new(storage(file));
        let thread = std::thread::Builder::new()
            .name("audit-writer".to_owned())
            .spawn({
                let writer = Arc::clone(&writer);
                move || writer.run(storage, len)
            })?;
        Ok(JsonlAudit {
            with_arguments: false,
            writer,
            thread: Some(thread),
        })
    }

    /// Whether records carry the (redacted) arguments ([`AuditSink::wants_arguments`]);
    /// default `false`: lines have the arguments' digest only.
    #[must_use]
    pub fn with_arguments(mut self, with_arguments: bool) -> Self {
        self.with_arguments = with_arguments;
        self
    }

    /// Queues `entry` for the writer thread; its ticket. Every entry is queued here, so none
    /// is left where a stopped writer never takes it: the writer's exit marks the queue
    /// broken under the same lock, and a broken queue answers at once.
    fn enqueue(&self, queue: &mut Queue, entry: Entry) -> AuditTicket {
        if let Some(broken) = queue.broken {
            return AuditTicket::ready(Err(io::Error::other(broken)));
        }
        let (ticket, completer) = AuditTicket::pending();
        queue.lines.push(Queued { entry, completer });
        // The writer sleeps only on an empty queue; a busy one looks again after its batch.
        if queue.lines.len() == 1 {
            self.writer.work.notify_one();
        }
        ticket
    }
}

impl Drop for JsonlAudit {
    fn drop(&mut self) {
        self.writer.lock().closing = true;
        self.writer.work.notify_one();
        if let Some(thread) = self.thread.take()
            && thread.join().is_err()
        {
            tracing::error!("the audit writer thread panicked");
        }
    }
}

impl Writer {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The writer thread: a batch at a time, until the sink closes and nothing is queued.
    fn run(&self, mut storage: Box<dyn Storage>, mut len: u64) {
        // However the thread ends, nothing queued is left waiting.
        let _stopped = FailQueuedOnExit(self);
        loop {
            let batch = {
                let mut queue = self.lock();
                while queue.lines.is_empty() && !queue.closing {
                    queue = self
                        .work
                        .wait(queue)
                        .unwrap_or_else(PoisonError::into_inner);
                }
                if queue.lines.is_empty() {
                    return;
                }
                std::mem::take(&mut queue.lines)
            };
            let mut bytes = Vec::new();
            for queued in &batch {
                if let Entry::Line(line) = &queued.entry {
                    bytes.extend_from_slice(line.text.as_bytes());
                }
            }
            let written = if bytes.is_empty() {
                Ok(())
            } else {
                write_batch(storage.as_mut(), &mut len, &bytes)
            };
            let mut queue = self.lock();
            let mut entries = batch;
            let failed = match written {
                Ok(()) => {
                    for queued in &entries {
                        if let Entry::Line(line) = &queued.entry {
                            queue.durable.advance(line.hash.clone());
                        }
                    }
                    None
                }
                Err((error, rolled_back)) => {
                    // The lines queued since were chained on the lines that failed.
                    entries.append(&mut queue.lines);
                    queue.chain = queue.durable.clone();
                    if !rolled_back {
                        queue.broken = Some(BROKEN);
                    }
                    let lines = entries
                        .iter()
                        .filter(|queued| matches!(queued.entry, Entry::Line(_)))
                        .count();
                    tracing::error!(%error, lines, "audit lines could not be written");
                    Some(error)
                }
            };
            // In queue order: a flush answers for the lines lost before it.
            let answers: Vec<_> = entries
                .into_iter()
                .map(|Queued { entry, completer }| {
                    let answer = match (entry, &failed) {
                        (Entry::Line(_), None) => Ok(()),
                        (Entry::Line(_), Some(error)) => {
                            queue.lost.add(error);
                            Err(io::Error::new(error.kind(), error.to_string()))
                        }
                        (Entry::Flush(refused), _) => {
                            let mut lost = std::mem::take(&mut queue.lost);
                            lost.merge(refused);
                            lost.answer()
                        }
                    };
                    (completer, answer)
                })
                .collect();
            drop(queue);
            for (completer, answer) in answers {
                completer.complete(answer);
            }
        }
    }
}

/// Appends one batch and syncs it; a failure is rolled back. `Err((error, rolled_back))`.
fn write_batch(
    storage: &mut dyn Storage,
    len: &mut u64,
    bytes: &[u8],
) -> Result<(), (io::Error, bool)> {
    let found = storage.len().map_err(|error| (error, true))?;
    if found != *len {
        return Err((
            io::Error::other(format!(
                "the audit file changed outside this sink ({len} bytes expected, {found} found); \
                 reopen it"
            )),
            true,
        ));
    }
    match storage.append(bytes).and_then(|()| storage.sync()) {
        Ok(()) => {
            *len += bytes.len() as u64;
            Ok(())
        }
        Err(error) => {
            let rolled_back = storage.truncate(*len).and_then(|()| storage.sync()).is_ok();
            Err((error, rolled_back))
        }
    }
}

/// Fails whatever is still queued when the writer thread ends (it panicked, or the sink
/// closed with nothing left), so no ticket waits forever.
struct FailQueuedOnExit<'a>(&'a Writer);

impl Drop for FailQueuedOnExit<'_> {
    fn drop(&mut self) {
        let left = {
            let mut queue = self.0.lock();
            queue.broken = Some(STOPPED);
            let left = std::mem::take(&mut queue.lines);
            for queued in &left {
                if let Entry::Line(_) = queued.entry {
                    queue.lost.add(&"the audit writer thread stopped");
                }
            }
            left
        };
        // A flush too: the batch the writer held when it stopped may be lost, uncounted.
        for queued in left {
            queued.completer.complete(Err(io::Error::other(
                "the audit writer thread stopped before this line or flush was written; \
                 reopen the file",
            )));
        }
    }
}

const STOPPED: &str = "the audit writer thread stopped; lines submitted since may be missing \
                       from the trail; reopen the file";

impl std::fmt::Debug for JsonlAudit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JsonlAudit")
            .field("with_arguments", &self.with_arguments)
            .finish_non_exhaustive()
    }
}

/// Where a [`JsonlAudit`] writes its lines: its file (or, in tests, a file that is slow or
/// fails).
pub(crate) trait Storage: Send + 'static {
    /// The length of what is stored.
    fn len(&mut self) -> io::Result<u64>;
    /// Appends `bytes` (not yet durable).
    fn append(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Makes what was appended durable.
    fn sync(&mut self) -> io::Result<()>;
    /// Cuts what is stored back to `len` bytes.
    fn truncate(&mut self, len: u64) -> io::Result<()>;
}

impl Storage for File {
    fn len(&mut self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn append(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write_all(bytes)
    }

    fn sync(&mut self) -> io::Result<()> {
        self.sync_data()
    }

    fn truncate(&mut self, len: u64) -> io::Result<()> {
        self.set_len(len)
    }
}

/// The last line of `file` (`len` bytes), with its `\n` if it has one; `None` when empty.
fn read_last_line(file: &mut File, len: u64) -> io::Result<Option<Vec<u8>>> {
    if len == 0 {
        return Ok(None);
    }
    // Read backwards in growing chunks until a newline before the last line's bytes.
    let mut tail: Vec<u8> = Vec::new();
    let mut start = len;
    let mut chunk: u64 = 4096;
    loop {
        let step = chunk.min(start);
        start -= step;
        let mut buffer = vec![0; usize::try_from(step).map_err(io::Error::other)?];
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buffer)?;
        buffer.extend_from_slice(&tail);
        tail = buffer;
        // The last byte is the last line's own newline (or part of the line); a newline
        // before it ends the line before.
        let before_end = &tail[..tail.len() - 1];
        if let Some(newline) = memchr::memrchr(b'\n', before_end) {
            return Ok(Some(tail.split_off(newline + 1)));
        }
        if start == 0 {
            return Ok(Some(tail));
        }
        chunk = chunk.saturating_mul(2);
    }
}

impl AuditSink for JsonlAudit {
    fn record(&self, record: &AuditRecord<'_>) -> io::Result<()> {
        self.submit(record).wait()
    }

    fn submit(&self, record: &AuditRecord<'_>) -> AuditTicket {
        let mut queue = self.writer.lock();
        let line = match queue.broken {
            Some(broken) => Err(io::Error::other(broken)),
            // The time is taken under the lock, so lines are in time order when the clock is.
            None => queue
                .chain
                .next_line(record, self.with_arguments, &now_rfc3339()),
        };
        let line = match line {
            Ok(line) => line,
            Err(error) => {
                queue.refused.add(&error);
                return AuditTicket::ready(Err(error));
            }
        };
        queue.chain.advance(line.hash.clone());
        self.enqueue(&mut queue, Entry::Line(line))
    }

    fn flush(&self) -> AuditTicket {
        let mut queue = self.writer.lock();
        let refused = std::mem::take(&mut queue.refused);
        if let Some(broken) = queue.broken {
            // Nothing is queued, nor will be: what was lost is known now.
            let mut lost = std::mem::take(&mut queue.lost);
            lost.merge(refused);
            let error = match lost.answer() {
                Ok(()) => io::Error::other(broken),
                Err(lost) => io::Error::other(format!("{broken}; {lost}")),
            };
            return AuditTicket::ready(Err(error));
        }
        self.enqueue(&mut queue, Entry::Flush(refused))
    }

    fn wants_arguments(&self) -> bool {
        self.with_arguments
    }
}

#[cfg(test)]
mod turn_tests;

#[cfg(test)]
mod flush_tests;

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{Value, json};

    use super::*;
    use crate::gates::audit::chain::GENESIS;
    use crate::gates::audit::memory::MemoryAudit;
    use crate::gates::audit::sink::AuditDecision;
    use crate::gates::audit::testing::{parsed, record, temp_file, written};
    use crate::gates::audit::verify::verify_audit;

    #[test]
    fn a_good_file_verifies_and_the_chain_links_every_line() {
        let (path, lines) = written("good", 3);
        let summary = verify_audit(&path).expect("a good file verifies");
        assert_eq!(summary.lines, 3);
        let values: Vec<Value> = lines.iter().map(|line| parsed(line)).collect();
        assert_eq!(values[0]["prev"], GENESIS);
        for (i, value) in values.iter().enumerate() {
            assert_eq!(value["seq"], i + 1);
            assert_eq!(value["call_id"], format!("c{}", i + 1));
            assert_eq!(value["decision"], "auto");
            if i > 0 {
                assert_eq!(value["prev"], values[i - 1]["hash"]);
            }
        }
        assert_eq!(summary.last_hash, values[2]["hash"]);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn the_chain_continues_across_reopen() {
        let (path, _) = written("reopen", 2);
        {
            let audit = JsonlAudit::open(&path).expect("reopen");
            audit
                .record(&record("c3", AuditDecision::Outcome))
                .expect("record");
        }
        let summary = verify_audit(&path).expect("verifies");
        assert_eq!(summary.lines, 3);
        let text = std::fs::read_to_string(&path).expect("read");
        let values: Vec<Value> = text.lines().map(parsed).collect();
        assert_eq!(values[2]["seq"], 3);
        assert_eq!(values[2]["prev"], values[1]["hash"]);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn open_refuses_to_continue_a_damaged_last_line() {
        let (path, lines) = written("damaged", 2);
        std::fs::write(&path, format!("{}{}", lines[0], lines[1].trim_end())).expect("write");
        let error = JsonlAudit::open(&path).expect_err("incomplete last line");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        std::fs::write(
            &path,
            format!("{}{}", lines[0], lines[1].replace("c2", "c9")),
        )
        .expect("write");
        assert!(JsonlAudit::open(&path).is_err(), "an edited last line");
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_long_last_line_is_read_whole_on_reopen() {
        let path = temp_file("long");
        let big = json!({"text": "x".repeat(20_000)});
        {
            let audit = JsonlAudit::open(&path).expect("open").with_arguments(true);
            audit
                .record(&record("c1", AuditDecision::Auto))
                .expect("record");
            let long = AuditRecord {
                arguments: Some(&big),
                ..record("c2", AuditDecision::Auto)
            };
            audit.record(&long).expect("record");
        }
        let audit = JsonlAudit::open(&path).expect("reopen");
        audit
            .record(&record("c3", AuditDecision::Auto))
            .expect("record");
        assert_eq!(verify_audit(&path).expect("verifies").lines, 3);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn deeply_nested_arguments_are_recorded_and_verified() {
        let mut arguments = json!(1);
        for _ in 0..200 {
            arguments = json!([arguments]);
        }
        let nested = AuditRecord {
            arguments: Some(&arguments),
            ..record("c1", AuditDecision::Auto)
        };
        let path = temp_file("nested");
        JsonlAudit::open(&path)
            .expect("open")
            .with_arguments(true)
            .record(&nested)
            .expect("record");
        assert_eq!(verify_audit(&path).expect("verifies").lines, 1);
        let memory = MemoryAudit::new().with_arguments(true);
        memory.record(&nested).expect("record");
        assert_eq!(memory.lines()[0]["arguments"], arguments);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn a_write_outside_the_sink_is_noticed() {
        let (path, _) = written("outside", 1);
        let audit = JsonlAudit::open(&path).expect("open");
        JsonlAudit::open(&path)
            .expect("a second writer")
            .record(&record("c2", AuditDecision::Auto))
            .expect("record");
        assert!(audit.record(&record("c2", AuditDecision::Auto)).is_err());
        assert_eq!(verify_audit(&path).expect("still a chain").lines, 2);
        let _ = std::fs::remove_file(path);
    }

    #[test]
    fn concurrent_records_form_one_chain() {
        let path = temp_file("concurrent");
        let audit = Arc::new(JsonlAudit::open(&path).expect("open"));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let audit = Arc::clone(&audit);
                std::thread::spawn(move || {
                    for i in 0..10 {
                        audit
                            .record(&record(&format!("t{t}-{i}"), AuditDecision::Auto))
                            .expect("record");
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("a writer thread");
        }
        assert_eq!(verify_audit(&path).expect("verifies").lines, 80);
        let _ = std::fs::remove_file(path);
    }
}
