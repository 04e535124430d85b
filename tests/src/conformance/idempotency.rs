//! What every [`IdempotencyStore`] does: claims, results, releases and their window; late
//! holders; takeovers by the call itself; abandoned claims; waits.
//!
//! Each scenario takes the [`Stores`] under test: the store, another handle on the same
//! entries (another process's connection), and what the store chose where the trait leaves a
//! choice. [`idempotency_store_scenarios!`](crate::idempotency_store_scenarios) runs them all.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use tool_runtime::idempotency::{
    Claim, Holder, IdempotencyKey, IdempotencyStore, Lookup, MemoryIdempotency, SharedFailure,
    StoredResult,
};

use crate::redis_server::RedisServer;
use crate::redis_view::connect;

/// Slack for a loaded CI machine on top of a bound the real clock measures (the paused clock
/// needs none).
const SLACK: Duration = Duration::from_millis(700);

/// A store under test, another handle on its entries, and its choices.
pub struct Stores {
    store: Arc<dyn IdempotencyStore>,
    another: Arc<dyn IdempotencyStore>,
    shares_failures: bool,
    /// Kept alive for the test.
    _server: Option<RedisServer>,
}

impl Stores {
    /// A [`MemoryIdempotency`] (its default bounds); the other handle is the same store, as
    /// another runtime of the process would share it. It shares an execution's failure with
    /// its waiters.
    pub async fn memory() -> Self {
        let store: Arc<dyn IdempotencyStore> = Arc::new(MemoryIdempotency::default());
        Self {
            another: Arc::clone(&store),
            store,
            shares_failures: true,
            _server: None,
        }
    }

    /// A `RedisStore` on a `redis-server` of its own; the other handle is a store of its own
    /// connection, as another process has. Its waiters claim the key a failed execution
    /// released.
    pub async fn redis() -> Self {
        let server = RedisServer::start();
        let store: Arc<dyn IdempotencyStore> = Arc::new(connect(&server).await);
        let another: Arc<dyn IdempotencyStore> = Arc::new(connect(&server).await);
        Self {
            store,
            another,
            shares_failures: false,
            _server: Some(server),
        }
    }

    /// The store under test.
    pub fn store(&self) -> &Arc<dyn IdempotencyStore> {
        &self.store
    }

    /// Another handle on the same entries.
    pub fn another(&self) -> &Arc<dyn IdempotencyStore> {
        &self.another
    }
}

/// Runs every scenario of this module against one store: one test each, named after it.
///
/// ```text
/// mod memory {
///     tests::idempotency_store_scenarios!(
///         #[tokio::test(start_paused = true)]
///         tests::conformance::idempotency::Stores::memory()
///     );
/// }
/// ```
#[macro_export]
macro_rules! idempotency_store_scenarios {
    (#[$test:meta] $stores:expr) => {
        $crate::idempotency_store_scenarios!(@each #[$test] $stores;
            claim_complete_then_replay,
            release_frees_the_key,
            a_late_holder_never_touches_the_next_claim,
            a_result_expires_with_the_window_of_its_first_claim,
            scopes_tools_and_digests_are_kept_apart,
            concurrent_claims_give_the_key_to_exactly_one,
            wait_sees_the_end_of_the_holding_execution,
            a_call_takes_over_its_own_claim_only_once_it_is_abandoned,
            a_claim_taken_over_lasts_as_long_as_the_call_can_run_again,
            an_abandoned_claim_is_answered_at_once_until_its_window_ends,
            abandoning_needs_the_claim_that_holds_the_key,
            a_waiter_is_told_at_once_when_the_claim_it_waits_for_is_abandoned,
        );
    };
    (@each #[$test:meta] $stores:expr; $($scenario:ident),* $(,)?) => {
        $(
            #[$test]
            async fn $scenario() {
                let stores = $stores.await;
                $crate::conformance::idempotency::$scenario(&stores).await;
            }
        )*
    };
}

/// The key of one execution, without a holder of its own (a fresh token per claim).
pub fn key(scope: &str, tool: &str, digest: &str) -> IdempotencyKey {
    IdempotencyKey {
        scope: scope.into(),
        tool: tool.into(),
        digest: digest.into(),
        arguments_digest: format!("args-{digest}"),
        holder: None,
    }
}

/// `key` claimed by the call `token`, which cannot still be running `stale_after` after its
/// claim.
pub fn own(key: IdempotencyKey, token: &str, stale_after: Duration) -> IdempotencyKey {
    IdempotencyKey {
        holder: Some(Holder {
            token: token.into(),
            stale_after,
        }),
        ..key
    }
}

/// A result with a page, as a pagination tool's.
pub fn result(output: &str) -> StoredResult {
    StoredResult {
        arguments_digest: "args".into(),
        output: output.into(),
        page: Some(r#"{"next":"2"}"#.into()),
        content_blocks: false,
    }
}

/// How the execution that released its claim failed.
pub fn failure() -> SharedFailure {
    SharedFailure {
        kind: "execution_failed".into(),
        message: "the upstream refused".into(),
    }
}

/// What `store` answers a claim of `key`.
///
/// # Panics
///
/// If the store is unavailable.
pub async fn lookup(store: &dyn IdempotencyStore, key: &IdempotencyKey, ttl: Duration) -> Lookup {
    match store.claim(key.clone(), ttl).await {
        Ok(lookup) => lookup,
        Err(error) => panic!("{error}"),
    }
}

/// The claim `store` gives for `key`.
///
/// # Panics
///
/// If the store answers anything else.
pub async fn claimed(store: &dyn IdempotencyStore, key: &IdempotencyKey, ttl: Duration) -> Claim {
    match lookup(store, key, ttl).await {
        Lookup::Claimed(claim) => claim,
        other => panic!("expected a claim of {key:?}, found {other:?}"),
    }
}

/// Claims, a second claim finds the key held, the result is kept and replayed, to another
/// handle too.
pub async fn claim_complete_then_replay(stores: &Stores) {
    let store = &**stores.store();
    let key = key("s-1", "refund", "d1");
    let ttl = Duration::from_secs(60);

    let claim = claimed(store, &key, ttl).await;
    assert!(
        claim.holder.len() == 32 && claim.holder.bytes().all(|byte| byte.is_ascii_hexdigit()),
        "128 random bits, hex: {}",
        claim.holder
    );
    assert_eq!(
        lookup(store, &key, ttl).await,
        Lookup::Pending,
        "held by the first claim"
    );
    store
        .complete(key.clone(), claim, result("\"refunded\""))
        .await
        .expect("kept");
    for _ in 0..2 {
        assert_eq!(
            lookup(store, &key, ttl).await,
            Lookup::Done(result("\"refunded\"")),
            "replayed"
        );
    }
    // Another process (another handle) sees the same result.
    assert_eq!(
        lookup(&**stores.another(), &key, ttl).await,
        Lookup::Done(result("\"refunded\""))
    );
}

/// A release frees the key for a new claim; releasing twice, or with a stale claim, changes
/// nothing; a completed key is never released.
pub async fn release_frees_the_key(stores: &Stores) {
    let store = &**stores.store();
    let key = key("s-1", "refund", "d1");
    let ttl = Duration::from_secs(60);

    let first = claimed(store, &key, ttl).await;
    store
        .release(key.clone(), first.clone(), failure())
        .await
        .expect("released");
    let second = claimed(store, &key, ttl).await;
    assert_ne!(first.holder, second.holder);

    // Releasing twice, or with a stale claim, changes nothing.
    store
        .release(key.clone(), first.clone(), failure())
        .await
        .expect("answers");
    assert_eq!(lookup(store, &key, ttl).await, Lookup::Pending);
    // A completed key is never released.
    store
        .complete(key.clone(), second.clone(), result("1"))
        .await
        .expect("kept");
    store
        .release(key.clone(), second, failure())
        .await
        .expect("answers");
    assert_eq!(lookup(store, &key, ttl).await, Lookup::Done(result("1")));
}

/// An execution that outlives its window: a second one claims the key, and the first one's
/// late release and completion are no-ops.
pub async fn a_late_holder_never_touches_the_next_claim(stores: &Stores) {
    let store = &**stores.store();
    let key = key("s-1", "refund", "d1");
    let long = Duration::from_secs(60);

    let old = claimed(store, &key, Duration::from_millis(100)).await;
    tokio::time::sleep(Duration::from_millis(250)).await;
    let new = claimed(store, &key, long).await;

    store
        .release(key.clone(), old.clone(), failure())
        .await
        .expect("answers");
    assert_eq!(
        lookup(store, &key, long).await,
        Lookup::Pending,
        "the new claim survives the late release"
    );
    store
        .complete(key.clone(), old, result("\"stale\""))
        .await
        .expect("answers");
    assert_eq!(
        lookup(store, &key, long).await,
        Lookup::Pending,
        "a late completion keeps nothing"
    );

    store
        .complete(key.clone(), new, result("\"fresh\""))
        .await
        .expect("kept");
    assert_eq!(
        lookup(store, &key, long).await,
        Lookup::Done(result("\"fresh\""))
    );
}

/// A result expires with the first claim's window, however late it was completed.
pub async fn a_result_expires_with_the_window_of_its_first_claim(stores: &Stores) {
    let store = &**stores.store();
    let window = Duration::from_millis(600);
    let short = key("s-1", "refund", "short");
    let claim = claimed(store, &short, window).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    store
        .complete(short.clone(), claim, result("2"))
        .await
        .expect("kept");
    assert_eq!(
        lookup(store, &short, window).await,
        Lookup::Done(result("2"))
    );
    tokio::time::sleep(Duration::from_millis(450)).await;
    claimed(store, &short, window).await;
}

/// Another scope, tool or digest is another key, and separators inside a scope or a tool
/// cannot make two keys meet.
pub async fn scopes_tools_and_digests_are_kept_apart(stores: &Stores) {
    let store = &**stores.store();
    let ttl = Duration::from_secs(60);

    let base = key("s-1", "refund", "d1");
    let claim = claimed(store, &base, ttl).await;
    store
        .complete(base.clone(), claim, result("1"))
        .await
        .expect("kept");
    for other in [
        key("s-2", "refund", "d1"),
        key("s-1", "cancel", "d1"),
        key("s-1", "refund", "d2"),
    ] {
        claimed(store, &other, ttl).await;
    }

    let split_one = key("a:b", "c", "d1");
    let claim = claimed(store, &split_one, ttl).await;
    store
        .complete(split_one.clone(), claim, result("3"))
        .await
        .expect("kept");
    for other in [
        key("a", "b:c", "d1"),
        key("a%3Ab", "c", "d1"),
        key("ab", "c", "d1"),
    ] {
        claimed(store, &other, ttl).await;
    }
    assert_eq!(
        lookup(store, &split_one, ttl).await,
        Lookup::Done(result("3"))
    );
}

/// Many claims of one key at the same moment, from two handles: one gets it, the others find
/// it held.
pub async fn concurrent_claims_give_the_key_to_exactly_one(stores: &Stores) {
    let key = key("s-1", "refund", "race");
    let ttl = Duration::from_secs(60);
    let claims: Vec<_> = (0..16)
        .map(|index| {
            let store = if index % 2 == 0 {
                Arc::clone(stores.store())
            } else {
                Arc::clone(stores.another())
            };
            let key = key.clone();
            tokio::spawn(async move { store.claim(key, ttl).await })
        })
        .collect();
    let mut won = 0;
    for claim in claims {
        match claim.await.expect("joined").expect("answers") {
            Lookup::Claimed(_) => won += 1,
            Lookup::Pending => {}
            other => panic!("expected a claim or the key held, found {other:?}"),
        }
    }
    assert_eq!(won, 1, "exactly one claim holds the key");
}

/// A wait ends with the holding execution: its result when it completes; when it fails, its
/// failure (a store that shares failures) or the key claimed for the waiter (one that does
/// not); the key still held after the bound.
pub async fn wait_sees_the_end_of_the_holding_execution(stores: &Stores) {
    let store = stores.store();
    let ttl = Duration::from_secs(60);

    // The holder completes: the waiter gets the result.
    let done = key("s-1", "refund", "done");
    let claim = claimed(&**store, &done, ttl).await;
    let completer = {
        let (store, done) = (Arc::clone(store), done.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            store.complete(done, claim, result("1")).await
        })
    };
    let started = Instant::now();
    assert_eq!(
        store
            .wait(done.clone(), ttl, Duration::from_secs(5))
            .await
            .expect("answers"),
        Lookup::Done(result("1"))
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    completer.await.expect("joined").expect("kept");

    // The holder fails.
    let failed = key("s-1", "refund", "failed");
    let claim = claimed(&**store, &failed, ttl).await;
    let releaser = {
        let (store, failed) = (Arc::clone(store), failed.clone());
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            store.release(failed, claim, failure()).await
        })
    };
    let answer = store
        .wait(failed.clone(), ttl, Duration::from_secs(5))
        .await
        .expect("answers");
    releaser.await.expect("joined").expect("released");
    if stores.shares_failures {
        // The waiter shares the failure, and the key is free for a new attempt.
        assert_eq!(answer, Lookup::Failed(failure()));
        claimed(&**store, &failed, ttl).await;
    } else {
        // The waiter claimed the key: it runs the call, and others wait for it.
        assert!(matches!(answer, Lookup::Claimed(_)), "{answer:?}");
        assert_eq!(lookup(&**store, &failed, ttl).await, Lookup::Pending);
    }

    // The holder goes on: the waiter gives up after `wait`.
    let held = key("s-1", "refund", "held");
    claimed(&**store, &held, ttl).await;
    let wait = Duration::from_millis(300);
    let started = Instant::now();
    assert_eq!(
        store.wait(held.clone(), ttl, wait).await.expect("answers"),
        Lookup::Pending
    );
    let waited = started.elapsed();
    assert!((wait..wait + SLACK).contains(&waited), "{waited:?}");
}

/// The same call claiming again at once waits (it could still be running), as another call
/// does; once its claim is abandoned (past `stale_after`), the call itself takes it over, once,
/// with a claim of its own that the run it took over from can neither free nor complete.
pub async fn a_call_takes_over_its_own_claim_only_once_it_is_abandoned(stores: &Stores) {
    let store = &**stores.store();
    let ttl = Duration::from_secs(60);
    let own = |token: &str| {
        own(
            key("s-1", "refund", "d1"),
            token,
            Duration::from_millis(300),
        )
    };
    let first = claimed(store, &own("call-1"), ttl).await;
    for key in [own("call-1"), own("call-2")] {
        assert_eq!(lookup(store, &key, ttl).await, Lookup::Pending, "{key:?}");
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    // Abandoned: another call still waits; the call itself takes its claim over, once.
    assert_eq!(lookup(store, &own("call-2"), ttl).await, Lookup::Pending);
    let taken = claimed(store, &own("call-1"), ttl).await;
    assert_ne!(
        taken.holder, first.holder,
        "a takeover is a claim of its own"
    );
    assert_eq!(
        lookup(store, &own("call-1"), ttl).await,
        Lookup::Pending,
        "a takeover restarts the clock: a second resume at once waits"
    );
    // The first run was only paused: coming back, it can neither free nor complete the claim
    // taken over from it.
    store
        .release(own("call-1"), first.clone(), failure())
        .await
        .expect("answers");
    store
        .complete(own("call-1"), first, result("stale"))
        .await
        .expect("answers");
    assert_eq!(lookup(store, &own("call-2"), ttl).await, Lookup::Pending);
    store
        .complete(own("call-1"), taken, result("1"))
        .await
        .expect("kept");
    assert_eq!(
        lookup(store, &own("call-2"), ttl).await,
        Lookup::Done(result("1"))
    );
}

/// A claim taken over holds the key for as long as the call can run again, even past the
/// window counted from the first claim.
pub async fn a_claim_taken_over_lasts_as_long_as_the_call_can_run_again(stores: &Stores) {
    let store = &**stores.store();
    let own = |token: &str| {
        own(
            key("s-1", "refund", "d1"),
            token,
            Duration::from_millis(1_500),
        )
    };
    let window = Duration::from_millis(2_000);
    claimed(store, &own("call-1"), window).await;
    tokio::time::sleep(Duration::from_millis(1_700)).await;
    claimed(store, &own("call-1"), window).await;
    // Past the window from the first claim, the run taken over may still be going.
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert_eq!(lookup(store, &own("call-2"), window).await, Lookup::Pending);
}

/// A claim abandoned by a run stopped mid-flight is answered at once, to another call and to
/// the call itself past its `stale_after` (it may have done its work: never taken over), with
/// the time left in its window; a wait does not wait; once the window ends the key is free.
pub async fn an_abandoned_claim_is_answered_at_once_until_its_window_ends(stores: &Stores) {
    let store = &**stores.store();
    let ttl = Duration::from_secs(60);
    let own = |token: &str| {
        own(
            key("s-1", "refund", "d2"),
            token,
            Duration::from_millis(200),
        )
    };
    let started = Instant::now();
    let claim = claimed(store, &own("call-1"), ttl).await;
    store
        .abandon(own("call-1"), claim)
        .await
        .expect("abandoned");
    tokio::time::sleep(Duration::from_millis(300)).await;

    for token in ["call-2", "call-1"] {
        let answer = lookup(store, &own(token), ttl).await;
        let elapsed = started.elapsed();
        match answer {
            Lookup::Abandoned {
                expires_in: Some(left),
            } => assert!(
                left <= ttl && left + elapsed + Duration::from_millis(1) >= ttl,
                "{token}: expires in {left:?}, {elapsed:?} after the claim of a {ttl:?} window"
            ),
            other => panic!("{token}: expected the claim abandoned, found {other:?}"),
        }
    }
    let wait = Duration::from_secs(5);
    let asked = Instant::now();
    let answer = store.wait(own("call-2"), ttl, wait).await.expect("answers");
    assert!(
        matches!(
            answer,
            Lookup::Abandoned {
                expires_in: Some(_)
            }
        ),
        "{answer:?}"
    );
    assert!(asked.elapsed() < wait, "waited {:?}", asked.elapsed());

    // A short window: abandoned until it ends, free after.
    let window = Duration::from_millis(500);
    let short = own("call-1");
    let short = IdempotencyKey {
        digest: "short".into(),
        ..short
    };
    let claim = claimed(store, &short, window).await;
    store
        .abandon(short.clone(), claim)
        .await
        .expect("abandoned");
    assert!(
        matches!(
            lookup(store, &short, window).await,
            Lookup::Abandoned { .. }
        ),
        "abandoned within its window"
    );
    tokio::time::sleep(Duration::from_millis(600)).await;
    claimed(store, &short, window).await;
}

/// Only the claim that holds a key abandons it: another claim's, or a late one after the key
/// was completed, changes nothing.
pub async fn abandoning_needs_the_claim_that_holds_the_key(stores: &Stores) {
    let store = &**stores.store();
    let ttl = Duration::from_secs(60);
    let key = key("s-1", "refund", "d4");
    let claim = claimed(store, &key, ttl).await;
    let other = Claim {
        holder: "not-it".into(),
    };
    store.abandon(key.clone(), other).await.expect("answers");
    assert_eq!(lookup(store, &key, ttl).await, Lookup::Pending);
    store
        .complete(key.clone(), claim.clone(), result("1"))
        .await
        .expect("kept");
    store.abandon(key.clone(), claim).await.expect("answers");
    assert_eq!(lookup(store, &key, ttl).await, Lookup::Done(result("1")));
}

/// A wait for a claim that its run abandons meanwhile ends with that answer, long before its
/// bound.
pub async fn a_waiter_is_told_at_once_when_the_claim_it_waits_for_is_abandoned(stores: &Stores) {
    let store = &**stores.store();
    let ttl = Duration::from_secs(60);
    let key = key("s-1", "refund", "d5");
    let claim = claimed(store, &key, ttl).await;
    let wait = Duration::from_secs(10);
    let asked = Instant::now();
    let abandoning = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        store.abandon(key.clone(), claim).await.expect("abandoned");
    };
    let (waited, ()) = tokio::join!(store.wait(key.clone(), ttl, wait), abandoning);
    assert!(
        matches!(
            waited.expect("answers"),
            Lookup::Abandoned {
                expires_in: Some(_)
            }
        ),
        "told the claim was abandoned"
    );
    assert!(asked.elapsed() < wait, "waited {:?}", asked.elapsed());
}
