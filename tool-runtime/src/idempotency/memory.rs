//! The idempotency store of one process: claims and results in memory, bounded.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tool_core::BoxFuture;

use super::store::{
    Claim, IdempotencyKey, IdempotencyStore, Lookup, SharedFailure, StoreError, StoredResult,
};

/// Claims and results in memory: the default store.
///
/// Concurrent duplicates wait for the execution holding their key and receive its result or
/// its error. Results are kept for the window from the first claim and bounded (by default
/// 10,000 entries and 64 MiB of results): when full, the oldest completed result is evicted
/// first; a claim in flight is never evicted (a new claim beyond the bound waits for room by
/// evicting results only, and is refused as unavailable when only claims are left). A claim
/// [abandoned](IdempotencyStore::abandon) by a run stopped mid-flight stays until its window
/// ends, never evicted either: a claim or a wait on its key answers [`Lookup::Abandoned`] at
/// once, and the waiters already waiting are woken with that answer.
#[derive(Debug)]
pub struct MemoryIdempotency {
    max_entries: usize,
    max_bytes: usize,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: HashMap<Id, Entry>,
    /// Completed keys, oldest completion first (entries may have left already).
    completed: VecDeque<Id>,
    bytes: usize,
}

/// What names an entry: scope, tool and digest (the arguments' digest is kept with it, so an
/// explicit key reused with other arguments finds the first call's entry).
type Id = (String, String, String);

fn id(key: &IdempotencyKey) -> Id {
    (key.scope.clone(), key.tool.clone(), key.digest.clone())
}

#[derive(Debug)]
struct Entry {
    expires: Instant,
    value: Value,
}

#[derive(Debug)]
enum Value {
    Pending {
        /// The call's token: a call with it may take the claim over once its run is lost.
        holder: String,
        /// This claim's own token, new on each takeover: the run taken over from (if it was
        /// only paused) cannot complete or free the new holder's claim.
        lease: String,
        /// When the holder claimed the key (or took it over).
        since: Instant,
        /// Tells the waiters how the execution ended (`None` while it runs).
        ended: watch::Sender<Option<Ending>>,
    },
    /// Left by a run stopped mid-flight: it may have done its work, so nothing runs the call
    /// (nor takes the claim over) until the key expires.
    Abandoned,
    Done(StoredResult),
}

#[derive(Debug, Clone)]
enum Ending {
    /// Completed or abandoned: the waiters look at the entry again.
    Recorded,
    Failed(SharedFailure),
}

impl Default for MemoryIdempotency {
    fn default() -> Self {
        Self::new(10_000, 64 * 1024 * 1024)
    }
}

impl MemoryIdempotency {
    /// A store keeping at most `max_entries` keys and `max_bytes` of results.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        Self {
            max_entries: max_entries.max(1),
            max_bytes,
            state: Mutex::new(State::default()),
        }
    }

    /// How many keys are kept (claims and results).
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }

    /// Whether no key is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn claim_now(&self, key: &IdempotencyKey, ttl: Duration) -> Result<Lookup, StoreError> {
        let id = &id(key);
        let now = Instant::now();
        let mut state = self.lock();
        if state
            .entries
            .get(id)
            .is_some_and(|entry| entry.expires <= now)
            && let Some(expired) = state.entries.remove(id)
            && let Value::Done(result) = expired.value
        {
            state.bytes = state.bytes.saturating_sub(size_of(&result));
        }
        if let Some(entry) = state.entries.get_mut(id) {
            match &mut entry.value {
                Value::Done(result) => return Ok(Lookup::Done(result.clone())),
                Value::Abandoned => {
                    return Ok(Lookup::Abandoned {
                        expires_in: Some(entry.expires.saturating_duration_since(now)),
                    });
                }
                // The same call, resumed after its run was lost without an ending: it takes
                // the claim over, for as long as it can run at least.
                Value::Pending {
                    holder,
                    lease,
                    since,
                    ..
                } if key.holder.as_ref().is_some_and(|own| {
                    own.token == *holder && now.saturating_duration_since(*since) >= own.stale_after
                }) =>
                {
                    *since = now;
                    *lease = crate::hex::random_token();
                    if let Some(own) = &key.holder {
                        entry.expires = entry.expires.max(deadline(now, own.stale_after));
                    }
                    return Ok(Lookup::Claimed(Claim {
                        holder: lease.clone(),
                    }));
                }
                Value::Pending { .. } => return Ok(Lookup::Pending),
            }
        }
        state.make_room(self.max_entries, self.max_bytes, 1, now);
        if state.entries.len() >= self.max_entries {
            return Err(StoreError(format!(
                "{} calls are in flight, the most this store keeps",
                state.entries.len()
            )));
        }
        let holder = key
            .holder
            .as_ref()
            .map_or_else(crate::hex::random_token, |own| own.token.clone());
        let lease = crate::hex::random_token();
        let (ended, _) = watch::channel(None);
        state.entries.insert(
            id.clone(),
            Entry {
                expires: deadline(now, ttl),
                value: Value::Pending {
                    holder,
                    lease: lease.clone(),
                    since: now,
                    ended,
                },
            },
        );
        Ok(Lookup::Claimed(Claim { holder: lease }))
    }

    async fn wait_then_claim(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
        wait: Duration,
    ) -> Result<Lookup, StoreError> {
        let receiver = match self.lock().entries.get(&id(&key)).map(|entry| &entry.value) {
            Some(Value::Pending { ended, .. }) => Some(ended.subscribe()),
            _ => None,
        };
        if let Some(mut receiver) = receiver {
            let ended = tokio::time::timeout(wait, receiver.wait_for(Option::is_some)).await;
            match ended {
                // Still running after the bound.
                Err(_) => return Ok(Lookup::Pending),
                Ok(Ok(ending)) => {
                    if let Some(Ending::Failed(failure)) = ending.clone() {
                        return Ok(Lookup::Failed(failure));
                    }
                }
                // The holder's entry went away without an ending (evicted): look again.
                Ok(Err(_)) => {}
            }
        }
        self.claim_now(&key, ttl)
    }

    fn complete_now(&self, key: &IdempotencyKey, claim: &Claim, result: StoredResult) {
        let key = &id(key);
        let mut state = self.lock();
        let size = size_of(&result);
        let Some(entry) = state.entries.get_mut(key) else {
            return;
        };
        let Value::Pending { lease, ended, .. } = &entry.value else {
            return;
        };
        if *lease != claim.holder {
            return;
        }
        ended.send_replace(Some(Ending::Recorded));
        entry.value = Value::Done(result);
        state.bytes += size;
        state.completed.push_back(key.clone());
        let now = Instant::now();
        state.make_room(self.max_entries, self.max_bytes, 0, now);
    }

    fn release_now(&self, key: &IdempotencyKey, claim: &Claim, failure: SharedFailure) {
        let key = &id(key);
        let mut state = self.lock();
        let held = matches!(
            state.entries.get(key).map(|entry| &entry.value),
            Some(Value::Pending { lease, .. }) if *lease == claim.holder
        );
        if held
            && let Some(entry) = state.entries.remove(key)
            && let Value::Pending { ended, .. } = entry.value
        {
            ended.send_replace(Some(Ending::Failed(failure)));
        }
    }
}

impl State {
    /// Evicts the oldest completed results until `more` entries fit within the bounds, and
    /// expired results when the map is full. Claims in flight are never evicted.
    fn make_room(&mut self, max_entries: usize, max_bytes: usize, more: usize, now: Instant) {
        // Expired entries go first, claims included: a claim past its window holds nothing
        // (a new claim of its key would take its place anyway).
        if self.entries.len() + more > max_entries {
            let expired: Vec<Id> = self
                .entries
                .iter()
                .filter(|(_, entry)| entry.expires <= now)
                .map(|(key, _)| key.clone())
                .collect();
            for key in expired {
                if let Some(Entry {
                    value: Value::Done(result),
                    ..
                }) = self.entries.remove(&key)
                {
                    self.bytes = self.bytes.saturating_sub(size_of(&result));
                }
            }
        }
        while self.entries.len() + more > max_entries || self.bytes > max_bytes {
            let Some(oldest) = self.completed.pop_front() else {
                break;
            };
            let done = matches!(
                self.entries.get(&oldest),
                Some(Entry {
                    value: Value::Done(_),
                    ..
                })
            );
            if done
                && let Some(entry) = self.entries.remove(&oldest)
                && let Value::Done(result) = entry.value
            {
                self.bytes = self.bytes.saturating_sub(size_of(&result));
            }
        }
    }
}

/// `ttl` from `now`; a century for a time to live too long to add.
fn deadline(now: Instant, ttl: Duration) -> Instant {
    now.checked_add(ttl)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600))
}

fn size_of(result: &StoredResult) -> usize {
    result.output.len()
        + result.page.as_ref().map_or(0, String::len)
        + result.arguments_digest.len()
}

impl MemoryIdempotency {
    fn abandon_now(&self, key: &IdempotencyKey, claim: &Claim) {
        let mut state = self.lock();
        if let Some(entry) = state.entries.get_mut(&id(key))
            && let Value::Pending { lease, ended, .. } = &entry.value
            && *lease == claim.holder
        {
            // The waiters look again and find it abandoned.
            ended.send_replace(Some(Ending::Recorded));
            entry.value = Value::Abandoned;
        }
    }
}

impl IdempotencyStore for MemoryIdempotency {
    fn claim(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        Box::pin(std::future::ready(self.claim_now(&key, ttl)))
    }

    fn wait(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
        wait: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        Box::pin(self.wait_then_claim(key, ttl, wait))
    }

    fn complete(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        result: StoredResult,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.complete_now(&key, &claim, result);
        Box::pin(std::future::ready(Ok(())))
    }

    fn release(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        failure: SharedFailure,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        self.release_now(&key, &claim, failure);
        Box::pin(std::future::ready(Ok(())))
    }

    fn abandon(&self, key: IdempotencyKey, claim: Claim) -> BoxFuture<'_, Result<(), StoreError>> {
        self.abandon_now(&key, &claim);
        Box::pin(std::future::ready(Ok(())))
    }

    /// The wait only listens; its claim is made at once when it answers.
    fn wait_is_cancel_safe(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idempotency::Holder;

    fn key(n: usize) -> IdempotencyKey {
        IdempotencyKey {
            scope: "s".into(),
            tool: "t".into(),
            digest: format!("{n:064}"),
            arguments_digest: "a".into(),
            holder: None,
        }
    }

    fn own(n: usize, token: &str) -> IdempotencyKey {
        IdempotencyKey {
            holder: Some(Holder {
                token: token.into(),
                stale_after: Duration::from_secs(1),
            }),
            ..key(n)
        }
    }

    fn result(output: &str) -> StoredResult {
        StoredResult {
            arguments_digest: "a".into(),
            output: output.into(),
            page: None,
        }
    }

    fn claimed(lookup: Result<Lookup, StoreError>) -> Claim {
        match lookup {
            Ok(Lookup::Claimed(claim)) => claim,
            other => panic!("not claimed: {other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_abandoned_claim_is_answered_at_once_until_it_expires_never_taken_over() {
        let store = MemoryIdempotency::default();
        let ttl = Duration::from_secs(60);
        let claim = claimed(store.claim(own(1, "call-1"), ttl).await);
        tokio::time::advance(Duration::from_secs(10)).await;
        store
            .abandon(own(1, "call-1"), claim)
            .await
            .expect("answers");
        let abandoned = Lookup::Abandoned {
            expires_in: Some(Duration::from_secs(50)),
        };
        assert_eq!(
            store.claim(own(1, "call-2"), ttl).await.expect("answers"),
            abandoned
        );
        // A wait answers at once, whatever its bound.
        let asked = Instant::now();
        assert_eq!(
            store
                .wait(own(1, "call-2"), ttl, Duration::from_secs(10))
                .await
                .expect("answers"),
            abandoned
        );
        assert_eq!(asked.elapsed(), Duration::ZERO);
        // The same call, past its stale_after: its run may have done its work, no takeover.
        assert_eq!(
            store.claim(own(1, "call-1"), ttl).await.expect("answers"),
            abandoned
        );
        tokio::time::advance(Duration::from_secs(49)).await;
        assert_eq!(
            store.claim(key(1), ttl).await.expect("answers"),
            Lookup::Abandoned {
                expires_in: Some(Duration::from_secs(1)),
            }
        );
        tokio::time::advance(Duration::from_secs(1)).await;
        claimed(store.claim(own(1, "call-1"), ttl).await);
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiter_is_woken_when_the_claim_it_waits_for_is_abandoned() {
        let store = MemoryIdempotency::default();
        let ttl = Duration::from_secs(60);
        let claim = claimed(store.claim(key(1), ttl).await);
        let asked = Instant::now();
        let abandoning = async {
            tokio::time::sleep(Duration::from_millis(5)).await;
            store.abandon(key(1), claim).await.expect("answers");
        };
        let (waited, ()) =
            tokio::join!(store.wait(key(1), ttl, Duration::from_secs(10)), abandoning);
        assert_eq!(
            waited.expect("answers"),
            Lookup::Abandoned {
                expires_in: Some(Duration::from_millis(59_995)),
            }
        );
        assert_eq!(asked.elapsed(), Duration::from_millis(5));
    }

    #[tokio::test(start_paused = true)]
    async fn abandoning_needs_the_claim_that_holds_the_key() {
        let store = MemoryIdempotency::default();
        let ttl = Duration::from_secs(60);
        let claim = claimed(store.claim(key(1), ttl).await);
        let other = Claim {
            holder: "not-it".into(),
        };
        store.abandon(key(1), other).await.expect("answers");
        assert_eq!(
            store.claim(key(1), ttl).await.expect("answers"),
            Lookup::Pending
        );
        store
            .complete(key(1), claim.clone(), result("1"))
            .await
            .expect("answers");
        // A completed key is not abandoned by a late call either.
        store.abandon(key(1), claim).await.expect("answers");
        assert_eq!(
            store.claim(key(1), ttl).await.expect("answers"),
            Lookup::Done(result("1"))
        );
    }

    #[tokio::test(start_paused = true)]
    async fn an_abandoned_claim_is_never_evicted_and_an_expired_one_gives_way() {
        let store = MemoryIdempotency::new(2, 1 << 20);
        let ttl = Duration::from_secs(10);
        for n in [1, 2] {
            let claim = claimed(store.claim(key(n), ttl).await);
            store.abandon(key(n), claim).await.expect("answers");
        }
        assert!(store.claim(key(3), ttl).await.is_err(), "full of claims");
        tokio::time::advance(Duration::from_secs(10)).await;
        claimed(store.claim(key(3), ttl).await);
    }
}
