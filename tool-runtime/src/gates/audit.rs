//! The audit trail: one JSON line per gate decision and per executed write's outcome.
//!
//! [`JsonlAudit`] appends hash-chained JSON lines to a file (its documentation defines the
//! format), [`verify_audit`] checks such a file, [`MemoryAudit`] keeps the same lines in memory.

mod ticket;

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

pub use ticket::{AuditCompleter, AuditTicket};

/// What was decided about a call (or, for [`AuditDecision::Outcome`], how a write ended).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AuditDecision {
    /// The policy let a call that is not read-only run.
    Auto,
    /// The policy asked a person.
    Ask,
    /// A person approved the call as it was.
    Approve,
    /// A person approved the call with edited arguments.
    Edit,
    /// The policy or a person refused the call.
    Deny,
    /// A person will decide later.
    Pending,
    /// A signed decision resumed a pending call (or was refused).
    Resume,
    /// The tool is outside the session's scope.
    OutOfScope,
    /// The principal lacks a role the tool requires.
    NotPermitted,
    /// The session's refusal breaker stopped the call.
    Breaker,
    /// How an executed write ended.
    Outcome,
}

/// One decision, as the runtime reports it to an [`AuditSink`].
#[derive(Debug, Clone, Serialize)]
pub struct AuditRecord<'a> {
    /// The session.
    pub session: &'a str,
    /// The principal acting in the session.
    pub principal: Option<&'a str>,
    /// The call's id.
    pub call_id: &'a str,
    /// The tool the call named.
    pub tool: &'a str,
    /// The tool's version.
    pub version: Option<&'a str>,
    /// SHA-256 (hex) of the canonical validated arguments, when they were validated.
    pub arguments_digest: Option<&'a str>,
    /// The arguments (redacted), only when the sink asks for them.
    pub arguments: Option<&'a Value>,
    /// What was decided.
    pub decision: AuditDecision,
    /// Why.
    pub reason: Option<&'a str>,
    /// The approval request the decision belongs to.
    pub approval_id: Option<&'a str>,
    /// For [`AuditDecision::Outcome`]: `success` or the error kind.
    pub outcome: Option<&'a str>,
}

/// Where the runtime writes its decisions.
///
/// # The contract
///
/// The runtime hands every line to [`submit`](AuditSink::submit), in the order of the trail
/// (a sink keeps lines in the order they were submitted), from the task that plans the turn.
/// `submit` answers at once with an [`AuditTicket`] that resolves once the line is durable:
/// planning goes on to the next call without waiting, so a sink can make the lines of many
/// calls durable together. A ticket resolves `Ok` only once its line is durable, and `Err`
/// when it never will be.
///
/// - A call's decision line (`auto` for a write the policy lets run) is waited for on the
///   call's path right before the call's tool would start: a call never runs before its line
///   is durable, and a call whose ticket fails is answered `audit_unavailable` and never runs.
///   The lines about a person's decision (`ask`, `approve`, `edit`, `pending`) are waited for
///   where they are written, before the approver is asked or the answer acted on.
/// - Refusals (`deny`, `out_of_scope`, `not_permitted`, `breaker`), resumes and outcomes are
///   not waited for (their tickets are dropped), but they are lines of the trail like any
///   other: a sink writes them, in order.
/// - Reads the policy lets run write no line.
///
/// # Writing a sink
///
/// A sink that writes at once (in memory, to a fast local log) implements only
/// [`record`](AuditSink::record): the default `submit` calls it and answers with its result.
/// Whatever `record` waits for, the planning task waits for too, once per audited call. A sink
/// that waits on a disk or a network implements `submit` as well: it queues the line, returns
/// the ticket from [`AuditTicket::pending`], and completes the [`AuditCompleter`] once the line
/// is durable, for many lines at a time ([`JsonlAudit`] does this, with a group commit); its
/// `record` can be `self.submit(record).wait()`.
pub trait AuditSink: Send + Sync + 'static {
    /// Writes one record; returns once it is durable. An error refuses the write the record
    /// was about (`audit_unavailable`); reads go on.
    fn record(&self, record: &AuditRecord<'_>) -> io::Result<()>;

    /// Submits one record, to be made durable after every record submitted before it; the
    /// ticket resolves once it is. Must not wait on I/O: it is called on the task that plans
    /// the turn. Default: [`record`](AuditSink::record), answered at once.
    fn submit(&self, record: &AuditRecord<'_>) -> AuditTicket {
        AuditTicket::ready(self.record(record))
    }

    /// A ticket that resolves once every record submitted before this call is durable or
    /// failed: `Ok` when none of the records submitted since the last flush failed, `Err`
    /// (saying how many were lost) when any did, including those whose tickets nobody waited
    /// for (refusals, outcomes). A flush answers each lost line once: the next flush answers
    /// `Ok` again unless more were lost. Default: resolved `Ok` at once, as it is for a sink
    /// whose `submit` writes at once (a failed line was answered to its ticket).
    fn flush(&self) -> AuditTicket {
        AuditTicket::ready(Ok(()))
    }

    /// Whether records should carry the (redacted) arguments.
    fn wants_arguments(&self) -> bool {
        false
    }
}

/// The `prev` of the first line: 64 zeros.
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// The last field of every line, up to its value.
const HASH_FIELD: &str = ",\"hash\":\"";

/// A line's content as it is serialized (and hashed): the fields in this order.
#[derive(Serialize)]
struct LineContent<'a> {
    seq: u64,
    time: &'a str,
    session: &'a str,
    principal: Option<&'a str>,
    call_id: &'a str,
    tool: &'a str,
    version: Option<&'a str>,
    arguments_digest: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a Value>,
    decision: AuditDecision,
    reason: Option<&'a str>,
    approval_id: Option<&'a str>,
    outcome: Option<&'a str>,
    prev: &'a str,
}

/// Where a chain stands: the `seq` of the next line and the `hash` of the last one.
#[derive(Debug, Clone)]
struct Chain {
    next_seq: u64,
    prev: String,
}

/// The next line of a chain, not yet written.
struct NextLine {
    /// The whole line, `\n` included.
    text: String,
    hash: String,
}

impl Chain {
    fn genesis() -> Self {
        Chain {
            next_seq: 1,
            prev: GENESIS.to_owned(),
        }
    }

    /// The content of the line that records `record` next in this chain.
    fn content<'a>(
        &'a self,
        record: &AuditRecord<'a>,
        with_arguments: bool,
        time: &'a str,
    ) -> LineContent<'a> {
        LineContent {
            seq: self.next_seq,
            time,
            session: record.session,
            principal: record.principal,
            call_id: record.call_id,
            tool: record.tool,
            version: record.version,
            arguments_digest: record.arguments_digest,
            arguments: record.arguments.filter(|_| with_arguments),
            decision: record.decision,
            reason: record.reason,
            approval_id: record.approval_id,
            outcome: record.outcome,
            prev: &self.prev,
        }
    }

    /// The line that records `record` next in this chain (the chain does not move).
    fn next_line(
        &self,
        record: &AuditRecord<'_>,
        with_arguments: bool,
        time: &str,
    ) -> io::Result<NextLine> {
        line_of(&self.content(record, with_arguments, time))
    }

    fn advance(&mut self, hash: String) {
        self.next_seq += 1;
        self.prev = hash;
    }
}

/// The line of `content`: its JSON text with the `hash` field added last.
fn line_of(content: &LineContent<'_>) -> io::Result<NextLine> {
    let content = serde_json::to_string(content).map_err(io::Error::other)?;
    let hash = crate::hex::sha256(content.as_bytes());
    let Some(open) = content.strip_suffix('}') else {
        return Err(io::Error::other(
            "an audit line did not serialize as a JSON object",
        ));
    };
    let mut text = String::with_capacity(content.len() + HASH_FIELD.len() + 68);
    text.push_str(open);
    text.push_str(HASH_FIELD);
    text.push_str(&hash);
    text.push_str("\"}\n");
    Ok(NextLine { text, hash })
}

fn is_hash(text: &str) -> bool {
    text.len() == 64
        && text
            .bytes()
            .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

/// The current time as the audit trail writes it (see [`rfc3339_millis`]); a clock before
/// 1970 reads as the epoch.
fn now_rfc3339() -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
        });
    rfc3339_millis(millis)
}

/// `unix_millis` (milliseconds since 1970-01-01T00:00:00Z) as RFC 3339 UTC with
/// milliseconds: `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn rfc3339_millis(unix_millis: u64) -> String {
    const MILLIS_PER_DAY: u64 = 86_400_000;
    let (year, month, day) = civil_from_days(unix_millis / MILLIS_PER_DAY);
    let of_day = unix_millis % MILLIS_PER_DAY;
    let (seconds, millis) = (of_day / 1000, of_day % 1000);
    let (hour, minute, second) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    format!("{year:04}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}.{millis:03}Z")
}

/// The proleptic Gregorian (year, month, day) of the day `days` after 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, for days on or after the epoch). Eras are 400-year cycles of
/// 146 097 days that start on March 1st, so the leap day is the last day of an era's year.
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    // Days since 0000-03-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097; // [0, 146096]
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365; // [0, 399]
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100); // [0, 365]
    let month_from_march = (5 * day_of_year + 2) / 153; // [0, 11]
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1; // [1, 31]
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = era * 400 + year_of_era + u64::from(month <= 2);
    (year, month, day)
}

/// What the checks of one line found wrong with it alone.
enum LineProblem {
    Malformed(String),
    Edited,
}

impl LineProblem {
    fn at(self, line: usize) -> AuditError {
        match self {
            LineProblem::Malformed(reason) => AuditError::Malformed { line, reason },
            LineProblem::Edited => AuditError::Edited { line },
        }
    }
}

/// The fields a line's checks read; serde skips the others without building them (and
/// without a depth limit, so deeply nested arguments are no problem).
#[derive(Deserialize)]
struct LineHead {
    seq: u64,
    prev: String,
    hash: String,
}

/// A line that is well formed and matches its own hash.
struct CheckedLine {
    seq: u64,
    prev: String,
    hash: String,
}

/// Checks one line alone (without its `\n`): valid JSON with `seq`, `prev` and `hash`, the
/// `hash` field last, and `hash` the SHA-256 of the rest.
fn check_line(bytes: &[u8]) -> Result<CheckedLine, LineProblem> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| LineProblem::Malformed("the line is not UTF-8".to_owned()))?;
    let head: LineHead = serde_json::from_str(text).map_err(|error| {
        LineProblem::Malformed(format!(
            "not a JSON object with `seq`, `prev` and `hash`: {error}"
        ))
    })?;
    if !is_hash(&head.hash) {
        return Err(LineProblem::Malformed(
            "`hash` is not 64 lowercase hex digits".to_owned(),
        ));
    }
    if !is_hash(&head.prev) {
        return Err(LineProblem::Malformed(
            "`prev` is not 64 lowercase hex digits".to_owned(),
        ));
    }
    let content = text
        .strip_suffix("\"}")
        .and_then(|rest| rest.strip_suffix(head.hash.as_str()))
        .and_then(|rest| rest.strip_suffix(HASH_FIELD));
    let Some(content) = content else {
        return Err(LineProblem::Malformed(
            "`hash` is not the line's last field, as the audit trail writes it".to_owned(),
        ));
    };
    let mut hasher = Sha256::new();
    hasher.update(content.as_bytes());
    hasher.update(b"}");
    if crate::hex::encode(&hasher.finalize()) != head.hash {
        return Err(LineProblem::Edited);
    }
    Ok(CheckedLine {
        seq: head.seq,
        prev: head.prev,
        hash: head.hash,
    })
}

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

/// An audit trail in memory, in the same format as [`JsonlAudit`]'s lines (each a JSON
/// object with `seq`, `time`, the record's fields, `prev` and `hash`): for tests, and for
/// applications that ship records elsewhere themselves.
#[derive(Debug, Default)]
pub struct MemoryAudit {
    with_arguments: bool,
    failing: bool,
    state: Mutex<MemoryState>,
}

#[derive(Debug)]
struct MemoryState {
    chain: Chain,
    lines: Vec<Value>,
}

impl Default for MemoryState {
    fn default() -> Self {
        MemoryState {
            chain: Chain::genesis(),
            lines: Vec::new(),
        }
    }
}

impl MemoryAudit {
    /// An empty trail.
    #[must_use]
    pub fn new() -> Self {
        MemoryAudit::default()
    }

    /// A trail that cannot be written: every [`AuditSink::record`] returns an error (so the
    /// runtime refuses the writes it would record).
    #[must_use]
    pub fn failing() -> Self {
        MemoryAudit {
            failing: true,
            ..MemoryAudit::default()
        }
    }

    /// Whether records carry the (redacted) arguments ([`AuditSink::wants_arguments`]);
    /// default `false`.
    #[must_use]
    pub fn with_arguments(mut self, with_arguments: bool) -> Self {
        self.with_arguments = with_arguments;
        self
    }

    /// The lines recorded so far, oldest first.
    #[must_use]
    pub fn lines(&self) -> Vec<Value> {
        match self.state.lock() {
            Ok(state) => state.lines.clone(),
            Err(poisoned) => poisoned.into_inner().lines.clone(),
        }
    }
}

impl AuditSink for MemoryAudit {
    fn record(&self, record: &AuditRecord<'_>) -> io::Result<()> {
        if self.failing {
            return Err(io::Error::other(
                "the audit trail is unavailable (MemoryAudit::failing)",
            ));
        }
        let mut state = self
            .state
            .lock()
            .map_err(|_| io::Error::other("the audit trail's lock is poisoned"))?;
        let time = now_rfc3339();
        let content = state.chain.content(record, self.with_arguments, &time);
        let line = line_of(&content)?;
        // The value is built, not parsed from the line: no parser depth limit applies to the
        // arguments. Its fields keep their order (serde_json's `preserve_order`).
        let mut value = serde_json::to_value(&content).map_err(io::Error::other)?;
        let Value::Object(fields) = &mut value else {
            return Err(io::Error::other(
                "an audit line did not serialize as a JSON object",
            ));
        };
        fields.insert("hash".to_owned(), Value::String(line.hash.clone()));
        state.lines.push(value);
        state.chain.advance(line.hash);
        Ok(())
    }

    fn wants_arguments(&self) -> bool {
        self.with_arguments
    }
}

/// A verified audit file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditSummary {
    /// How many lines the file has.
    pub lines: usize,
    /// The `hash` of the last line (64 zeros for an empty file): keep it elsewhere to detect
    /// a later rewrite of the file or the removal of its last lines.
    pub last_hash: String,
}

/// The first line of an audit file that fails verification, and why ([`verify_audit`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AuditError {
    /// The file cannot be opened.
    #[error("cannot open the audit file: {source}")]
    Open {
        /// Why.
        source: io::Error,
    },
    /// Reading the file failed at a line.
    #[error("line {line}: cannot read the audit file: {source}")]
    Io {
        /// The line being read (1-based).
        line: usize,
        /// Why.
        source: io::Error,
    },
    /// The line is not a line of the audit trail: not UTF-8 or not JSON, without `seq`,
    /// `prev` or `hash`, or incomplete.
    #[error("line {line}: malformed: {reason}")]
    Malformed {
        /// The line (1-based).
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// The line does not match its own hash: it was edited.
    #[error("line {line}: edited: its hash does not match its content")]
    Edited {
        /// The line (1-based).
        line: usize,
    },
    /// The line's `seq` is ahead of its line number and the missing `seq` is nowhere later in
    /// the file: lines before it were removed.
    #[error(
        "line {line}: removed: seq mismatch, expected seq {expected_seq}, found {found_seq} \
         (a line before this one is missing)"
    )]
    Removed {
        /// The line (1-based).
        line: usize,
        /// The line's number, the `seq` it should have.
        expected_seq: u64,
        /// The `seq` it has.
        found_seq: u64,
    },
    /// The line's `seq` is not its line number, and the line with that number is later in
    /// the file or this line's `seq` came earlier: lines were moved or repeated.
    #[error(
        "line {line}: reordered: seq mismatch, expected seq {expected_seq}, found {found_seq} \
         (lines are out of order or repeated)"
    )]
    Reordered {
        /// The line (1-based).
        line: usize,
        /// The line's number, the `seq` it should have.
        expected_seq: u64,
        /// The `seq` it has.
        found_seq: u64,
    },
    /// The line's `seq` is right but its `prev` is not the hash of the line before: the line
    /// before was removed or replaced (and the lines after it renumbered and rehashed).
    #[error(
        "line {line}: removed or replaced: prev mismatch, `prev` is not the hash of the line \
         before"
    )]
    PrevMismatch {
        /// The line (1-based).
        line: usize,
        /// The hash of the line before (64 zeros for the first line).
        expected: String,
        /// The line's `prev`.
        found: String,
    },
}

impl AuditError {
    /// The 1-based number of the first bad line (0 when the file cannot be opened).
    #[must_use]
    pub fn line(&self) -> usize {
        match self {
            AuditError::Open { .. } => 0,
            AuditError::Io { line, .. }
            | AuditError::Malformed { line, .. }
            | AuditError::Edited { line }
            | AuditError::Removed { line, .. }
            | AuditError::Reordered { line, .. }
            | AuditError::PrevMismatch { line, .. } => *line,
        }
    }
}

/// Verifies the audit file at `path` line by line: each line is valid JSON, matches its own
/// `hash`, has its line number as `seq` and the previous line's `hash` as `prev`.
///
/// # Errors
///
/// The first line that fails, with why; a line that does not match its hash is reported as
/// [`AuditError::Edited`] before its `seq` and `prev` are looked at.
pub fn verify_audit(path: impl AsRef<Path>) -> Result<AuditSummary, AuditError> {
    let file = File::open(path).map_err(|source| AuditError::Open { source })?;
    verify_lines(BufReader::new(file))
}

fn verify_lines(mut reader: impl BufRead) -> Result<AuditSummary, AuditError> {
    let mut prev = GENESIS.to_owned();
    let mut lines = 0;
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let read = reader
            .read_until(b'\n', &mut buffer)
            .map_err(|source| AuditError::Io {
                line: lines + 1,
                source,
            })?;
        if read == 0 {
            break;
        }
        lines += 1;
        let line = lines;
        let Some(bytes) = buffer.strip_suffix(b"\n") else {
            return Err(AuditError::Malformed {
                line,
                reason: "no newline at the end: the line is incomplete".to_owned(),
            });
        };
        let checked = check_line(bytes).map_err(|problem| problem.at(line))?;
        let expected_seq = line as u64;
        if checked.seq > expected_seq {
            return Err(if seq_comes_later(&mut reader, expected_seq) {
                AuditError::Reordered {
                    line,
                    expected_seq,
                    found_seq: checked.seq,
                }
            } else {
                AuditError::Removed {
                    line,
                    expected_seq,
                    found_seq: checked.seq,
                }
            });
        }
        if checked.seq < expected_seq {
            return Err(AuditError::Reordered {
                line,
                expected_seq,
                found_seq: checked.seq,
            });
        }
        if checked.prev != prev {
            return Err(AuditError::PrevMismatch {
                line,
                expected: prev,
                found: checked.prev,
            });
        }
        prev = checked.hash;
    }
    Ok(AuditSummary {
        lines,
        last_hash: prev,
    })
}

/// Whether a line with `seq` comes later in `reader` (read to its end).
fn seq_comes_later(reader: &mut impl BufRead, seq: u64) -> bool {
    #[derive(Deserialize)]
    struct Seq {
        seq: u64,
    }
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match reader.read_until(b'\n', &mut buffer) {
            Ok(0) | Err(_) => return false,
            Ok(_) => {
                if serde_json::from_slice::<Seq>(buffer.trim_ascii_end())
                    .is_ok_and(|found| found.seq == seq)
                {
                    return true;
                }
            }
        }
    }
}

#[cfg(test)]
mod turn_tests;

#[cfg(test)]
mod flush_tests;

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use serde_json::json;

    use super::*;

    fn temp_file(name: &str) -> PathBuf {
        let path = std::env::temp_dir().join(format!(
            "tool-runtime-audit-{name}-{}.jsonl",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&path);
        path
    }

    fn record<'a>(call_id: &'a str, decision: AuditDecision) -> AuditRecord<'a> {
        AuditRecord {
            session: "s-1",
            principal: Some("ada"),
            call_id,
            tool: "refund_order",
            version: Some("2"),
            arguments_digest: Some("abc"),
            arguments: None,
            decision,
            reason: None,
            approval_id: None,
            outcome: None,
        }
    }

    /// A file of `n` lines (calls `c1`..`cn`), returned as its lines (with their `\n`).
    fn written(name: &str, n: usize) -> (PathBuf, Vec<String>) {
        let path = temp_file(name);
        let audit = JsonlAudit::open(&path).expect("open");
        for i in 1..=n {
            audit
                .record(&record(&format!("c{i}"), AuditDecision::Auto))
                .expect("record");
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let lines = text.split_inclusive('\n').map(str::to_owned).collect();
        (path, lines)
    }

    fn verify_text(text: &str) -> Result<AuditSummary, AuditError> {
        verify_lines(text.as_bytes())
    }

    fn parsed(line: &str) -> Value {
        serde_json::from_str(line).expect("a JSON line")
    }

    #[test]
    fn the_line_format_is_fixed() {
        let arguments = json!({"order_id": "A-1024", "amount": 12.5});
        let line = Chain::genesis()
            .next_line(
                &AuditRecord {
                    arguments: Some(&arguments),
                    reason: Some("over\nlimit"),
                    ..record("call_1", AuditDecision::OutOfScope)
                },
                true,
                "2026-12-01T14:05:10.123Z",
            )
            .expect("a line");
        let content = format!(
            "{{\"seq\":1,\"time\":\"2026-12-01T14:05:10.123Z\",\"session\":\"s-1\",\
             \"principal\":\"ada\",\"call_id\":\"call_1\",\"tool\":\"refund_order\",\
             \"version\":\"2\",\"arguments_digest\":\"abc\",\
             \"arguments\":{{\"order_id\":\"A-1024\",\"amount\":12.5}},\
             \"decision\":\"out_of_scope\",\"reason\":\"over\\nlimit\",\"approval_id\":null,\
             \"outcome\":null,\"prev\":\"{GENESIS}\"}}"
        );
        let hash = crate::hex::sha256(content.as_bytes());
        let expected = format!(
            "{},\"hash\":\"{hash}\"}}\n",
            content.strip_suffix('}').expect("an object")
        );
        assert_eq!(line.text, expected);
        assert_eq!(line.hash, hash);
        assert_eq!(line.text.matches('\n').count(), 1, "one line");
    }

    #[test]
    fn arguments_are_written_only_when_asked_for_and_present() {
        let arguments = json!({"order_id": "A-1024"});
        let with = AuditRecord {
            arguments: Some(&arguments),
            ..record("c1", AuditDecision::Auto)
        };
        let line = |with_arguments, record: &AuditRecord<'_>| {
            parsed(
                &Chain::genesis()
                    .next_line(record, with_arguments, "t")
                    .expect("a line")
                    .text,
            )
        };
        assert_eq!(line(true, &with)["arguments"], arguments);
        assert!(line(false, &with).get("arguments").is_none());
        assert!(
            line(true, &record("c1", AuditDecision::Auto))
                .get("arguments")
                .is_none()
        );
        let path = temp_file("wants");
        let audit = JsonlAudit::open(&path).expect("open");
        assert!(!audit.wants_arguments());
        assert!(audit.with_arguments(true).wants_arguments());
        assert!(!MemoryAudit::new().wants_arguments());
        assert!(MemoryAudit::new().with_arguments(true).wants_arguments());
        let _ = std::fs::remove_file(path);
    }

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
    fn an_empty_file_verifies_as_the_start_of_a_chain() {
        assert_eq!(
            verify_text("").expect("empty"),
            AuditSummary {
                lines: 0,
                last_hash: GENESIS.to_owned()
            }
        );
    }

    #[test]
    fn an_edited_line_is_found() {
        let (path, mut lines) = written("edited", 4);
        lines[2] = lines[2].replace("\"decision\":\"auto\"", "\"decision\":\"deny\"");
        let error = verify_text(&lines.concat()).expect_err("edited");
        assert!(matches!(error, AuditError::Edited { line: 3 }), "{error}");
        assert_eq!(
            error.to_string(),
            "line 3: edited: its hash does not match its content"
        );
        // Even a change of whitespace is an edit.
        let (other, mut lines) = written("edited-space", 2);
        lines[1] = lines[1].replacen(',', ", ", 1);
        assert_eq!(verify_text(&lines.concat()).expect_err("edited").line(), 2);
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(other);
    }

    #[test]
    fn a_deleted_line_is_found() {
        let (path, mut lines) = written("deleted", 4);
        lines.remove(1);
        let error = verify_text(&lines.concat()).expect_err("deleted");
        assert!(
            matches!(
                error,
                AuditError::Removed {
                    line: 2,
                    expected_seq: 2,
                    found_seq: 3
                }
            ),
            "{error}"
        );
        assert!(
            error
                .to_string()
                .starts_with("line 2: removed: seq mismatch"),
            "{error}"
        );
        // The first line too.
        let (other, mut lines) = written("deleted-first", 2);
        lines.remove(0);
        assert!(matches!(
            verify_text(&lines.concat()),
            Err(AuditError::Removed { line: 1, .. })
        ));
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(other);
    }

    #[test]
    fn swapped_lines_are_found() {
        let (path, mut lines) = written("swapped", 4);
        lines.swap(1, 2);
        let error = verify_text(&lines.concat()).expect_err("swapped");
        assert!(
            matches!(
                error,
                AuditError::Reordered {
                    line: 2,
                    expected_seq: 2,
                    found_seq: 3
                }
            ),
            "{error}"
        );
        // A repeated line.
        let (other, mut lines) = written("repeated", 3);
        lines[2] = lines[1].clone();
        assert!(matches!(
            verify_text(&lines.concat()),
            Err(AuditError::Reordered {
                line: 3,
                expected_seq: 3,
                found_seq: 2
            })
        ));
        let _ = std::fs::remove_file(path);
        let _ = std::fs::remove_file(other);
    }

    #[test]
    fn a_line_from_another_chain_is_found_by_its_prev() {
        let line = |chain: &Chain, call_id: &str, time: &str| {
            chain
                .next_line(&record(call_id, AuditDecision::Auto), false, time)
                .expect("a line")
        };
        let ours = line(&Chain::genesis(), "c1", "t1");
        let mut theirs = Chain::genesis();
        theirs.advance(line(&theirs, "c1", "t2").hash);
        let spliced = format!("{}{}", ours.text, line(&theirs, "c2", "t3").text);
        let error = verify_text(&spliced).expect_err("spliced");
        assert!(
            matches!(error, AuditError::PrevMismatch { line: 2, .. }),
            "{error}"
        );
        assert!(
            error.to_string().contains("prev mismatch"),
            "the message says which: {error}"
        );
        // A rehashed chain without its first line: seq and hash right, prev wrong.
        let mut rehashed = Chain::genesis();
        rehashed.prev = "1".repeat(64);
        let error = verify_text(&line(&rehashed, "c2", "t1").text).expect_err("prev");
        assert!(
            matches!(error, AuditError::PrevMismatch { line: 1, .. }),
            "{error}"
        );
    }

    #[test]
    fn malformed_and_incomplete_lines_are_found() {
        let (path, lines) = written("malformed", 2);
        for (text, line) in [
            (format!("{}not json\n", lines[0]), 2),
            (format!("{}{{\"seq\":2}}\n", lines[0]), 2),
            (lines[0].trim_end().to_owned(), 1),
            (format!("{}\n{}", lines[0], lines[1]), 2),
        ] {
            let error = verify_text(&text).expect_err("malformed");
            assert!(
                matches!(error, AuditError::Malformed { line: l, .. } if l == line),
                "{error}"
            );
        }
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

    #[test]
    fn memory_lines_have_the_file_format() {
        let memory = MemoryAudit::new();
        for i in 1..=3 {
            memory
                .record(&record(&format!("c{i}"), AuditDecision::Ask))
                .expect("record");
        }
        let lines = memory.lines();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0]["prev"], GENESIS);
        assert_eq!(lines[2]["seq"], 3);
        assert_eq!(lines[1]["decision"], "ask");
        let keys: Vec<&str> = lines[0]
            .as_object()
            .expect("an object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "seq",
                "time",
                "session",
                "principal",
                "call_id",
                "tool",
                "version",
                "arguments_digest",
                "decision",
                "reason",
                "approval_id",
                "outcome",
                "prev",
                "hash"
            ]
        );
        // Written out, the lines are a file that verifies.
        let text: String = lines.iter().map(|line| format!("{line}\n")).collect();
        assert_eq!(verify_text(&text).expect("verifies").lines, 3);
    }

    #[test]
    fn a_failing_memory_audit_refuses_every_record() {
        let memory = MemoryAudit::failing();
        assert!(memory.record(&record("c1", AuditDecision::Auto)).is_err());
        assert!(memory.lines().is_empty());
    }

    #[test]
    fn times_are_rfc3339_utc_with_milliseconds() {
        assert_eq!(rfc3339_millis(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(rfc3339_millis(951_825_600_000), "2000-02-29T12:00:00.000Z");
        assert_eq!(
            rfc3339_millis(1_709_251_199_999),
            "2024-02-29T23:59:59.999Z"
        );
        assert_eq!(
            rfc3339_millis(1_709_251_200_000),
            "2024-03-01T00:00:00.000Z"
        );
        assert_eq!(rfc3339_millis(946_684_799_000), "1999-12-31T23:59:59.000Z");
        assert_eq!(
            rfc3339_millis(4_107_542_400_000),
            "2100-03-01T00:00:00.000Z"
        );
        assert_eq!(
            rfc3339_millis(1_796_133_910_123),
            "2026-12-01T14:05:10.123Z"
        );
        let now = now_rfc3339();
        assert_eq!(now.len(), "2026-12-01T14:05:10.123Z".len(), "{now}");
    }

    #[test]
    fn civil_from_days_counts_every_day() {
        // Day by day from the epoch for about 550 years, against a plain calendar.
        let (mut year, mut month, mut day) = (1970, 1, 1);
        for days in 0..200_000 {
            assert_eq!(civil_from_days(days), (year, month, day), "day {days}");
            let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
            let length = match month {
                2 if leap => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            day += 1;
            if day > length {
                day = 1;
                month += 1;
                if month > 12 {
                    month = 1;
                    year += 1;
                }
            }
        }
    }
}
