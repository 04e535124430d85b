//! Where the full output of a cut result is kept, so the model can read the rest.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

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

/// Keeps full outputs under stable ids.
pub trait ArtifactStore: Send + Sync + fmt::Debug {
    /// Stores `content` and returns its id.
    fn put(&self, content: &str) -> Result<String, ArtifactError>;
    /// The content stored under `id`, when there is one.
    fn get(&self, id: &str) -> Result<Option<Arc<str>>, ArtifactError>;
}

/// The id of `content`: `art-` and 16 hex digits of its FNV-1a hash, so the same output keeps
/// the same id across runs and processes.
pub(crate) fn artifact_id(content: &str) -> String {
    let hash = content
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325_u64, |hash, byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    format!("art-{hash:016x}")
}

/// Artifacts in memory, the oldest dropped past a capacity.
#[derive(Debug)]
pub struct MemoryArtifacts {
    capacity: usize,
    state: Mutex<Recent>,
}

/// The artifacts kept, and the order they came in (oldest first).
#[derive(Debug, Default)]
struct Recent {
    by_id: HashMap<String, Arc<str>>,
    order: VecDeque<String>,
}

impl MemoryArtifacts {
    /// A store that keeps the `capacity` most recent artifacts.
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            state: Mutex::new(Recent::default()),
        }
    }
}

impl Default for MemoryArtifacts {
    fn default() -> Self {
        Self::new(256)
    }
}

impl ArtifactStore for MemoryArtifacts {
    fn put(&self, content: &str) -> Result<String, ArtifactError> {
        let id = artifact_id(content);
        let mut state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Recent { by_id, order } = &mut *state;
        if by_id.insert(id.clone(), Arc::from(content)).is_none() {
            order.push_back(id.clone());
        }
        while order.len() > self.capacity {
            if let Some(oldest) = order.pop_front() {
                by_id.remove(&oldest);
            }
        }
        Ok(id)
    }

    fn get(&self, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
        let state = self
            .state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Ok(state.by_id.get(id).cloned())
    }
}

/// Artifacts as files in a directory (`<dir>/<id>.txt`), shared by the processes that use it.
#[derive(Debug, Clone)]
pub struct DirectoryArtifacts {
    dir: PathBuf,
}

impl DirectoryArtifacts {
    /// A store in `dir`, created when missing.
    pub fn new(dir: impl Into<PathBuf>) -> Result<Self, ArtifactError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Self { dir })
    }

    fn path(&self, id: &str) -> Option<PathBuf> {
        // Ids are ours (`art-` and hex); anything else could name a path outside the directory.
        let valid = id
            .strip_prefix("art-")
            .is_some_and(|hex| hex.len() == 16 && hex.bytes().all(|byte| byte.is_ascii_hexdigit()));
        valid.then(|| self.dir.join(format!("{id}.txt")))
    }
}

impl ArtifactStore for DirectoryArtifacts {
    fn put(&self, content: &str) -> Result<String, ArtifactError> {
        let id = artifact_id(content);
        if let Some(path) = self.path(&id) {
            std::fs::write(path, content)?;
        }
        Ok(id)
    }

    fn get(&self, id: &str) -> Result<Option<Arc<str>>, ArtifactError> {
        let Some(path) = self.path(id) else {
            return Ok(None);
        };
        match std::fs::read_to_string(path) {
            Ok(content) => Ok(Some(Arc::from(content))),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(error.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_stable_and_content_addressed() {
        assert_eq!(artifact_id("hello"), "art-a430d84680aabd0b");
        assert_ne!(artifact_id("hello"), artifact_id("hello!"));
    }

    #[test]
    fn memory_store_drops_the_oldest() {
        let store = MemoryArtifacts::new(2);
        let ids: Vec<String> = ["a", "b", "c"]
            .iter()
            .filter_map(|content| store.put(content).ok())
            .collect();
        assert_eq!(store.get(&ids[0]).ok().flatten(), None);
        assert_eq!(store.get(&ids[2]).ok().flatten().as_deref(), Some("c"));
    }

    #[test]
    fn directory_store_round_trips_and_refuses_foreign_ids() {
        let dir =
            std::env::temp_dir().join(format!("tool-runtime-artifacts-{}", std::process::id()));
        let Ok(store) = DirectoryArtifacts::new(&dir) else {
            panic!("temp dir");
        };
        let id = store.put("full output").ok();
        let read = id.as_deref().and_then(|id| store.get(id).ok().flatten());
        assert_eq!(read.as_deref(), Some("full output"));
        assert_eq!(store.get("../../etc/passwd").ok().flatten(), None);
        let _ = std::fs::remove_dir_all(dir);
    }
}
