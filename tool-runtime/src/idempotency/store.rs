//! Where the idempotency layer keeps its claims and results: the [`IdempotencyStore`] trait.
//!
//! A key moves through two states: *pending* (claimed by one execution, identified by a holder
//! token) and *done* (the execution succeeded; its result is kept until the key expires). The
//! window counts from the first claim: completing keeps the remaining time. Only success is
//! kept: a failed execution releases its claim, and only if it still holds it.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tool_core::BoxFuture;

/// The identity of one idempotent execution. A store names its entry by `scope`, `tool` and
/// `digest`; `arguments_digest` is kept with the entry (an explicit key reused with other
/// arguments finds the first call's entry and is refused).
///
/// What the tool itself reads as its key (`ctx.idempotency_key()`, to forward downstream) is
/// the explicit key the caller supplied, as given, or else `digest`: the same for the same
/// call, different for another session (or tenant scope), another tool, another version or
/// other arguments.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyKey {
    /// Whose calls share results: the session by default, or a configured tenant.
    pub scope: String,
    /// The tool.
    pub tool: String,
    /// SHA-256 (lowercase hex) of the fingerprint: the scope, the tool, its version and the
    /// canonical validated arguments (each length-prefixed), or the explicit key the caller
    /// supplied.
    pub digest: String,
    /// SHA-256 (lowercase hex) of the canonical arguments: an explicit key reused with other
    /// arguments is refused by comparing it.
    pub arguments_digest: String,
    /// Who claims: the call itself (a token from its session and call id) and when its own
    /// earlier claim is certainly abandoned; `None` for a fresh random token per claim.
    pub holder: Option<Holder>,
}

/// The identity a call claims with, so that the same call resumed after a crash takes over
/// its own abandoned claim instead of waiting for itself, while a copy of the call sent again
/// while the first still runs (an upstream retry) waits for it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Holder {
    /// The call's token.
    pub token: String,
    /// How long after its claim the call cannot still be running (its timeout on every
    /// attempt, and the delays between them): past it, a claim with the same token is
    /// abandoned and the call may take it over.
    pub stale_after: Duration,
}

/// What a successful execution returned, as kept for replays.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredResult {
    /// The digest of the arguments that produced it.
    pub arguments_digest: String,
    /// The tool's output as its reader got it, secrets redacted (the store never keeps one
    /// in clear), as JSON text.
    pub output: String,
    /// The page metadata of a pagination tool's output, as JSON text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<String>,
    /// Whether the output is content blocks ([`Contents`](crate::Contents)), replayed as
    /// blocks.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub content_blocks: bool,
}

/// How a failed execution ended, for the concurrent duplicates that shared it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SharedFailure {
    /// The error's kind.
    pub kind: String,
    /// The error's message.
    pub message: String,
}

/// A claim on a key: only its holder completes or releases it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    /// A random token naming this claim; a takeover gets a new one, so the run it took over
    /// from cannot complete or release it.
    pub holder: String,
}

/// What a store found for a key.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Lookup {
    /// The key was free: this caller holds it now and runs the call.
    Claimed(Claim),
    /// A previous execution succeeded within the window: its result.
    Done(StoredResult),
    /// Another execution holds the key.
    Pending,
    /// The execution that claimed the key was stopped mid-flight (timed out, cancelled,
    /// panicked) and [abandoned](IdempotencyStore::abandon) its claim: it may have done its
    /// work, so nothing runs the call again until the key expires, `expires_in` from now
    /// (when the store can tell). Answered at once: no execution is left to wait for.
    Abandoned {
        /// How long until the key expires and the call may run again.
        expires_in: Option<Duration>,
    },
    /// The execution this caller waited for failed (stores that share an in-flight
    /// execution's failure with its waiters; others answer [`Lookup::Claimed`] or
    /// [`Lookup::Pending`] after a failure).
    Failed(SharedFailure),
}

/// The store could not answer (unreachable, timed out, a value it cannot read), with the
/// error that says why as its [`source`](std::error::Error::source). The same shape as the
/// artifact store's [`ArtifactError`](crate::output::ArtifactError): a store of your own wraps
/// its client's error, or a message.
#[derive(Debug, Clone)]
pub struct StoreError {
    source: std::sync::Arc<dyn std::error::Error + Send + Sync>,
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "the idempotency store is unavailable: {}", self.source)
    }
}

impl std::error::Error for StoreError {
    // The store's own error, not the `Arc` that makes this error cheap to clone: a caller
    // downcasts it to its client's type.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&*self.source)
    }
}

impl StoreError {
    /// An error of a store: its client's error (a connection's, a driver's) or a message.
    pub fn new(source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self {
            source: std::sync::Arc::from(source.into()),
        }
    }
}

/// Claims, results and releases of idempotent executions, shared by every instance that
/// serves the same sessions. Arguments are owned, so a call's path keeps the returned future
/// without borrowing from itself.
pub trait IdempotencyStore: Send + Sync + 'static {
    /// Claims `key` for `ttl` (from now) if it is free, or takes it over if it is pending with
    /// the key's own holder token and older than its `stale_after` (the window keeps counting
    /// from the first claim); otherwise says what holds it.
    fn claim(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>>;

    /// Waits up to `wait` for the execution holding `key` to end, then looks again (claiming
    /// the key for `ttl` if it became free). Answers [`Lookup::Pending`] when still held.
    fn wait(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
        wait: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>>;

    /// Keeps the result of the execution `claim` holds; the key keeps its remaining time.
    fn complete(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        result: StoredResult,
    ) -> BoxFuture<'_, Result<(), StoreError>>;

    /// Whether a [`wait`](IdempotencyStore::wait) future dropped before it answers leaves
    /// nothing behind. Only then does a cancelled turn stop a duplicate's wait at once; a
    /// store that may be claiming the key for the caller when the future is dropped (a round
    /// trip in flight) would leave a claim nothing runs, so its wait is let answer. Default
    /// `false`.
    fn wait_is_cancel_safe(&self) -> bool {
        false
    }

    /// Marks the claim as left by a run the runtime stopped mid-flight (timed out, cancelled,
    /// panicked): it may have done its work, so the same call must not take it over; the key
    /// stays claimed until its window ends, and a claim or wait on it answers
    /// [`Lookup::Abandoned`] at once.
    fn abandon(&self, key: IdempotencyKey, claim: Claim) -> BoxFuture<'_, Result<(), StoreError>> {
        let _ = (key, claim);
        Box::pin(std::future::ready(Ok(())))
    }

    /// Releases the key after the execution `claim` holds failed, only if `claim` still holds
    /// it (a late release never removes another holder's claim). `failure` is shared with the
    /// waiters of stores that share it.
    fn release(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        failure: SharedFailure,
    ) -> BoxFuture<'_, Result<(), StoreError>>;
}

impl<T: IdempotencyStore + ?Sized> IdempotencyStore for std::sync::Arc<T> {
    fn claim(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        (**self).claim(key, ttl)
    }

    fn wait(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
        wait: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        (**self).wait(key, ttl, wait)
    }

    fn complete(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        result: StoredResult,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        (**self).complete(key, claim, result)
    }

    fn release(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        failure: SharedFailure,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        (**self).release(key, claim, failure)
    }

    fn abandon(&self, key: IdempotencyKey, claim: Claim) -> BoxFuture<'_, Result<(), StoreError>> {
        (**self).abandon(key, claim)
    }

    fn wait_is_cancel_safe(&self) -> bool {
        (**self).wait_is_cancel_safe()
    }
}
