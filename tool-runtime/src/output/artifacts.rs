//! Where the full output of a cut result is kept, so the model can read the rest.
//!
//! An artifact belongs to the session whose call produced it: it is stored under the session
//! and read only from it. Both stores are bounded in count, in bytes and in age; the oldest
//! artifacts go first.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::watch;

/// An artifact could not be stored or read.
#[derive(Debug, thiserror::Error)]
#[error("artifact store: {source}")]
pub struct ArtifactError {
    source: Box<dyn std::error::Error + Send + Sync>,
}

impl ArtifactError {
    /// An error of a store of your own (a database's, a bucket's).
    pub fn new(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self {
            source: source.into(),
        }
    }
}

impl From<std::io::Error> for ArtifactError {
    fn from(error: std::io::Error) -> Self {
        Self::new(error)
    }
}

/// Keeps full outputs under ids, per session.
///
/// `get` must answer only what `put` stored under that id for the same session: another
/// session asking for the id gets `None`, and an id never answers another content than the one
/// it was returned for (ids made from a collision-resistant digest of the session and content,
/// as both stores here make them, or a store's own unique keys).
pub trait ArtifactStore: Send + Sync + fmt::Debug + 'static {
    /// Stores `content` for `session` and returns its id.
    fn put(&self, session: &str, content: &str) -> Result<String, ArtifactError>;
    /// The content stored under `id` for `session`, when there is one.
    fn get(&self, session: &str, id: &str) -> Result<Option<Arc<str>>, ArtifactError>;

    /// Whether `put` and `get` wait on I/O (a disk, a network): then the runtime calls them on
    /// tokio's blocking pool, never on the task that runs the turn, so a slow store does not
    /// hold up the turn's other calls. Default `true`; a store in memory says `false`.
    fn blocks(&self) -> bool {
        true
    }

    /// The id `put` will return for `content` stored for `session`, when the store knows it
    /// without storing anything (its ids are a digest of the session and content), and `put`
    /// would keep it; `None` otherwise. Default `None`; both stores here answer their
    /// content-addressed id (`art-` and 128 bits of a SHA-256 of the session and content),
    /// unless the content is over their byte limit.
    ///
    /// A long error (a message or hint over the tool's output limit) is cut where the runtime
    /// answers it, on the turn's task. For a store that [blocks](ArtifactStore::blocks) and
    /// names the id here, its whole text goes to `put` on tokio's blocking pool without being
    /// waited for: the error's notice names the id at once, and `read_artifact` of that id
    /// waits until the `put` has returned. A failed `put` is logged, and the id then reads as
    /// no artifact. A store that blocks and answers `None` is called on the turn's task for a
    /// long error, since its notice needs the id `put` returns.
    fn id_for(&self, session: &str, content: &str) -> Option<String> {
        let _ = (session, content);
        None
    }
}

// A shared store is a store: every store setter of the builder takes `impl Trait`.
impl<T: ArtifactStore + ?Sized> ArtifactStore for Arc<T> {
    fn put(&self, session: &str, content: &str) -> Result<String, ArtifactError> {
        (**self).put(session, content)
    }

    fn get(&self, session: &str, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
        (**self).get(session, id)
    }

    fn blocks(&self) -> bool {
        (**self).blocks()
    }

    fn id_for(&self, session: &str, content: &str) -> Option<String> {
        (**self).id_for(session, content)
    }
}

/// A `put` handed to tokio's blocking pool whose store call has not returned yet
/// ([`put_behind`]).
struct Writing {
    token: u64,
    /// The store's address: the same store the runtime and its `read_artifact` share.
    store: usize,
    session: String,
    id: String,
    /// Closed once the `put` has returned (or will never run).
    done: watch::Receiver<()>,
}

/// The puts in flight, for every store of the process: a handful at a time (long errors
/// whose whole text is being stored), so a list.
static WRITING: Mutex<Vec<Writing>> = Mutex::new(Vec::new());

static NEXT_WRITE: AtomicU64 = AtomicU64::new(0);

fn writing() -> std::sync::MutexGuard<'static, Vec<Writing>> {
    WRITING.lock().unwrap_or_else(PoisonError::into_inner)
}

fn store_address(store: &Arc<dyn ArtifactStore>) -> usize {
    Arc::as_ptr(store).cast::<()>().addr()
}

/// Ends a write in flight when dropped: after its `put` returned, or with its task if the
/// blocking pool never ran it (the runtime shut down).
struct Written {
    token: u64,
    /// Dropped after the entry is gone: closes the entry's `done` for whoever waits.
    _done: watch::Sender<()>,
}

impl Drop for Written {
    fn drop(&mut self) {
        writing().retain(|write| write.token != self.token);
    }
}

/// Stores `content` for `session` in `store`, on `runtime`'s blocking pool, without waiting:
/// the caller names `id` ([`ArtifactStore::id_for`]) at once. Until the `put` returns,
/// [`wait_for_puts`] of the id waits for it; a failure is logged.
pub(crate) fn put_behind(
    runtime: &tokio::runtime::Handle,
    store: &Arc<dyn ArtifactStore>,
    session: &str,
    content: &str,
    id: &str,
) {
    let (sender, done) = watch::channel(());
    let token = NEXT_WRITE.fetch_add(1, Ordering::Relaxed);
    writing().push(Writing {
        token,
        store: store_address(store),
        session: session.to_owned(),
        id: id.to_owned(),
        done,
    });
    let written = Written {
        token,
        _done: sender,
    };
    let (store, session, content, id) = (
        Arc::clone(store),
        session.to_owned(),
        content.to_owned(),
        id.to_owned(),
    );
    // Not awaited: the id is known, and the turn goes on.
    drop(runtime.spawn_blocking(move || {
        let _written = written;
        match store.put(&session, &content) {
            Ok(stored) if stored == id => {}
            Ok(stored) => tracing::error!(
                id,
                stored,
                "the artifact store kept an error's full text under another id than its \
                 `id_for` named; read_artifact will not find it"
            ),
            Err(error) => tracing::error!(
                %error,
                id,
                "an error's full text could not be kept as an artifact; read_artifact will \
                 not find it"
            ),
        }
    }));
}

/// Returns once no `put` of `id` for `session` into `store` is in flight ([`put_behind`]):
/// a `get` then finds what it stored.
pub(crate) async fn wait_for_puts(store: &Arc<dyn ArtifactStore>, session: &str, id: &str) {
    let address = store_address(store);
    loop {
        let done = writing()
            .iter()
            .find(|write| write.store == address && write.session == session && write.id == id)
            .map(|write| write.done.clone());
        let Some(mut done) = done else {
            return;
        };
        // Nothing is ever sent: `changed` answers `Err` once the write has ended.
        while done.changed().await.is_ok() {}
    }
}

/// How much an artifact store keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArtifactLimits {
    /// The most artifacts kept.
    pub max_count: usize,
    /// The most bytes of artifacts kept.
    pub max_bytes: usize,
    /// How long an artifact is kept.
    pub max_age: Duration,
}

impl Default for ArtifactLimits {
    /// 256 artifacts, 64 MiB, one hour.
    fn default() -> Self {
        Self {
            max_count: 256,
            max_bytes: 64 << 20,
            max_age: Duration::from_secs(3600),
        }
    }
}

impl ArtifactLimits {
    /// Keeps at most `count` artifacts.
    #[must_use]
    pub fn with_max_count(mut self, count: usize) -> Self {
        self.max_count = count.max(1);
        self
    }

    /// Keeps at most `bytes` bytes of artifacts.
    #[must_use]
    pub fn with_max_bytes(mut self, bytes: usize) -> Self {
        self.max_bytes = bytes;
        self
    }

    /// Keeps each artifact at most `age`.
    #[must_use]
    pub fn with_max_age(mut self, age: Duration) -> Self {
        self.max_age = age;
        self
    }
}

impl ArtifactLimits {
    /// Refuses a single artifact larger than the whole store may hold.
    fn check_size(&self, content: &str) -> Result<(), ArtifactError> {
        if content.len() > self.max_bytes {
            return Err(ArtifactError::new(format!(
                "an output of {} bytes is over the store's limit of {} bytes",
                content.len(),
                self.max_bytes
            )));
        }
        Ok(())
    }
}

/// What an artifact id hashes first: ids of other things (or of a later format) never equal
/// an artifact id of this one.
const ID_DOMAIN: &[u8] = b"tool-runtime artifact id v1\0";

/// What a session directory's name hashes first (see [`DirectoryArtifacts`]).
const SESSION_DIR_DOMAIN: &[u8] = b"tool-runtime artifact session dir v1\0";

/// The hex digits of an id after `art-`: 128 bits, short enough for a model to copy.
const ID_HEX_DIGITS: usize = 32;

/// The id of `content` stored for `session`: `art-` and the first 128 bits, in lowercase hex,
/// of the SHA-256 of `tool-runtime artifact id v1\0`, the session's length in bytes as a
/// big-endian `u64`, the session, and the content. The same output keeps the same id within a
/// session, ids differ between sessions, and two outputs with one id cannot be made: tool
/// output is shaped by the model, and a collision would let `read_artifact` answer one
/// output's id with another's content.
pub(crate) fn artifact_id(session: &str, content: &str) -> String {
    format!("art-{}", digest_prefix(ID_DOMAIN, session, content))
}

/// 128 bits of SHA-256 over `domain`, the length-prefixed `session` and `content`, as hex.
fn digest_prefix(domain: &[u8], session: &str, content: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(domain);
    hasher.update((session.len() as u64).to_be_bytes());
    hasher.update(session.as_bytes());
    hasher.update(content.as_bytes());
    crate::hex::encode(&hasher.finalize()[..ID_HEX_DIGITS / 2])
}

/// Whether `id` has the form of an artifact id (anything else is no artifact of ours).
fn is_artifact_id(id: &str) -> bool {
    id.strip_prefix("art-").is_some_and(|hex| {
        hex.len() == ID_HEX_DIGITS
            && hex
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
    })
}

/// The refusal of an output whose id is already another output's: never stored, so the id
/// keeps answering the content it was given for.
fn collision(id: &str) -> ArtifactError {
    ArtifactError::new(format!(
        "another output is stored under the id {id}; this one is not kept"
    ))
}

/// Artifacts in memory, within [`ArtifactLimits`] (the oldest dropped first).
#[derive(Debug)]
pub struct MemoryArtifacts {
    limits: ArtifactLimits,
    state: Mutex<Kept>,
}

/// The artifacts kept, and the order they came in (oldest first).
#[derive(Debug, Default)]
struct Kept {
    by_key: HashMap<(String, String), (Arc<str>, Instant)>,
    order: VecDeque<(String, String)>,
    bytes: usize,
}

impl MemoryArtifacts {
    /// A store that keeps the `count` most recent artifacts (and the default bytes and age).
    pub fn new(count: usize) -> Self {
        Self::with_limits(ArtifactLimits::default().with_max_count(count))
    }

    /// A store within `limits`.
    pub fn with_limits(limits: ArtifactLimits) -> Self {
        Self {
            limits,
            state: Mutex::new(Kept::default()),
        }
    }
}

impl Default for MemoryArtifacts {
    fn default() -> Self {
        Self::with_limits(ArtifactLimits::default())
    }
}

impl Kept {
    fn remove_oldest(&mut self) {
        if let Some(key) = self.order.pop_front()
            && let Some((content, _)) = self.by_key.remove(&key)
        {
            self.bytes -= content.len();
        }
    }
}

impl ArtifactStore for MemoryArtifacts {
    fn put(&self, session: &str, content: &str) -> Result<String, ArtifactError> {
        let id = artifact_id(session, content);
        self.limits.check_size(content)?;
        let mut kept = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (session.to_owned(), id.clone());
        match kept.by_key.get(&key) {
            Some((stored, _)) if **stored != *content => return Err(collision(&id)),
            Some(_) => {}
            None => {
                kept.bytes += content.len();
                kept.order.push_back(key.clone());
                kept.by_key
                    .insert(key, (Arc::from(content), Instant::now()));
            }
        }
        while kept.order.len() > self.limits.max_count || kept.bytes > self.limits.max_bytes {
            kept.remove_oldest();
        }
        Ok(id)
    }

    fn blocks(&self) -> bool {
        false
    }

    fn id_for(&self, session: &str, content: &str) -> Option<String> {
        self.limits
            .check_size(content)
            .is_ok()
            .then(|| artifact_id(session, content))
    }

    fn get(&self, session: &str, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
        let mut kept = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        // Expired artifacts are the oldest: drop them from the front.
        while let Some(oldest) = kept.order.front()
            && kept
                .by_key
                .get(oldest)
                .is_none_or(|(_, stored)| stored.elapsed() > self.limits.max_age)
        {
            kept.remove_oldest();
        }
        Ok(kept
            .by_key
            .get(&(session.to_owned(), id.to_owned()))
            .map(|(content, _)| Arc::clone(content)))
    }
}

/// Artifacts as files in a directory (`<dir>/s-<session digest>/<id>.txt`), shared by the
/// processes that use it, within [`ArtifactLimits`]: each store keeps its bounds on every write,
/// removing the oldest files first.
///
/// A file's name is its id, and its id is a digest of its session and content: `get` answers
/// a file only when its content is what the id was made from (a file changed or cut short on
/// disk reads as no artifact), and `put` refuses an output whose id names a file that holds
/// another output. A file is written whole (to a temporary name, then renamed), so a reader in
/// another process never sees half of it.
///
/// `put` and `get` do file I/O: the runtime calls them on the blocking pool
/// ([`ArtifactStore::blocks`]), not on the task that runs the turn; a long error's text is
/// stored there without the turn waiting ([`ArtifactStore::id_for`]).
#[derive(Debug, Clone)]
pub struct DirectoryArtifacts {
    dir: PathBuf,
    limits: ArtifactLimits,
}

impl DirectoryArtifacts {
    /// A store in `dir`, created when missing, with the default limits.
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, ArtifactError> {
        Self::with_limits(dir, ArtifactLimits::default())
    }

    /// A store in `dir` within `limits`.
    pub fn with_limits(
        dir: impl Into<PathBuf>,
        limits: ArtifactLimits,
    ) -> Result<Self, ArtifactError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Self { dir, limits })
    }

    /// The file of `id` for `session`; `None` for an id that is not one of ours (anything
    /// else could name a path outside the directory). The session's directory is named by a
    /// digest of the session (domain-separated from ids), so sessions never share one.
    fn path(&self, session: &str, id: &str) -> Option<PathBuf> {
        let session_dir = format!("s-{}", digest_prefix(SESSION_DIR_DOMAIN, "", session));
        is_artifact_id(id).then(|| self.dir.join(session_dir).join(format!("{id}.txt")))
    }

    /// The content of the file at `path` when it is the content `id` was made from for
    /// `session`; `None` for no file, or a file that holds anything else.
    fn read_checked(
        path: &std::path::Path,
        session: &str,
        id: &str,
    ) -> Result<Option<String>, ArtifactError> {
        match std::fs::read(path) {
            Ok(bytes) => Ok(String::from_utf8(bytes)
                .ok()
                .filter(|content| artifact_id(session, content) == id)),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error.into()),
        }
    }

    /// Removes expired files, then the oldest until the store is within its count and bytes.
    fn keep_bounds(&self) -> Result<(), ArtifactError> {
        let mut files = Vec::new();
        for session in std::fs::read_dir(&self.dir)? {
            let session = session?.path();
            if !session.is_dir() {
                continue;
            }
            for file in std::fs::read_dir(&session)? {
                let file = file?;
                let metadata = file.metadata()?;
                let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                let bytes = usize::try_from(metadata.len()).unwrap_or(usize::MAX);
                files.push((modified, bytes, file.path()));
            }
        }
        files.sort();
        let now = SystemTime::now();
        let mut count = files.len();
        let mut bytes: usize = files.iter().map(|(_, bytes, _)| bytes).sum();
        for (modified, size, path) in files {
            let expired = now
                .duration_since(modified)
                .is_ok_and(|age| age > self.limits.max_age);
            if !expired && count <= self.limits.max_count && bytes <= self.limits.max_bytes {
                break;
            }
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                // Another process removed it first.
                Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(error.into()),
            }
            count -= 1;
            bytes = bytes.saturating_sub(size);
        }
        Ok(())
    }
}

impl ArtifactStore for DirectoryArtifacts {
    fn put(&self, session: &str, content: &str) -> Result<String, ArtifactError> {
        let id = artifact_id(session, content);
        self.limits.check_size(content)?;
        if let Some(path) = self.path(session, &id) {
            match Self::read_checked(&path, session, &id)? {
                Some(stored) if stored != content => return Err(collision(&id)),
                _ => {}
            }
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)?;
            }
            // Whole or not at all: a reader never sees a file being written.
            let partial = path.with_extension(format!("part-{}", crate::hex::random_token()));
            let written =
                std::fs::write(&partial, content).and_then(|()| std::fs::rename(&partial, &path));
            if let Err(error) = written {
                let _ = std::fs::remove_file(&partial);
                return Err(error.into());
            }
        }
        self.keep_bounds()?;
        Ok(id)
    }

    fn get(&self, session: &str, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
        let Some(path) = self.path(session, id) else {
            return Ok(None);
        };
        let expired = std::fs::metadata(&path)
            .ok()
            .and_then(|metadata| metadata.modified().ok())
            .and_then(|modified| SystemTime::now().duration_since(modified).ok())
            .is_some_and(|age| age > self.limits.max_age);
        if expired {
            return Ok(None);
        }
        Ok(Self::read_checked(&path, session, id)?.map(Arc::from))
    }

    fn blocks(&self) -> bool {
        true
    }

    fn id_for(&self, session: &str, content: &str) -> Option<String> {
        self.limits
            .check_size(content)
            .is_ok()
            .then(|| artifact_id(session, content))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!(
            "tool-runtime-artifacts-{name}-{}",
            std::process::id()
        ))
    }

    /// The id as the documentation defines it, computed here independently.
    fn documented_id(session: &str, content: &str) -> String {
        use sha2::{Digest, Sha256};
        let mut hasher = Sha256::new();
        hasher.update(b"tool-runtime artifact id v1\0");
        hasher.update((session.len() as u64).to_be_bytes());
        hasher.update(session.as_bytes());
        hasher.update(content.as_bytes());
        format!("art-{}", crate::hex::encode(&hasher.finalize()[..16]))
    }

    #[test]
    fn ids_are_a_sha256_prefix_of_the_length_prefixed_session_and_content() {
        for (session, content) in [("s-1", "hello"), ("", ""), ("s-2", "é\n{}")] {
            assert_eq!(
                artifact_id(session, content),
                documented_id(session, content)
            );
        }
        // The session's length is part of the input: where it ends is not ambiguous.
        assert_ne!(artifact_id("ab", "c"), artifact_id("a", "bc"));
        // One byte apart, the ids are unrelated (a collision-resistant hash, not FNV).
        let (first, second) = (
            artifact_id("s-1", "output 0"),
            artifact_id("s-1", "output 1"),
        );
        let differing = first
            .bytes()
            .zip(second.bytes())
            .filter(|(a, b)| a != b)
            .count();
        assert!(differing >= 20, "{first} and {second}");
        assert_eq!(first.len(), "art-".len() + 32, "128 bits, in hex");
        // Each store answers exactly the content put under that id, for that session.
        let dir = temp_dir("exact");
        let _ = std::fs::remove_dir_all(&dir);
        let Ok(directory) = DirectoryArtifacts::new(&dir) else {
            panic!("temp dir");
        };
        let memory = MemoryArtifacts::default();
        for store in [&memory as &dyn ArtifactStore, &directory] {
            let ids: Vec<String> = ["output 0", "output 1"]
                .iter()
                .filter_map(|content| store.put("s-1", content).ok())
                .collect();
            assert_eq!(ids, [first.clone(), second.clone()]);
            assert_eq!(
                store.get("s-1", &first).ok().flatten().as_deref(),
                Some("output 0")
            );
            assert_eq!(
                store.get("s-1", &second).ok().flatten().as_deref(),
                Some("output 1")
            );
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn no_store_answers_an_id_with_another_content() {
        let id = artifact_id("s-1", "the real output");
        // The memory store: an output whose id is taken by another content is refused (as a
        // digest collision would be), and the id keeps its content.
        let memory = MemoryArtifacts::default();
        {
            let mut kept = memory.state.lock().expect("not poisoned");
            kept.order.push_back(("s-1".to_owned(), id.clone()));
            kept.by_key.insert(
                ("s-1".to_owned(), id.clone()),
                (Arc::from("another output"), Instant::now()),
            );
        }
        assert!(memory.put("s-1", "the real output").is_err());
        assert_eq!(
            memory.get("s-1", &id).ok().flatten().as_deref(),
            Some("another output")
        );
        // The directory store: a file under the id that holds anything but the content the id
        // was made from (replaced, or cut short) reads as no artifact; putting the output
        // writes it whole.
        let dir = temp_dir("replaced");
        let _ = std::fs::remove_dir_all(&dir);
        let Ok(directory) = DirectoryArtifacts::new(&dir) else {
            panic!("temp dir");
        };
        let Some(path) = directory.path("s-1", &id) else {
            panic!("an id of ours");
        };
        std::fs::create_dir_all(path.parent().expect("a session dir")).expect("dir");
        for planted in ["another output", "the real out"] {
            std::fs::write(&path, planted).expect("write");
            assert_eq!(directory.get("s-1", &id).ok().flatten(), None, "{planted}");
        }
        assert_eq!(
            directory.put("s-1", "the real output").ok(),
            Some(id.clone())
        );
        assert_eq!(
            directory.get("s-1", &id).ok().flatten().as_deref(),
            Some("the real output")
        );
        // Another session's directory is another name, whatever the session ids.
        assert_ne!(directory.path("s-1", &id), directory.path("s-2", &id));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn ids_are_stable_per_session_and_differ_between_sessions() {
        assert_eq!(artifact_id("s-1", "hello"), artifact_id("s-1", "hello"));
        assert_ne!(artifact_id("s-1", "hello"), artifact_id("s-1", "hello!"));
        assert_ne!(artifact_id("s-1", "hello"), artifact_id("s-2", "hello"));
    }

    #[test]
    fn an_artifact_is_read_only_from_its_session() {
        let memory = MemoryArtifacts::default();
        let dir = temp_dir("sessions");
        let Ok(directory) = DirectoryArtifacts::new(&dir) else {
            panic!("temp dir");
        };
        for store in [&memory as &dyn ArtifactStore, &directory] {
            let Ok(id) = store.put("s-1", "full output") else {
                panic!("put");
            };
            assert_eq!(
                store.get("s-1", &id).ok().flatten().as_deref(),
                Some("full output")
            );
            assert_eq!(store.get("s-2", &id).ok().flatten(), None);
            assert_eq!(store.get("s-1", "../../etc/passwd").ok().flatten(), None);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_memory_store_is_bounded_in_count_bytes_and_age() {
        let store = MemoryArtifacts::new(2);
        let ids: Vec<String> = ["a", "b", "c"]
            .iter()
            .filter_map(|content| store.put("s", content).ok())
            .collect();
        assert_eq!(store.get("s", &ids[0]).ok().flatten(), None);
        assert_eq!(store.get("s", &ids[2]).ok().flatten().as_deref(), Some("c"));

        let store = MemoryArtifacts::with_limits(ArtifactLimits::default().with_max_bytes(10));
        let first = store.put("s", "12345678").ok();
        let second = store.put("s", "abcdef").ok();
        let get = |id: &Option<String>| {
            id.as_deref()
                .and_then(|id| store.get("s", id).ok().flatten())
        };
        assert_eq!(get(&first), None);
        assert_eq!(get(&second).as_deref(), Some("abcdef"));
        assert!(store.put("s", &"x".repeat(11)).is_err());

        let store =
            MemoryArtifacts::with_limits(ArtifactLimits::default().with_max_age(Duration::ZERO));
        let id = store.put("s", "gone soon").ok();
        std::thread::sleep(Duration::from_millis(2));
        assert_eq!(
            id.as_deref()
                .and_then(|id| store.get("s", id).ok().flatten()),
            None
        );
    }

    /// A store whose `put` waits to be released.
    #[derive(Debug)]
    struct Held {
        inner: MemoryArtifacts,
        release: Mutex<std::sync::mpsc::Receiver<()>>,
    }

    impl ArtifactStore for Held {
        fn put(&self, session: &str, content: &str) -> Result<String, ArtifactError> {
            let _ = self.release.lock().expect("not poisoned").recv();
            self.inner.put(session, content)
        }

        fn get(&self, session: &str, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
            self.inner.get(session, id)
        }
    }

    #[tokio::test]
    async fn a_read_waits_for_the_put_of_its_id_in_flight() {
        let (release, released) = std::sync::mpsc::channel();
        let store: Arc<dyn ArtifactStore> = Arc::new(Held {
            inner: MemoryArtifacts::default(),
            release: Mutex::new(released),
        });
        let other: Arc<dyn ArtifactStore> = Arc::new(MemoryArtifacts::default());
        let id = artifact_id("s-1", "the whole error");
        put_behind(
            &tokio::runtime::Handle::current(),
            &store,
            "s-1",
            "the whole error",
            &id,
        );
        let mut wait = std::pin::pin!(wait_for_puts(&store, "s-1", &id));
        assert!(
            futures::poll!(wait.as_mut()).is_pending(),
            "the put is held"
        );
        // Another id, session or store is not held up by it.
        for (store, session, id) in [
            (&store, "s-1", "art-0"),
            (&store, "s-2", id.as_str()),
            (&other, "s-1", id.as_str()),
        ] {
            let wait = std::pin::pin!(wait_for_puts(store, session, id));
            assert!(futures::poll!(wait).is_ready(), "{session} {id}");
        }
        release.send(()).expect("the put waits");
        wait.await;
        assert_eq!(
            store.get("s-1", &id).ok().flatten().as_deref(),
            Some("the whole error")
        );
        assert!(
            !writing().iter().any(|write| write.id == id),
            "the write that ended is forgotten"
        );
    }

    #[test]
    fn the_stores_name_their_ids_before_storing_within_their_limits() {
        let small = ArtifactLimits::default().with_max_bytes(10);
        let dir = temp_dir("id-for");
        let Ok(directory) = DirectoryArtifacts::with_limits(&dir, small) else {
            panic!("temp dir");
        };
        let memory = MemoryArtifacts::with_limits(small);
        for store in [&memory as &dyn ArtifactStore, &directory] {
            assert_eq!(
                store.id_for("s-1", "short"),
                Some(artifact_id("s-1", "short"))
            );
            assert_eq!(
                store.id_for("s-1", "short").ok_or(()),
                store.put("s-1", "short").map_err(|_| ())
            );
            // Over the limit, `put` refuses it: no id is promised.
            assert_eq!(store.id_for("s-1", "far too long"), None);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn the_directory_store_is_bounded_in_count_and_bytes() {
        let dir = temp_dir("bounds");
        let _ = std::fs::remove_dir_all(&dir);
        let limits = ArtifactLimits::default()
            .with_max_count(3)
            .with_max_bytes(1_000);
        let Ok(store) = DirectoryArtifacts::with_limits(&dir, limits) else {
            panic!("temp dir");
        };
        for n in 0..10 {
            let _ = store.put(&format!("s-{}", n % 2), &format!("output {n}"));
            std::thread::sleep(Duration::from_millis(5));
        }
        let files: usize = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|session| std::fs::read_dir(session.path()).ok())
            .map(Iterator::count)
            .sum();
        assert_eq!(files, 3);
        let _ = std::fs::remove_dir_all(dir);
    }
}
