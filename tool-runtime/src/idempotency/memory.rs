//! The idempotency store of one process: claims and results in memory, bounded.
//!
//! Expiry and eviction look at a few entries per claim however full the store is: entries
//! leave from the fronts of queues, of expiry times (soonest first, see [`Schedule`]) and of
//! completions (oldest first), instead of a scan of every entry. An item whose entry left by
//! another way stays behind (it is dropped at once when it is at the front), is skipped when
//! it comes up, and a queue is compacted once such items outnumber the live ones: each went
//! stale by an operation since the last compaction, which pays for it.
//!
//! Entries live in a slab, found through a table of their positions by the hash each keeps,
//! so that queue items name entries by position and number without a lookup, the table's
//! growth hashes no key again, and a new entry takes the place (still in the cache) of the
//! one just evicted. A key's name is kept in the entry itself when it is short (as most
//! are): an eviction frees no more than the result.

use std::collections::{BTreeMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use hashbrown::HashTable;
use smallvec::SmallVec;
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
    /// Keyed (SipHash), so that keys chosen to collide cannot slow the table down.
    hasher: RandomState,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    entries: Entries,
    /// When each entry expires.
    expiry: Schedule,
    /// Completed entries by position and number, oldest completion first; an item whose
    /// entry left (expired) is stale.
    completed: VecDeque<(usize, u64)>,
    /// How many entries are completed results.
    results: usize,
    bytes: usize,
    /// How many queue items expiry and eviction looked at, to show their cost per claim.
    #[cfg(test)]
    examined: usize,
}

/// The entries: a slab, and a table of positions in it by hash.
#[derive(Debug, Default)]
struct Entries {
    index: HashTable<usize>,
    slab: Vec<Option<Entry>>,
    /// Free positions, the last freed first.
    free: Vec<usize>,
    /// The number the next entry gets: a queue item names its entry by position and number,
    /// so a position taken again is not mistaken for the entry that left it.
    next: u64,
}

#[derive(Debug)]
struct Entry {
    /// The hash of its key.
    hash: u64,
    /// What names it: scope, tool and digest, one after the other (the arguments' digest is
    /// kept with the result, so an explicit key reused with other arguments finds the first
    /// call's entry).
    name: SmallVec<[u8; 128]>,
    /// Where the tool and the digest start in `name`.
    split: (usize, usize),
    expires: Instant,
    /// Where `expires` is queued.
    due: Slot,
    /// The entry's number (see [`Entries::next`]).
    number: u64,
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

/// Stale items beyond the live ones before a compaction, so that small stores do not compact
/// on every operation.
const SLACK: usize = 64;

impl Entry {
    fn is(&self, key: &IdempotencyKey) -> bool {
        let (tool, digest) = self.split;
        self.name.get(..tool) == Some(key.scope.as_bytes())
            && self.name.get(tool..digest) == Some(key.tool.as_bytes())
            && self.name.get(digest..) == Some(key.digest.as_bytes())
    }
}

impl Entries {
    fn len(&self) -> usize {
        self.index.len()
    }

    /// Where `key`'s entry is.
    fn find(&self, hash: u64, key: &IdempotencyKey) -> Option<usize> {
        let slab = &self.slab;
        self.index
            .find(hash, |&at| {
                slab.get(at)
                    .and_then(Option::as_ref)
                    .is_some_and(|entry| entry.is(key))
            })
            .copied()
    }

    fn get(&self, at: usize) -> Option<&Entry> {
        self.slab.get(at).and_then(Option::as_ref)
    }

    fn get_mut(&mut self, at: usize) -> Option<&mut Entry> {
        self.slab.get_mut(at).and_then(Option::as_mut)
    }

    /// The entry at `at`, if it is entry `number`.
    fn numbered(&self, at: usize, number: u64) -> Option<&Entry> {
        self.get(at).filter(|entry| entry.number == number)
    }

    /// Where the next entry goes, and its number.
    fn vacancy(&mut self) -> (usize, u64) {
        let number = self.next;
        self.next += 1;
        (self.free.last().copied().unwrap_or(self.slab.len()), number)
    }

    /// Puts `entry` where [`Entries::vacancy`] said.
    fn insert(&mut self, at: usize, entry: Entry) {
        let hash = entry.hash;
        match self.slab.get_mut(at) {
            Some(vacant) => {
                self.free.pop();
                *vacant = Some(entry);
            }
            None => self.slab.push(Some(entry)),
        }
        let slab = &self.slab;
        self.index.insert_unique(hash, at, |&other| {
            slab.get(other)
                .and_then(Option::as_ref)
                .map_or(0, |entry| entry.hash)
        });
    }

    fn remove(&mut self, at: usize) -> Option<Entry> {
        let entry = self.slab.get_mut(at)?.take()?;
        self.vacate(entry.hash, at);
        Some(entry)
    }

    /// Drops the entry at `at` where it lies: an evicted or expired entry is likely out of
    /// the cache, and only what its drop needs is read. Answers what the counts need.
    fn discard(&mut self, at: usize) -> Option<Gone> {
        let slot = self.slab.get_mut(at)?;
        let entry = slot.as_ref()?;
        let gone = Gone::of(entry);
        *slot = None;
        self.vacate(gone.hash, at);
        Some(gone)
    }

    fn vacate(&mut self, hash: u64, at: usize) {
        if let Ok(found) = self.index.find_entry(hash, |&other| other == at) {
            found.remove();
        }
        self.free.push(at);
    }
}

/// What the store's counts need of an entry that left.
struct Gone {
    hash: u64,
    due: Slot,
    expires: Instant,
    number: u64,
    /// The size of its result, if it was completed.
    result: Option<usize>,
}

impl Gone {
    fn of(entry: &Entry) -> Self {
        Self {
            hash: entry.hash,
            due: entry.due,
            expires: entry.expires,
            number: entry.number,
            result: match &entry.value {
                Value::Done(result) => Some(size_of(result)),
                _ => None,
            },
        }
    }
}

/// Expiry times, in one queue per duration they were set with (a few: the window, and the
/// longer claims of calls that can run longer). `now` is read under the store's lock, so the
/// times of one duration are queued in the order they come due, and the soonest of each queue
/// is at its front. A time that would break that order (more durations than queues, a
/// deadline clamped) goes to an ordered index instead.
#[derive(Debug, Default)]
struct Schedule {
    queues: Vec<(Duration, VecDeque<Due>)>,
    others: BTreeMap<(Instant, u64), usize>,
    /// Items in the queues, stale ones included.
    queued: usize,
}

/// An entry's expiry: when, and the entry's number and position.
#[derive(Debug, Clone, Copy)]
struct Due {
    at: Instant,
    number: u64,
    entry: usize,
}

/// Where an expiry is kept: which queue, or the ordered index.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Queue(usize),
    Other,
}

/// How many durations get a queue of their own.
const QUEUES: usize = 8;

impl Schedule {
    fn add(&mut self, after: Duration, due: Due) -> Slot {
        let queue = match self.queues.iter().position(|(of, _)| *of == after) {
            Some(queue) => Some(queue),
            None if self.queues.len() < QUEUES => {
                self.queues.push((after, VecDeque::new()));
                Some(self.queues.len() - 1)
            }
            None => None,
        };
        if let Some(queue) = queue
            && let Some((_, items)) = self.queues.get_mut(queue)
            && items.back().is_none_or(|last| last.at <= due.at)
        {
            items.push_back(due);
            self.queued += 1;
            return Slot::Queue(queue);
        }
        self.others.insert((due.at, due.number), due.entry);
        Slot::Other
    }

    /// Forgets the expiry of an entry that left: at once when it is at the front of its queue
    /// (an eviction or an expiry usually is), else when it comes up or at a compaction.
    fn remove(&mut self, slot: Slot, at: Instant, number: u64) {
        match slot {
            Slot::Queue(queue) => {
                if let Some((_, items)) = self.queues.get_mut(queue)
                    && items.front().is_some_and(|first| first.number == number)
                {
                    items.pop_front();
                    self.queued -= 1;
                }
            }
            Slot::Other => {
                self.others.remove(&(at, number));
            }
        }
    }

    /// Takes out one item due by `now`, if any.
    fn pop_due(&mut self, now: Instant) -> Option<Due> {
        for (_, items) in &mut self.queues {
            if items.front().is_some_and(|first| first.at <= now) {
                self.queued -= 1;
                return items.pop_front();
            }
        }
        let soonest = self
            .others
            .first_entry()
            .filter(|soonest| soonest.key().0 <= now)?;
        let ((at, number), entry) = soonest.remove_entry();
        Some(Due { at, number, entry })
    }

    /// Keeps only the items `live` accepts, once the queues hold more than twice `entries`;
    /// answers how many it looked at.
    fn compact(&mut self, entries: usize, mut live: impl FnMut(&Due) -> bool) -> usize {
        if self.queued <= 2 * entries + SLACK {
            return 0;
        }
        let examined = self.queued;
        for (_, items) in &mut self.queues {
            items.retain(&mut live);
        }
        self.queued = self.queues.iter().map(|(_, items)| items.len()).sum();
        examined
    }
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
            hasher: RandomState::new(),
            state: Mutex::new(State::default()),
        }
    }

    /// How many keys are kept within their window (claims and results).
    pub fn len(&self) -> usize {
        let mut state = self.lock();
        state.expire(Instant::now());
        state.entries.len()
    }

    /// Whether no key is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn hash(&self, key: &IdempotencyKey) -> u64 {
        self.hasher.hash_one((&key.scope, &key.tool, &key.digest))
    }

    fn claim_now(&self, key: &IdempotencyKey, ttl: Duration) -> Result<Lookup, StoreError> {
        let hash = self.hash(key);
        let mut guard = self.lock();
        let state = &mut *guard;
        let now = Instant::now();
        state.expire(now);
        if let Some(at) = state.entries.find(hash, key)
            && let Some(entry) = state.entries.get_mut(at)
        {
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
                    let claim = Claim {
                        holder: lease.clone(),
                    };
                    if let Some(own) = &key.holder {
                        let until = deadline(now, own.stale_after);
                        if until > entry.expires {
                            state.expiry.remove(entry.due, entry.expires, entry.number);
                            let due = Due {
                                at: until,
                                number: entry.number,
                                entry: at,
                            };
                            entry.due = state.expiry.add(own.stale_after, due);
                            entry.expires = until;
                            state.compact();
                        }
                    }
                    return Ok(Lookup::Claimed(claim));
                }
                Value::Pending { .. } => return Ok(Lookup::Pending),
            }
        }
        state.make_room(self.max_entries, self.max_bytes, 1);
        if state.entries.len() >= self.max_entries {
            return Err(StoreError::new(format!(
                "{} claims are held (calls in flight, or stopped mid-flight within their window), the most this store keeps",
                state.entries.len()
            )));
        }
        let holder = key
            .holder
            .as_ref()
            .map_or_else(crate::hex::random_token, |own| own.token.clone());
        let lease = crate::hex::random_token();
        let (ended, _) = watch::channel(None);
        state.insert(
            hash,
            key,
            (ttl, deadline(now, ttl)),
            Value::Pending {
                holder,
                lease: lease.clone(),
                since: now,
                ended,
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
        let hash = self.hash(&key);
        let receiver = {
            let mut state = self.lock();
            state.expire(Instant::now());
            let entry = state
                .entries
                .find(hash, &key)
                .and_then(|at| state.entries.get(at));
            match entry.map(|entry| &entry.value) {
                Some(Value::Pending { ended, .. }) => Some(ended.subscribe()),
                _ => None,
            }
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
                // The holder's entry went away without an ending (expired): look again.
                Ok(Err(_)) => {}
            }
        }
        self.claim_now(&key, ttl)
    }

    fn complete_now(&self, key: &IdempotencyKey, claim: &Claim, result: StoredResult) {
        let hash = self.hash(key);
        let mut guard = self.lock();
        let state = &mut *guard;
        state.expire(Instant::now());
        let size = size_of(&result);
        let Some(at) = state.entries.find(hash, key) else {
            return;
        };
        let Some(entry) = state.entries.get_mut(at) else {
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
        state.completed.push_back((at, entry.number));
        state.results += 1;
        state.bytes += size;
        state.make_room(self.max_entries, self.max_bytes, 0);
    }

    fn release_now(&self, key: &IdempotencyKey, claim: &Claim, failure: SharedFailure) {
        let hash = self.hash(key);
        let mut state = self.lock();
        state.expire(Instant::now());
        let Some(at) = state.entries.find(hash, key) else {
            return;
        };
        let held = matches!(
            state.entries.get(at).map(|entry| &entry.value),
            Some(Value::Pending { lease, .. }) if *lease == claim.holder
        );
        if held
            && let Some(entry) = state.remove(at)
            && let Value::Pending { ended, .. } = entry.value
        {
            ended.send_replace(Some(Ending::Failed(failure)));
        }
    }

    fn abandon_now(&self, key: &IdempotencyKey, claim: &Claim) {
        let hash = self.hash(key);
        let mut state = self.lock();
        state.expire(Instant::now());
        if let Some(at) = state.entries.find(hash, key)
            && let Some(entry) = state.entries.get_mut(at)
            && let Value::Pending { lease, ended, .. } = &entry.value
            && *lease == claim.holder
        {
            // The waiters look again and find it abandoned.
            ended.send_replace(Some(Ending::Recorded));
            entry.value = Value::Abandoned;
        }
    }
}

impl State {
    /// A new entry, expiring at `expires.1`, `expires.0` from now.
    fn insert(
        &mut self,
        hash: u64,
        key: &IdempotencyKey,
        expires: (Duration, Instant),
        value: Value,
    ) {
        let (at, number) = self.entries.vacancy();
        let mut name = SmallVec::new();
        name.extend_from_slice(key.scope.as_bytes());
        name.extend_from_slice(key.tool.as_bytes());
        name.extend_from_slice(key.digest.as_bytes());
        let split = (key.scope.len(), key.scope.len() + key.tool.len());
        let (after, when) = expires;
        let due = self.expiry.add(
            after,
            Due {
                at: when,
                number,
                entry: at,
            },
        );
        let entry = Entry {
            hash,
            name,
            split,
            expires: when,
            due,
            number,
            value,
        };
        self.entries.insert(at, entry);
        self.compact();
    }

    /// Removes the entry at `at` and its expiry; a completion of it goes stale. A pending
    /// entry's waiters see its channel close and look again.
    fn remove(&mut self, at: usize) -> Option<Entry> {
        let entry = self.entries.remove(at)?;
        self.forget(&Gone::of(&entry));
        Some(entry)
    }

    /// Drops the entry at `at` (see [`Entries::discard`]) and its expiry.
    fn discard(&mut self, at: usize) {
        if let Some(gone) = self.entries.discard(at) {
            self.forget(&gone);
        }
    }

    fn forget(&mut self, gone: &Gone) {
        self.expiry.remove(gone.due, gone.expires, gone.number);
        if let Some(size) = gone.result {
            self.results -= 1;
            self.bytes = self.bytes.saturating_sub(size);
        }
    }

    /// Drops the entries whose window is over, claims included (a claim past its window holds
    /// nothing), from the fronts of the expiry queues.
    fn expire(&mut self, now: Instant) {
        let mut expired = false;
        while let Some(due) = self.expiry.pop_due(now) {
            #[cfg(test)]
            {
                self.examined += 1;
            }
            // Stale when the entry left, or its expiry moved on (a takeover).
            if self
                .entries
                .numbered(due.entry, due.number)
                .is_some_and(|entry| entry.expires == due.at)
            {
                self.discard(due.entry);
            }
            expired = true;
        }
        if expired {
            self.compact();
        }
    }

    /// Evicts the oldest completed results until `more` entries fit within the bounds.
    /// Claims (in flight or abandoned) are never evicted.
    fn make_room(&mut self, max_entries: usize, max_bytes: usize, more: usize) {
        while self.entries.len() + more > max_entries || self.bytes > max_bytes {
            let Some((at, number)) = self.completed.pop_front() else {
                break;
            };
            #[cfg(test)]
            {
                self.examined += 1;
            }
            // Only a completed entry has a completion: its number is enough to tell.
            if self.entries.numbered(at, number).is_some() {
                self.discard(at);
            }
        }
    }

    /// Drops the stale items of a queue once they outnumber the live ones.
    fn compact(&mut self) {
        let entries = &self.entries;
        let _examined = self.expiry.compact(entries.len(), |due| {
            entries
                .numbered(due.entry, due.number)
                .is_some_and(|entry| entry.expires == due.at)
        });
        #[cfg(test)]
        {
            self.examined += _examined;
        }
        if self.completed.len() > 2 * self.results + SLACK {
            #[cfg(test)]
            {
                self.examined += self.completed.len();
            }
            self.completed
                .retain(|&(at, number)| entries.numbered(at, number).is_some());
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
            content_blocks: false,
        }
    }

    fn claimed(lookup: Result<Lookup, StoreError>) -> Claim {
        match lookup {
            Ok(Lookup::Claimed(claim)) => claim,
            other => panic!("not claimed: {other:?}"),
        }
    }

    fn first_run(store: &MemoryIdempotency, n: usize, ttl: Duration) {
        let claim = claimed(store.claim_now(&key(n), ttl));
        store.complete_now(&key(n), &claim, result("{}"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_claim_on_a_full_store_examines_a_bounded_number_of_entries() {
        let store = MemoryIdempotency::new(1_000, 1 << 30);
        let ttl = Duration::from_secs(600);
        for n in 0..1_000 {
            first_run(&store, n, ttl);
        }
        let before = store.lock().examined;
        for n in 1_000..3_000 {
            first_run(&store, n, ttl);
        }
        let examined = store.lock().examined - before;
        assert_eq!(store.len(), 1_000);
        // Each claim evicts one result: a few entries looked at per claim, not the whole store.
        assert!(
            examined <= 4 * 2_000,
            "{examined} entries examined for 2,000 claims on a full store of 1,000"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn expiring_entries_are_each_examined_about_once_and_the_queues_stay_bounded() {
        // Never full: every entry leaves by expiry, in a store that keeps about 100 at once.
        let store = MemoryIdempotency::new(1_000, 1 << 30);
        let ttl = Duration::from_millis(100);
        for n in 0..10_000 {
            first_run(&store, n, ttl);
            tokio::time::advance(Duration::from_millis(1)).await;
        }
        let state = store.lock();
        assert!(state.entries.len() <= 101, "{}", state.entries.len());
        assert!(
            state.examined <= 4 * 10_000,
            "{} entries examined for 10,000 claims",
            state.examined
        );
        assert!(
            state.completed.len() <= 2 * state.results + SLACK + 1,
            "{} completion items for {} results",
            state.completed.len(),
            state.results
        );
        assert!(
            state.expiry.queued <= 2 * state.entries.len() + SLACK + 1,
            "{} expiry items for {} entries",
            state.expiry.queued,
            state.entries.len()
        );
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
        assert_eq!(store.len(), 1);
        tokio::time::advance(Duration::from_secs(1)).await;
        assert_eq!(store.len(), 0);
        claimed(store.claim(own(1, "call-1"), ttl).await);
    }

    #[tokio::test(start_paused = true)]
    async fn a_claim_taken_over_outlasts_its_first_expiry_even_behind_other_entries() {
        let store = MemoryIdempotency::default();
        let window = Duration::from_secs(1);
        let resumable = |token: &str| IdempotencyKey {
            holder: Some(Holder {
                token: token.into(),
                stale_after: Duration::from_millis(600),
            }),
            ..key(2)
        };
        claimed(store.claim(key(1), window).await);
        claimed(store.claim(resumable("call-1"), window).await);
        tokio::time::advance(Duration::from_millis(700)).await;
        // Taken over: held until 1.3 s, past the first claim's 1 s (queued behind key 1's).
        claimed(store.claim(resumable("call-1"), window).await);
        tokio::time::advance(Duration::from_millis(400)).await;
        assert_eq!(
            store
                .claim(resumable("call-2"), window)
                .await
                .expect("answers"),
            Lookup::Pending
        );
        assert_eq!(store.len(), 1, "key 1 expired, key 2 still held");
        tokio::time::advance(Duration::from_millis(200)).await;
        claimed(store.claim(resumable("call-2"), window).await);
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
        assert_eq!(store.len(), 1);
    }

    /// The store as it was specified before its queues: a map, scanned whenever it must
    /// expire or evict something.
    mod model {
        use super::*;
        use std::collections::HashMap;

        fn id(key: &IdempotencyKey) -> (String, String, String) {
            (key.scope.clone(), key.tool.clone(), key.digest.clone())
        }

        pub(super) struct Model {
            pub(super) max_entries: usize,
            pub(super) max_bytes: usize,
            pub(super) entries: HashMap<(String, String, String), ModelEntry>,
            completions: u64,
        }

        pub(super) struct ModelEntry {
            expires: Instant,
            value: ModelValue,
        }

        enum ModelValue {
            Pending {
                holder: Option<String>,
                lease: String,
                since: Instant,
            },
            Abandoned,
            Done {
                result: StoredResult,
                completed: u64,
            },
        }

        /// What the model answers to a claim.
        #[derive(Debug, PartialEq)]
        pub(super) enum Answer {
            Claimed,
            Done(StoredResult),
            Pending,
            Abandoned(Duration),
            Full,
        }

        impl Model {
            pub(super) fn new(max_entries: usize, max_bytes: usize) -> Self {
                Self {
                    max_entries: max_entries.max(1),
                    max_bytes,
                    entries: HashMap::new(),
                    completions: 0,
                }
            }

            pub(super) fn bytes(&self) -> usize {
                self.entries
                    .values()
                    .map(|entry| match &entry.value {
                        ModelValue::Done { result, .. } => size_of(result),
                        _ => 0,
                    })
                    .sum()
            }

            pub(super) fn expire(&mut self, now: Instant) {
                self.entries.retain(|_, entry| entry.expires > now);
            }

            fn evict_oldest_result(&mut self) -> bool {
                let oldest = self
                    .entries
                    .iter()
                    .filter_map(|(id, entry)| match &entry.value {
                        ModelValue::Done { completed, .. } => Some((*completed, id.clone())),
                        _ => None,
                    })
                    .min();
                oldest
                    .and_then(|(_, id)| self.entries.remove(&id))
                    .is_some()
            }

            fn make_room(&mut self, more: usize) {
                while self.entries.len() + more > self.max_entries || self.bytes() > self.max_bytes
                {
                    if !self.evict_oldest_result() {
                        break;
                    }
                }
            }

            /// A claim; a claim answered `Claimed` gets its lease from the store with
            /// [`Model::leased`].
            pub(super) fn claim(
                &mut self,
                key: &IdempotencyKey,
                ttl: Duration,
                now: Instant,
            ) -> Answer {
                self.expire(now);
                let id = id(key);
                if let Some(entry) = self.entries.get_mut(&id) {
                    return match &mut entry.value {
                        ModelValue::Done { result, .. } => Answer::Done(result.clone()),
                        ModelValue::Abandoned => Answer::Abandoned(entry.expires - now),
                        ModelValue::Pending {
                            holder,
                            lease,
                            since,
                        } => match &key.holder {
                            Some(own)
                                if holder.as_deref() == Some(own.token.as_str())
                                    && now - *since >= own.stale_after =>
                            {
                                *since = now;
                                lease.clear();
                                entry.expires = entry.expires.max(now + own.stale_after);
                                Answer::Claimed
                            }
                            _ => Answer::Pending,
                        },
                    };
                }
                self.make_room(1);
                if self.entries.len() >= self.max_entries {
                    return Answer::Full;
                }
                self.entries.insert(
                    id,
                    ModelEntry {
                        expires: now + ttl,
                        value: ModelValue::Pending {
                            holder: key.holder.as_ref().map(|own| own.token.clone()),
                            lease: String::new(),
                            since: now,
                        },
                    },
                );
                Answer::Claimed
            }

            pub(super) fn leased(&mut self, key: &IdempotencyKey, claim: &Claim) {
                if let Some(ModelEntry {
                    value: ModelValue::Pending { lease, .. },
                    ..
                }) = self.entries.get_mut(&id(key))
                {
                    lease.clone_from(&claim.holder);
                }
            }

            fn held(&mut self, key: &IdempotencyKey, claim: &Claim) -> Option<&mut ModelEntry> {
                self.entries.get_mut(&id(key)).filter(|entry| {
                    matches!(&entry.value, ModelValue::Pending { lease, .. } if *lease == claim.holder)
                })
            }

            pub(super) fn complete(
                &mut self,
                key: &IdempotencyKey,
                claim: &Claim,
                result: StoredResult,
                now: Instant,
            ) {
                self.expire(now);
                self.completions += 1;
                let completed = self.completions;
                if let Some(entry) = self.held(key, claim) {
                    entry.value = ModelValue::Done { result, completed };
                    self.make_room(0);
                }
            }

            pub(super) fn release(&mut self, key: &IdempotencyKey, claim: &Claim, now: Instant) {
                self.expire(now);
                if self.held(key, claim).is_some() {
                    self.entries.remove(&id(key));
                }
            }

            pub(super) fn abandon(&mut self, key: &IdempotencyKey, claim: &Claim, now: Instant) {
                self.expire(now);
                if let Some(entry) = self.held(key, claim) {
                    entry.value = ModelValue::Abandoned;
                }
            }
        }
    }

    #[derive(Debug, Clone)]
    enum Op {
        Claim {
            key: usize,
            holder: Option<usize>,
            ttl_ms: u64,
        },
        Complete {
            claim: usize,
            size: usize,
        },
        Release {
            claim: usize,
        },
        Abandon {
            claim: usize,
        },
        Advance {
            ms: u64,
        },
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            // Mostly a few windows (each with an expiry queue of its own), some of any length.
            4 => (
                0..5_usize,
                proptest::option::of(0..2_usize),
                prop_oneof![3 => proptest::sample::select(vec![500, 1_000, 2_000_u64]), 1 => 100..3_000_u64],
            )
                .prop_map(|(key, holder, ttl_ms)| Op::Claim { key, holder, ttl_ms }),
            3 => (any::<usize>(), 0..24_usize).prop_map(|(claim, size)| Op::Complete { claim, size }),
            1 => any::<usize>().prop_map(|claim| Op::Release { claim }),
            1 => any::<usize>().prop_map(|claim| Op::Abandon { claim }),
            2 => (0..2_000_u64).prop_map(|ms| Op::Advance { ms }),
        ]
    }

    /// The key of a claim op: two calls (tokens) that can resume, with their own stale_after.
    fn op_key(n: usize, holder: Option<usize>) -> IdempotencyKey {
        IdempotencyKey {
            holder: holder.map(|h| Holder {
                token: format!("call-{h}"),
                stale_after: Duration::from_millis([300, 1_500][h % 2]),
            }),
            ..key(n)
        }
    }

    fn run_against_model(max_entries: usize, max_bytes: usize, ops: &[Op]) {
        let executor = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .start_paused(true)
            .build()
            .expect("an executor");
        executor.block_on(async {
            let store = MemoryIdempotency::new(max_entries, max_bytes);
            let mut model = model::Model::new(max_entries, max_bytes);
            let mut claims: Vec<(IdempotencyKey, Claim)> = Vec::new();
            for (step, op) in ops.iter().enumerate() {
                let now = Instant::now();
                match op {
                    Op::Claim {
                        key,
                        holder,
                        ttl_ms,
                    } => {
                        let key = op_key(*key, *holder);
                        let ttl = Duration::from_millis(*ttl_ms);
                        let expected = model.claim(&key, ttl, now);
                        let answer = store.claim(key.clone(), ttl).await;
                        let answer = match answer {
                            Ok(Lookup::Claimed(claim)) => {
                                model.leased(&key, &claim);
                                claims.push((key, claim));
                                model::Answer::Claimed
                            }
                            Ok(Lookup::Done(result)) => model::Answer::Done(result),
                            Ok(Lookup::Pending) => model::Answer::Pending,
                            Ok(Lookup::Abandoned {
                                expires_in: Some(left),
                            }) => model::Answer::Abandoned(left),
                            Err(_) => model::Answer::Full,
                            Ok(other) => panic!("step {step}: {other:?}"),
                        };
                        assert_eq!(answer, expected, "step {step}: {op:?}");
                    }
                    Op::Complete { claim, size } => {
                        if let Some((key, claim)) = pick(&claims, *claim) {
                            let result = result(&"x".repeat(*size));
                            model.complete(&key, &claim, result.clone(), now);
                            store.complete(key, claim, result).await.expect("answers");
                        }
                    }
                    Op::Release { claim } => {
                        if let Some((key, claim)) = pick(&claims, *claim) {
                            model.release(&key, &claim, now);
                            let failure = SharedFailure {
                                kind: "failed".into(),
                                message: "no".into(),
                            };
                            store.release(key, claim, failure).await.expect("answers");
                        }
                    }
                    Op::Abandon { claim } => {
                        if let Some((key, claim)) = pick(&claims, *claim) {
                            model.abandon(&key, &claim, now);
                            store.abandon(key, claim).await.expect("answers");
                        }
                    }
                    Op::Advance { ms } => {
                        tokio::time::advance(Duration::from_millis(*ms)).await;
                    }
                }
                model.expire(Instant::now());
                assert_eq!(store.len(), model.entries.len(), "step {step}: {op:?}");
                let state = store.lock();
                assert_eq!(state.bytes, model.bytes(), "step {step}: {op:?}");
                assert!(state.bytes <= max_bytes, "step {step}");
                assert!(state.entries.len() <= max_entries.max(1), "step {step}");
            }
        });
    }

    /// A claim issued earlier (a recent one more often, stale ones too).
    fn pick(claims: &[(IdempotencyKey, Claim)], n: usize) -> Option<(IdempotencyKey, Claim)> {
        if claims.is_empty() {
            return None;
        }
        let back = n % claims.len().min(4);
        claims.get(claims.len() - 1 - back).cloned()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        #[test]
        fn the_store_answers_as_a_map_scanned_whenever_it_must_expire_or_evict(
            max_entries in 1..5_usize,
            max_bytes in 10..80_usize,
            ops in proptest::collection::vec(op(), 1..80),
        ) {
            run_against_model(max_entries, max_bytes, &ops);
        }
    }
}
