//! An idempotency store that answers as the one it wraps and remembers what it was asked.

use std::sync::Mutex;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

use tool_runtime::BoxFuture;
use tool_runtime::idempotency::{
    Claim, IdempotencyKey, IdempotencyStore, Lookup, SharedFailure, StoreError, StoredResult,
};

/// Answers as `inner`, counting each kind of request and keeping a copy of every result it
/// is asked to complete.
#[derive(Debug, Default)]
pub struct Recording<S> {
    inner: S,
    claims: AtomicU32,
    waits: AtomicU32,
    completions: AtomicU32,
    releases: AtomicU32,
    abandons: AtomicU32,
    kept: Mutex<Vec<StoredResult>>,
}

/// How often a [`Recording`] store was asked each thing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Requests {
    /// `claim`.
    pub claims: u32,
    /// `wait`.
    pub waits: u32,
    /// `complete`.
    pub completions: u32,
    /// `release`.
    pub releases: u32,
    /// `abandon`.
    pub abandons: u32,
}

impl Requests {
    /// Every request, of any kind.
    pub fn total(self) -> u32 {
        self.claims + self.waits + self.completions + self.releases + self.abandons
    }

    /// What was asked since `before`.
    pub fn since(self, before: Self) -> Self {
        Self {
            claims: self.claims - before.claims,
            waits: self.waits - before.waits,
            completions: self.completions - before.completions,
            releases: self.releases - before.releases,
            abandons: self.abandons - before.abandons,
        }
    }
}

impl<S> Recording<S> {
    /// Wraps `inner`.
    pub fn new(inner: S) -> Self {
        Self {
            inner,
            claims: AtomicU32::new(0),
            waits: AtomicU32::new(0),
            completions: AtomicU32::new(0),
            releases: AtomicU32::new(0),
            abandons: AtomicU32::new(0),
            kept: Mutex::default(),
        }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// How often it was asked each thing so far.
    pub fn requests(&self) -> Requests {
        let load = |count: &AtomicU32| count.load(Ordering::SeqCst);
        Requests {
            claims: load(&self.claims),
            waits: load(&self.waits),
            completions: load(&self.completions),
            releases: load(&self.releases),
            abandons: load(&self.abandons),
        }
    }

    /// Every result it was asked to complete, in order.
    pub fn kept(&self) -> Vec<StoredResult> {
        self.kept
            .lock()
            .map(|kept| kept.clone())
            .unwrap_or_default()
    }
}

fn count(counter: &AtomicU32) {
    counter.fetch_add(1, Ordering::SeqCst);
}

impl<S: IdempotencyStore> IdempotencyStore for Recording<S> {
    fn claim(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        count(&self.claims);
        self.inner.claim(key, ttl)
    }

    fn wait(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
        wait: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        count(&self.waits);
        self.inner.wait(key, ttl, wait)
    }

    fn complete(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        result: StoredResult,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        count(&self.completions);
        if let Ok(mut kept) = self.kept.lock() {
            kept.push(result.clone());
        }
        self.inner.complete(key, claim, result)
    }

    fn wait_is_cancel_safe(&self) -> bool {
        self.inner.wait_is_cancel_safe()
    }

    fn abandon(&self, key: IdempotencyKey, claim: Claim) -> BoxFuture<'_, Result<(), StoreError>> {
        count(&self.abandons);
        self.inner.abandon(key, claim)
    }

    fn release(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        failure: SharedFailure,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        count(&self.releases);
        self.inner.release(key, claim, failure)
    }
}
