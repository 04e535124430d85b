//! What every [`ApprovalStore`] does: pending requests kept whole, listed oldest first within
//! their session, one per id and session, taken once (by one of several racing takers).
//!
//! Each scenario takes the [`Stores`] under test: the store and another handle on the same
//! requests (another process's connection). [`approval_store_scenarios!`](crate::approval_store_scenarios)
//! runs them all.

use std::io;
use std::sync::Arc;

use serde_json::json;
use tool_runtime::RiskLevel;
use tool_runtime::approvals::{ApprovalStore, MemoryApprovalStore, PendingApproval, Preview};

use crate::redis_server::RedisServer;
use crate::redis_view::connect;

/// A store under test and another handle on its requests.
pub struct Stores {
    store: Arc<dyn ApprovalStore>,
    another: Arc<dyn ApprovalStore>,
    /// Kept alive for the test.
    _server: Option<RedisServer>,
}

impl Stores {
    /// A [`MemoryApprovalStore`] (its default capacity); the other handle is the same store,
    /// as another runtime of the process would share it.
    pub async fn memory() -> Self {
        let store: Arc<dyn ApprovalStore> = Arc::new(MemoryApprovalStore::default());
        Self {
            another: Arc::clone(&store),
            store,
            _server: None,
        }
    }

    /// A `RedisStore` on a `redis-server` of its own; the other handle is a store of its own
    /// connection, as another process has.
    pub async fn redis() -> Self {
        let server = RedisServer::start();
        let store: Arc<dyn ApprovalStore> = Arc::new(connect(&server).await);
        let another: Arc<dyn ApprovalStore> = Arc::new(connect(&server).await);
        Self {
            store,
            another,
            _server: Some(server),
        }
    }

    /// The store under test.
    pub fn store(&self) -> &Arc<dyn ApprovalStore> {
        &self.store
    }

    /// Another handle on the same requests.
    pub fn another(&self) -> &Arc<dyn ApprovalStore> {
        &self.another
    }
}

/// Runs every scenario of this module against one store: one test each, named after it.
///
/// ```text
/// mod memory {
///     tests::approval_store_scenarios!(
///         #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
///         tests::conformance::approval::Stores::memory()
///     );
/// }
/// ```
#[macro_export]
macro_rules! approval_store_scenarios {
    (#[$test:meta] $stores:expr) => {
        $crate::approval_store_scenarios!(@each #[$test] $stores;
            requests_are_kept_whole_and_listed_oldest_first_in_their_session,
            a_request_id_is_pending_once_in_its_session,
            a_request_is_taken_once_and_only_from_its_session,
            concurrent_takes_give_a_request_to_exactly_one,
        );
    };
    (@each #[$test:meta] $stores:expr; $($scenario:ident),* $(,)?) => {
        $(
            #[$test]
            async fn $scenario() {
                let stores = $stores.await;
                $crate::conformance::approval::$scenario(&stores).await;
            }
        )*
    };
}

/// A pending refund of session `session`, every field filled in.
pub fn pending(session: &str, request_id: &str) -> PendingApproval {
    PendingApproval {
        request_id: request_id.into(),
        session: session.into(),
        principal: Some("ada".into()),
        call_id: format!("call-{request_id}"),
        tool: "refund".into(),
        version: Some("2".into()),
        arguments: json!({"order": "A-1024", "amount": 20}),
        sealed_arguments: "v1.sealed".to_owned().into(),
        arguments_digest: "digest".into(),
        reason: "refunds need a person".into(),
        risk: RiskLevel::Write,
        preview: Some(Preview::new("Refund 20 on A-1024")),
        idempotency_key: Some("req-42".into()),
    }
}

/// The ids of `requests`, in order.
pub fn ids(requests: &[PendingApproval]) -> Vec<&str> {
    requests
        .iter()
        .map(|request| request.request_id.as_str())
        .collect()
}

async fn put(store: &dyn ApprovalStore, session: &str, request_id: &str) {
    if let Err(error) = store.put(pending(session, request_id)).await {
        panic!("{session}/{request_id} not kept: {error}");
    }
}

async fn listed(store: &dyn ApprovalStore, session: &str) -> Vec<PendingApproval> {
    match store.pending(session).await {
        Ok(pending) => pending,
        Err(error) => panic!("{session} not listed: {error}"),
    }
}

async fn take(
    store: &dyn ApprovalStore,
    session: &str,
    request_id: &str,
) -> Option<PendingApproval> {
    match store.take(session, request_id).await {
        Ok(taken) => taken,
        Err(error) => panic!("{session}/{request_id}: {error}"),
    }
}

/// What is listed is what was put, field for field, in the order it arrived (not the ids'
/// order), within its own session only.
pub async fn requests_are_kept_whole_and_listed_oldest_first_in_their_session(stores: &Stores) {
    let store = &**stores.store();
    for (session, id) in [
        ("s-1", "r-b"),
        ("s-2", "r-x"),
        ("s-1", "r-a"),
        ("s-1", "r:c"),
    ] {
        put(store, session, id).await;
    }
    assert_eq!(
        listed(store, "s-1").await,
        [
            pending("s-1", "r-b"),
            pending("s-1", "r-a"),
            pending("s-1", "r:c")
        ]
    );
    assert_eq!(listed(store, "s-2").await, [pending("s-2", "r-x")]);
    assert!(listed(store, "s-3").await.is_empty());
    // Another process lists the same.
    assert_eq!(
        ids(&listed(&**stores.another(), "s-1").await),
        ["r-b", "r-a", "r:c"]
    );
}

/// A request id already pending in a session is refused there (`AlreadyExists`), and free in
/// another session.
pub async fn a_request_id_is_pending_once_in_its_session(stores: &Stores) {
    let store = &**stores.store();
    put(store, "s-1", "r-a").await;
    let duplicate = store.put(pending("s-1", "r-a")).await;
    assert_eq!(
        duplicate.as_ref().map_err(io::Error::kind).err(),
        Some(io::ErrorKind::AlreadyExists),
        "{duplicate:?}"
    );
    let again = stores.another().put(pending("s-1", "r-a")).await;
    assert_eq!(
        again.as_ref().map_err(io::Error::kind).err(),
        Some(io::ErrorKind::AlreadyExists),
        "refused through another handle too: {again:?}"
    );
    put(store, "s-2", "r-a").await;
    assert_eq!(ids(&listed(store, "s-1").await), ["r-a"]);
    assert_eq!(ids(&listed(store, "s-2").await), ["r-a"]);
}

/// `take` answers the request whole, once, only in its own session; taken, the id can be
/// pending again (a new request), and it is the newest.
pub async fn a_request_is_taken_once_and_only_from_its_session(stores: &Stores) {
    let store = &**stores.store();
    for id in ["r-b", "r-a", "r:c"] {
        put(store, "s-1", id).await;
    }
    assert_eq!(
        take(store, "s-2", "r-b").await,
        None,
        "another session's request"
    );
    assert_eq!(take(store, "s-1", "r-none").await, None, "never pending");
    assert_eq!(take(store, "s-1", "r-a").await, Some(pending("s-1", "r-a")));
    assert_eq!(take(store, "s-1", "r-a").await, None, "consumed once");
    assert_eq!(
        take(&**stores.another(), "s-1", "r-a").await,
        None,
        "consumed for another process too"
    );
    assert_eq!(ids(&listed(store, "s-1").await), ["r-b", "r:c"]);
    put(store, "s-1", "r-a").await;
    assert_eq!(ids(&listed(store, "s-1").await), ["r-b", "r:c", "r-a"]);
}

/// Two takes of one request at the same moment, through two handles: exactly one gets it.
pub async fn concurrent_takes_give_a_request_to_exactly_one(stores: &Stores) {
    for index in 0..50 {
        let id = format!("r-{index}");
        put(&**stores.store(), "s-1", &id).await;
        let racers: Vec<_> = [stores.store(), stores.another()]
            .into_iter()
            .map(|store| {
                let (store, id) = (Arc::clone(store), id.clone());
                tokio::spawn(async move { store.take("s-1", &id).await })
            })
            .collect();
        let mut taken = Vec::new();
        for racer in racers {
            taken.push(racer.await.expect("joined").expect("answers"));
        }
        let winners: Vec<PendingApproval> = taken.into_iter().flatten().collect();
        assert_eq!(
            winners,
            [pending("s-1", &id)],
            "{id}: exactly one take gets it"
        );
    }
    assert!(listed(&**stores.store(), "s-1").await.is_empty());
}
