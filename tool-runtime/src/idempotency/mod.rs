//! Exactly once: how a write runs once per key, and the store that remembers it.
//!
//! An application chooses the store and the layer's settings with an [`Idempotency`] value
//! passed to [`RuntimeBuilder::idempotency`](crate::RuntimeBuilder::idempotency):
//! [`MemoryIdempotency`] by default, a shared store (`RedisStore`, feature `redis`) when
//! several instances serve the same sessions. A store of its own implements
//! [`IdempotencyStore`] with the types here ([`IdempotencyKey`], [`Claim`], [`Lookup`],
//! [`StoredResult`], [`StoreError`]).
//!
//! A call of a tool that is neither read-only nor declared `idempotent` runs once per key
//! within a window (10 minutes by default), whether the model repeats it, a user re-sends it
//! or an upstream timeout retries it. The key is the scope (the session by default, or a
//! tenant) + the tool + its version + the canonical form of the validated arguments (key
//! order, an absent optional versus an explicit `null`, and filled-in defaults do not change
//! it), or an explicit key the caller supplies with the call
//! ([`ToolCall::with_idempotency_key`](crate::ToolCall::with_idempotency_key)).
//!
//! Only success is kept. A replay answers with the first call's result (`replayed: true`)
//! without running the tool, its retries or its timeout. The layer sits inside the gates: a
//! call they refuse never reaches the store.

mod memory;
#[cfg(feature = "redis")]
mod redis;
mod store;

use std::sync::Arc;
use std::time::Duration;

use sha2::{Digest, Sha256};
use tool_core::{ErrorKind, ToolError, ToolSpec};

pub use memory::MemoryIdempotency;
#[cfg(feature = "redis")]
pub use redis::RedisStore;
pub use store::{
    Claim, Holder, IdempotencyKey, IdempotencyStore, Lookup, SharedFailure, StoreError,
    StoredResult,
};

use crate::arguments::CallArguments;
use crate::session::Session;

/// What a call that finds its key held by a running execution gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ConcurrentDuplicates {
    /// It waits for that execution and receives its result or its error (the default: the
    /// model sees one answer, and the work is done once).
    #[default]
    Share,
    /// It is refused at once with `idempotency_in_progress` (as Stripe and AWS Lambda
    /// Powertools do): the caller decides when to ask again.
    Refuse,
}

/// Whose calls share results.
pub(crate) type ScopeOf = Arc<dyn Fn(&Session) -> String + Send + Sync>;

/// The idempotency layer's settings.
pub(crate) struct Layer {
    pub(crate) store: Arc<dyn IdempotencyStore>,
    pub(crate) ttl: Duration,
    /// How long a duplicate waits for the execution holding its key.
    pub(crate) wait: Duration,
    pub(crate) duplicates: ConcurrentDuplicates,
    /// Run writes without the layer when the store is unreachable (logged), instead of
    /// refusing them.
    pub(crate) fail_open: bool,
    pub(crate) scope: Option<ScopeOf>,
}

impl Default for Layer {
    fn default() -> Self {
        Self {
            store: Arc::new(MemoryIdempotency::default()),
            ttl: Duration::from_secs(600),
            wait: Duration::from_secs(10),
            duplicates: ConcurrentDuplicates::Share,
            fail_open: false,
            scope: None,
        }
    }
}

/// The idempotency layer's settings: the store that keeps claims and results, and how the
/// layer uses it. Passed to [`RuntimeBuilder::idempotency`](crate::RuntimeBuilder::idempotency).
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::idempotency::{Idempotency, MemoryIdempotency};
///
/// let settings = Idempotency::new(MemoryIdempotency::default())
///     .ttl(Duration::from_secs(3600))
///     .wait(Duration::from_secs(30));
/// # let _ = settings;
/// ```
#[must_use]
pub struct Idempotency {
    pub(crate) layer: Layer,
}

impl Idempotency {
    /// The layer over `store`, with the default settings: [`MemoryIdempotency`] is the
    /// default store; a shared store (Redis) when several instances serve the same sessions.
    pub fn new(store: impl IdempotencyStore) -> Self {
        Self {
            layer: Layer {
                store: Arc::new(store),
                ..Layer::default()
            },
        }
    }

    /// How long a write's result answers its repeats, counted from the first call. Default
    /// 10 minutes. A call that can run longer (its timeout on every attempt, the delays
    /// between) keeps its key that long instead, so no copy runs beside it; a tool without a
    /// timeout keeps it for the window only.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.layer.ttl = ttl;
        self
    }

    /// How long a repeat waits for the execution holding its key before it is answered
    /// `in_progress_elsewhere`. Default 10 seconds.
    pub fn wait(mut self, wait: Duration) -> Self {
        self.layer.wait = wait;
        self
    }

    /// Whether a repeat that arrives while the first execution runs shares its result (the
    /// default) or is refused (`idempotency_in_progress`).
    pub fn concurrent_duplicates(mut self, duplicates: ConcurrentDuplicates) -> Self {
        self.layer.duplicates = duplicates;
        self
    }

    /// Runs writes without the layer when its store is unreachable (each one logged), instead
    /// of refusing them (`idempotency_unavailable`, the default). Choose it only where a
    /// duplicate write costs less than a refused one.
    pub fn fail_open(mut self, fail_open: bool) -> Self {
        self.layer.fail_open = fail_open;
        self
    }

    /// Whose calls share results: by default each session's own; for example a tenant, so
    /// a user's repeat from a new session is still answered once.
    pub fn scope(mut self, scope: impl Fn(&Session) -> String + Send + Sync + 'static) -> Self {
        self.layer.scope = Some(Arc::new(scope));
        self
    }
}

impl Default for Idempotency {
    /// [`MemoryIdempotency`] with the default settings.
    fn default() -> Self {
        Self {
            layer: Layer::default(),
        }
    }
}

impl std::fmt::Debug for Idempotency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Idempotency")
            .field("ttl", &self.layer.ttl)
            .field("wait", &self.layer.wait)
            .field("concurrent_duplicates", &self.layer.duplicates)
            .field("fail_open", &self.layer.fail_open)
            .field("scope", &self.layer.scope.is_some())
            .finish_non_exhaustive()
    }
}

/// The key of one call, and what the tool is told.
pub(crate) struct CallKey {
    pub(crate) key: IdempotencyKey,
    /// Whether the caller supplied it (a reuse with other arguments is refused).
    pub(crate) explicit: bool,
    /// What the tool reads from its context: the explicit key, or the fingerprint's digest.
    pub(crate) for_tool: Arc<str>,
    /// How long a claim lasts: the window, or longer when the call can run longer.
    pub(crate) claim_for: Duration,
}

impl Layer {
    /// Whether the layer applies to `spec`: by the tool's own choice, else to every tool that
    /// is neither read-only nor idempotent.
    pub(crate) fn applies(spec: &ToolSpec) -> bool {
        match spec.idempotency() {
            Some(choice) => choice,
            None => !spec.execution().read_only && !spec.hints().idempotent,
        }
    }

    /// The key of a call of `spec` with `arguments` in `session`.
    /// `running_at_most`: how long the call can run, all attempts included (`None` without a
    /// timeout).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn key(
        &self,
        session: &Session,
        call_id: &str,
        spec: &ToolSpec,
        version: Option<&str>,
        arguments: &CallArguments<'_>,
        explicit: Option<&str>,
        running_at_most: Option<Duration>,
    ) -> CallKey {
        let scope = match &self.scope {
            Some(scope) => scope(session),
            None => session.id().to_owned(),
        };
        let arguments_digest = arguments.digest();
        let mut fingerprint = Sha256::new();
        match explicit {
            Some(key) => {
                fingerprint.update(b"key\n");
                fingerprint.update(key.as_bytes());
            }
            // The scope and the tool too, though the store names its entry by them: the
            // digest is what the tool forwards downstream, so two sessions (or two tools)
            // sending the same arguments must never share it.
            None => {
                for part in [
                    b"args v2".as_slice(),
                    scope.as_bytes(),
                    spec.name().as_bytes(),
                    version.unwrap_or_default().as_bytes(),
                    arguments_digest.as_bytes(),
                ] {
                    crate::hex::update_length_prefixed(&mut fingerprint, part);
                }
            }
        }
        let digest = crate::hex::encode(&fingerprint.finalize());
        let for_tool: Arc<str> = Arc::from(explicit.unwrap_or(&digest));
        // The call's own token: resumed after a crash (its run gone without an ending), once
        // that run cannot still be going, the same call takes its claim over. A run the
        // runtime stopped mid-flight abandons its claim instead (it may have done its work),
        // and a call without a timeout could run for ever: neither is ever taken over.
        let holder = running_at_most.map(|running_at_most| {
            let mut token = Sha256::new();
            for part in [scope.as_str(), session.id(), call_id, &digest] {
                crate::hex::update_length_prefixed(&mut token, part.as_bytes());
            }
            Holder {
                token: crate::hex::encode(&token.finalize()[..16]),
                stale_after: running_at_most.saturating_add(Duration::from_secs(1)),
            }
        });
        // A claim outlasting the window while its call can still run: a copy arriving after
        // the window waits for the run instead of running beside it.
        let claim_for = running_at_most.map_or(self.ttl, |running_at_most| {
            self.ttl
                .max(running_at_most.saturating_add(Duration::from_secs(1)))
        });
        CallKey {
            key: IdempotencyKey {
                scope,
                tool: spec.name().to_owned(),
                digest,
                arguments_digest: arguments_digest.to_owned(),
                holder,
            },
            claim_for,
            explicit: explicit.is_some(),
            for_tool,
        }
    }
}

/// The observation of a call whose key the store could not answer for.
pub(crate) fn unavailable(error: &StoreError) -> ToolError {
    ToolError::new(
        ErrorKind::IdempotencyUnavailable,
        "this change was not made: the record that keeps it from happening twice is unavailable",
    )
    .with_hint("try again in a moment")
    .with_details(
        serde_json::json!({ "reason": std::error::Error::source(error).map(ToString::to_string) }),
    )
}

/// An explicit key reused with other arguments.
pub(crate) fn key_reused() -> ToolError {
    ToolError::new(
        ErrorKind::IdempotencyKeyReused,
        "this idempotency key was already used with other arguments",
    )
    .with_hint("use a new key for a different request")
}

/// A duplicate refused while the first execution runs.
pub(crate) fn in_progress(elsewhere: bool) -> ToolError {
    if elsewhere {
        ToolError::new(
            ErrorKind::InProgressElsewhere,
            "the same call is still running elsewhere; its result is not known yet",
        )
        .with_hint("do not repeat it; check its effect later")
    } else {
        ToolError::new(
            ErrorKind::IdempotencyInProgress,
            "the same call is running now",
        )
        .with_hint("wait for its result instead of repeating it")
    }
}

/// A repeat of a call whose earlier run was stopped mid-flight and may have done its work.
pub(crate) fn outcome_unknown(expires_in: Option<Duration>) -> ToolError {
    // Rounded up: a retry at the time said is not refused again.
    let when = expires_in.map_or_else(
        || "once its idempotency window ends".to_owned(),
        |left| {
            let seconds = left.as_millis().div_ceil(1000).max(1);
            format!("in {seconds} s, when its idempotency window ends")
        },
    );
    ToolError::new(
        ErrorKind::OutcomeUnknown,
        format!(
            "an earlier run of this call was stopped before it finished and may have done its work; it can run again {when}"
        ),
    )
    .with_hint("check whether the change took effect before asking for it again")
    .with_details(serde_json::json!({
        "expires_in_ms": expires_in.map(|left| u64::try_from(left.as_millis()).unwrap_or(u64::MAX)),
    }))
}
