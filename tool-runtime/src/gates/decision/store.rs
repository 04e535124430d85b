//! Where calls wait for a person's decision: the [`PendingApproval`], the [`ApprovalStore`]
//! that keeps it until its decision consumes it once, and the in-memory store.

use std::collections::VecDeque;
use std::io;
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tool_core::{BoxFuture, RiskLevel};

use crate::gates::approval::Preview;

/// A call waiting for a person's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingApproval {
    /// The request's id, given to the model in the `approval_pending` observation.
    pub request_id: String,
    /// The session.
    pub session: String,
    /// The principal acting in the session.
    pub principal: Option<String>,
    /// The call's id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The tool's version.
    pub version: Option<String>,
    /// The validated arguments, secrets redacted: what a person deciding sees (as in an
    /// [`ApprovalRequest`](crate::approvals::ApprovalRequest)). An edit made from them keeps the secrets
    /// it leaves as shown.
    pub arguments: Value,
    /// The validated arguments as they will run, sealed: only a runtime with the same
    /// [`DecisionKeys`] opens them, for this request only. The store never holds a secret of
    /// them in clear.
    ///
    /// [`DecisionKeys`]: super::DecisionKeys
    pub sealed_arguments: SealedArguments,
    /// SHA-256 (hex) of the canonical arguments.
    pub arguments_digest: String,
    /// Why the policy asked.
    pub reason: String,
    /// The tool's risk level.
    pub risk: RiskLevel,
    /// What the call will do.
    pub preview: Option<Preview>,
    /// The idempotency key the caller gave the call, which it runs under when resumed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

/// Where pending approvals wait, and where a decision is consumed once.
pub trait ApprovalStore: Send + Sync + 'static {
    /// Keeps a pending request.
    fn put(&self, pending: PendingApproval) -> BoxFuture<'_, io::Result<()>>;
    /// The session's pending requests, oldest first.
    fn pending<'a>(&'a self, session: &'a str) -> BoxFuture<'a, io::Result<Vec<PendingApproval>>>;
    /// Removes and returns the pending request: only the first caller gets it, so a decision
    /// is consumed once.
    fn take<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
    ) -> BoxFuture<'a, io::Result<Option<PendingApproval>>>;
}

// A shared store is a store: runtimes that resume each other's calls pass clones of one `Arc`.
impl<T: ApprovalStore + ?Sized> ApprovalStore for std::sync::Arc<T> {
    fn put(&self, pending: PendingApproval) -> BoxFuture<'_, io::Result<()>> {
        (**self).put(pending)
    }

    fn pending<'a>(&'a self, session: &'a str) -> BoxFuture<'a, io::Result<Vec<PendingApproval>>> {
        (**self).pending(session)
    }

    fn take<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
    ) -> BoxFuture<'a, io::Result<Option<PendingApproval>>> {
        (**self).take(session, request_id)
    }
}

/// Pending approvals in memory (bounded).
///
/// Holds at most [`capacity`](Self::with_capacity) requests (10,000 by default); putting one
/// more evicts the oldest, whose decision then finds nothing to resume. Every operation holds
/// one lock, so a request is taken once even when decisions race. A request is found only
/// through its own session. Lookups scan the requests kept (linear in their number).
///
/// The store lives in one process; runtimes in several processes need a shared
/// [`ApprovalStore`] whose `take` is atomic across them.
#[derive(Debug)]
pub struct MemoryApprovalStore {
    capacity: usize,
    requests: Mutex<VecDeque<PendingApproval>>,
}

impl MemoryApprovalStore {
    /// How many pending requests [`default`](Self::default) keeps.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    /// A store keeping at most [`DEFAULT_CAPACITY`](Self::DEFAULT_CAPACITY) requests.
    pub fn new() -> Self {
        Self::with_capacity(Self::DEFAULT_CAPACITY)
    }

    /// A store keeping at most `capacity` requests (at least one).
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            capacity: capacity.max(1),
            requests: Mutex::new(VecDeque::new()),
        }
    }

    /// How many requests are pending, across sessions.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no request is pending.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<PendingApproval>> {
        // Every operation leaves the queue whole, so a panic elsewhere does not spoil it.
        self.requests.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryApprovalStore {
    fn default() -> Self {
        Self::new()
    }
}

impl ApprovalStore for MemoryApprovalStore {
    fn put(&self, pending: PendingApproval) -> BoxFuture<'_, io::Result<()>> {
        Box::pin(std::future::ready(MemoryApprovalStore::put(self, pending)))
    }

    fn pending<'a>(&'a self, session: &'a str) -> BoxFuture<'a, io::Result<Vec<PendingApproval>>> {
        Box::pin(std::future::ready(Ok(MemoryApprovalStore::pending(
            self, session,
        ))))
    }

    fn take<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
    ) -> BoxFuture<'a, io::Result<Option<PendingApproval>>> {
        Box::pin(std::future::ready(Ok(MemoryApprovalStore::take(
            self, session, request_id,
        ))))
    }
}

impl MemoryApprovalStore {
    /// Keeps `pending`, evicting the oldest request when full. A request id already pending
    /// in the same session is refused (`AlreadyExists`): one id, one call.
    pub fn put(&self, pending: PendingApproval) -> io::Result<()> {
        let mut requests = self.lock();
        if requests
            .iter()
            .any(|kept| kept.session == pending.session && kept.request_id == pending.request_id)
        {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "approval request `{}` is already pending",
                    pending.request_id
                ),
            ));
        }
        while requests.len() >= self.capacity {
            if let Some(evicted) = requests.pop_front() {
                tracing::warn!(
                    session = %evicted.session,
                    request_id = %evicted.request_id,
                    capacity = self.capacity,
                    "approval store full: the oldest pending request was dropped"
                );
            }
        }
        requests.push_back(pending);
        Ok(())
    }

    /// The session's pending requests, oldest first.
    pub fn pending(&self, session: &str) -> Vec<PendingApproval> {
        self.lock()
            .iter()
            .filter(|kept| kept.session == session)
            .cloned()
            .collect()
    }

    /// Removes and returns the pending request: only the first caller gets it.
    pub fn take(&self, session: &str, request_id: &str) -> Option<PendingApproval> {
        let mut requests = self.lock();
        let index = requests
            .iter()
            .position(|kept| kept.session == session && kept.request_id == request_id)?;
        requests.remove(index)
    }
}

/// The arguments of a pending call, sealed: opaque text only a runtime holding the same
/// [`DecisionKeys`](crate::approvals::DecisionKeys) can open, and only for the request it was sealed for.
///
/// `Debug` shows its length, never its content.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SealedArguments(String);

impl std::fmt::Debug for SealedArguments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedArguments({} chars)", self.0.len())
    }
}

impl SealedArguments {
    /// The sealed text, as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The sealed text read back from a store of one's own: it opens only if it is what the
/// runtime sealed.
impl From<String> for SealedArguments {
    fn from(text: String) -> Self {
        Self(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arguments::digest::arguments_digest;
    use serde_json::json;

    fn pending(session: &str, request_id: &str) -> PendingApproval {
        let arguments = json!({"amount": 20});
        PendingApproval {
            request_id: request_id.into(),
            session: session.into(),
            principal: Some("ada".into()),
            call_id: format!("call-{request_id}"),
            tool: "refund".into(),
            version: None,
            arguments_digest: arguments_digest(&arguments),
            sealed_arguments: SealedArguments::from("v1.sealed".to_owned()),
            arguments,
            reason: "refunds need a person".into(),
            risk: RiskLevel::Write,
            preview: Some(Preview::new("Refund 20")),
            idempotency_key: None,
        }
    }

    fn ids(requests: &[PendingApproval]) -> Vec<&str> {
        requests
            .iter()
            .map(|kept| kept.request_id.as_str())
            .collect()
    }

    #[test]
    fn store_keeps_sessions_apart_and_orders_oldest_first() {
        let store = MemoryApprovalStore::default();
        for (session, id) in [("s-1", "r-1"), ("s-2", "r-2"), ("s-1", "r-3")] {
            store.put(pending(session, id)).expect("kept");
        }
        assert_eq!(ids(&store.pending("s-1")), ["r-1", "r-3"]);
        assert_eq!(ids(&store.pending("s-2")), ["r-2"]);
        assert!(store.pending("s-3").is_empty());
        assert_eq!(store.take("s-2", "r-1"), None, "another session's request");
        assert_eq!(store.take("s-1", "r-1"), Some(pending("s-1", "r-1")));
        assert_eq!(store.take("s-1", "r-1"), None, "consumed once");
        assert_eq!(ids(&store.pending("s-1")), ["r-3"]);
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn store_refuses_a_pending_id_twice() {
        let store = MemoryApprovalStore::new();
        store.put(pending("s-1", "r-1")).expect("kept");
        let error = store.put(pending("s-1", "r-1")).expect_err("duplicate");
        assert_eq!(error.kind(), io::ErrorKind::AlreadyExists);
        store.put(pending("s-2", "r-1")).expect("another session");
    }

    #[test]
    fn store_evicts_the_oldest_when_full() {
        let store = MemoryApprovalStore::with_capacity(3);
        for index in 0..5 {
            store
                .put(pending("s-1", &format!("r-{index}")))
                .expect("kept");
        }
        assert_eq!(ids(&store.pending("s-1")), ["r-2", "r-3", "r-4"]);
        assert_eq!(store.take("s-1", "r-0"), None);
        assert_eq!(MemoryApprovalStore::default().capacity, 10_000);
        let tiny = MemoryApprovalStore::with_capacity(0);
        tiny.put(pending("s-1", "r-1")).expect("kept");
        tiny.put(pending("s-1", "r-2")).expect("kept");
        assert_eq!(ids(&tiny.pending("s-1")), ["r-2"]);
    }

    #[test]
    fn store_take_is_once_under_races() {
        let store = std::sync::Arc::new(MemoryApprovalStore::new());
        // The inherent (sync) methods: an `Arc` of a store is itself an (async) store.
        MemoryApprovalStore::put(&store, pending("s-1", "r-1")).expect("kept");
        let winners: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..16)
                .map(|_| {
                    let store = std::sync::Arc::clone(&store);
                    scope.spawn(move || {
                        usize::from(MemoryApprovalStore::take(&store, "s-1", "r-1").is_some())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().unwrap_or(0))
                .sum()
        });
        assert_eq!(winners, 1);
    }
}
