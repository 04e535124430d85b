//! [`RedisStore`]: idempotency claims, pending approvals, runs' records and route decisions in
//! Redis, shared by every process that connects to the same server (feature `redis`).
//!
//! # Key layout
//!
//! Every key starts with the store's prefix (`tools` unless [`RedisStore::with_prefix`] says
//! otherwise). Each variable segment (scope, tool, session, request id) is escaped, `%` as
//! `%25` and `:` as `%3A`, so no two different keys share the same text (scope `a:b` with tool
//! `c` never meets scope `a` with tool `b:c`).
//!
//! | key | type | holds | expires |
//! |---|---|---|---|
//! | `<prefix>:idem:<scope>:<tool>:<digest>` | string | the claim or the result, JSON | a claim not yet confirmed: its lease (twice the command timeout, at most the window); then the idempotency window, from the first claim |
//! | `<prefix>:approval:<session>:<request_id>` | string | a [`PendingApproval`], JSON | [`RedisStore::with_approval_ttl`] (24 h) after it was put |
//! | `<prefix>:approvals:<session>` | sorted set | the session's pending request ids (escaped), scored by arrival | with the session's newest request |
//! | `<prefix>:approval-seq` | string | the arrival counter that orders requests across processes | never |
//! | `<prefix>:run:<session>:<run>` | list | a run's record: one [`RunEvent`](crate::run::RunEvent) per element, JSON, oldest first | [`RedisStore::with_run_ttl`] (7 days) after its last event |
//! | `<prefix>:route:<session>:<request>:<step>` | string | a [`RouteDecision`](crate::routing::RouteDecision), JSON, the first recorded | [`RedisStore::with_run_ttl`] (7 days) after it was recorded |
//!
//! An idempotency value is
//! `{"state":"pending","holder":"…","lease":"…","arguments_digest":"…","confirmed":…,"since":…}`
//! while an execution holds the key (`holder`: the call's token, which may take a claim its
//! crashed run left over; `lease`: this claim's own token, new on each takeover; `confirmed`:
//! whether the claimer heard its claim answered in time, see below; `since`: the claim's time
//! on the server, in milliseconds; a claim left by a run the runtime stopped mid-flight also
//! has `"abandoned":true`, and a holder no call has) and `{"state":"done","result":{…}}` (a
//! [`StoredResult`]) once it succeeded.
//!
//! # Claims the store gave up on
//!
//! A claim whose answer does not arrive within the command timeout is answered as an error,
//! and the call does not run; but the server may still apply it (it was paused or slow, or
//! the answer was lost on the way back). So a claim is written with a short lease (twice the
//! command timeout, at most the window) and `"confirmed":false`, and the store confirms it
//! once it has heard it answered. The confirmation gives the key the rest of the window, and
//! the server applies it only while the store can still hear its answer: within what is left
//! of the command timeout since the claim was sent, counted on the server's clock from
//! `since` (a claim is applied before its answer is heard, so this never outlasts the store's
//! own deadline). Only a confirmed claim runs, so a run in progress, or one that crashed after
//! doing its work, holds the key for the window, as before; a claim nobody confirmed lapses
//! with its lease, and a repeat then runs. The same call (its own holder token) claims afresh
//! an unconfirmed claim of its own once it could be abandoned, without waiting for the lease.
//!
//! When the confirmation is not answered in time, the call does not run either, and the store
//! releases the claim in the background (six tries, the pauses between them doubling from
//! 100 ms): a confirmation applied whose answer was lost would hold the key for the window
//! otherwise. That is the one case that needs the server to answer this process again; a
//! store cut off from the server for longer leaves such a claim to its window (its repeats
//! are refused, never run twice).
//!
//! # Round trips
//!
//! Every operation is one Lua script, run with `EVALSHA`: a claim that finds a result (a hit),
//! a claim that finds another execution's, and a claim left abandoned cost one round trip; a
//! claim that wins costs two (the claim, its confirmation), so a first run costs three with
//! its completion (or its release, or its abandonment); the tool starts after the second.
//! That third round trip is the price of the lease above: without it, either a claim the
//! store gave up on would hold the key for the window, or a run that crashed in its first
//! seconds would let a copy run again. The scripts are loaded when the store connects (one
//! round trip for all, and one more to read the server's persistence settings); a server that
//! lost them (a restart, `SCRIPT FLUSH`) answers `NOSCRIPT` once per script, and the client
//! loads it again (two more round trips, once). `wait` polls the claim script with a backoff
//! of 10 ms doubling to 100 ms. An approval's `put`, `pending` and `take` are one round trip
//! each; `take` reads and deletes in one script, so across processes exactly one caller gets a
//! request.
//!
//! A run's `append` is one script too: it appends the event only if the record holds exactly
//! the position's number of events (else `AlreadyExists`: another process drives the run), and
//! gives the record its ttl again. `load` is one `LRANGE`. A route decision's `get` is one
//! `GET`; its `record` one script (`SET NX`, then `GET`), which answers the decision kept, so
//! two processes that decided at once go on with the first. A run's round (the model's
//! answer, then what its calls got) costs two appends: two round trips.
//!
//! | operation | round trips |
//! |---|---|
//! | claim: a hit, held elsewhere, or abandoned | 1 |
//! | claim that wins: claim, confirmation | 2 |
//! | first run: claim, confirmation, completion (or release, or abandonment) | 3 |
//! | `wait` | 1 per look |
//! | approval `put`, `pending`, `take` | 1 each |
//! | run `load`, `append`; decision `get`, `record` | 1 each |
//! | a run's round: its answer and its calls' answers appended | 2 |
//! | connect: load the scripts, read the persistence settings | 2, once |
//!
//! The scripts compute the approval keys they read from the session's index, so the store
//! suits a single Redis server (or a primary behind Sentinel), not Redis Cluster.
//!
//! # Bounds
//!
//! Every operation answers within the store's command timeout (2 s unless
//! [`RedisStore::connect_with_timeout`] says otherwise; a claim and its confirmation within
//! one timeout together; `wait` within its wait and one timeout more): an unreachable or
//! silent server is a [`StoreError`] (an [`io::Error`] for approvals), never a hang. The
//! connection is a [`ConnectionManager`], which reconnects after the server comes back.

mod codec;
mod error;
mod runs;
mod scripts;
#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::io;
use std::time::Duration;

use ::redis::aio::{ConnectionManager, ConnectionManagerConfig};
use ::redis::{Client, Script};
use tool_core::BoxFuture;

use super::store::{
    Claim, IdempotencyKey, IdempotencyStore, Lookup, SharedFailure, StoreError, StoredResult,
};
use crate::gates::{ApprovalStore, PendingApproval};
use codec::{Entry, EntryRef, encode, escape, ttl_millis};
use error::RedisStoreError;
use scripts::Scripts;

/// The prefix of every key unless [`RedisStore::with_prefix`] says otherwise.
const DEFAULT_PREFIX: &str = "tools";

/// How long one operation may take unless [`RedisStore::connect_with_timeout`] says
/// otherwise.
const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

/// How long a pending approval is kept unless [`RedisStore::with_approval_ttl`] says
/// otherwise.
const DEFAULT_APPROVAL_TTL: Duration = Duration::from_secs(24 * 60 * 60);

/// How long a run's record and its route decision are kept unless
/// [`RedisStore::with_run_ttl`] says otherwise.
const DEFAULT_RUN_TTL: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The first pause of [`IdempotencyStore::wait`] between two looks; it doubles up to
/// [`MAX_POLL_DELAY`].
const FIRST_POLL_DELAY: Duration = Duration::from_millis(10);

/// The longest pause of [`IdempotencyStore::wait`] between two looks.
const MAX_POLL_DELAY: Duration = Duration::from_millis(100);

/// How many times a claim the store gave up on after it was answered is released in the
/// background before the store stops trying (the pauses between them double from
/// [`FIRST_RELEASE_DELAY`]).
const RELEASE_ATTEMPTS: u32 = 6;

/// The first pause between two background releases of a claim the store gave up on.
const FIRST_RELEASE_DELAY: Duration = Duration::from_millis(100);
/// An [`IdempotencyStore`], an [`ApprovalStore`], a [`RunStore`](crate::run::RunStore) and a
/// [`DecisionStore`](crate::routing::DecisionStore) in Redis (feature `redis`): claims,
/// results, pending approvals, runs' records and route decisions shared by every process
/// connected to the same server.
///
/// Each operation is one Lua script (one round trip; a claim that wins, two: it is confirmed
/// before the call runs) and answers within the command timeout (2 s by default): an
/// unreachable server is an error, never a hang. The module documentation gives the key
/// layout, the scripts' contracts and what each operation costs.
///
/// Cloning is cheap: clones share the connection.
///
/// # Persistence
///
/// Exactly once holds only as long as the server keeps its keys: a server restarted with an
/// empty dataset has forgotten every claim and result, and a repeat after it runs the write
/// again. The server needs the append-only file (`appendonly yes`):
///
/// - `appendfsync always` syncs the file before each answer: a claim answered is on disk, at
///   the cost of a disk sync per write (each claim, confirmation and completion).
/// - `appendfsync everysec` (Redis's default once AOF is on) syncs once a second: a crash of
///   the machine (or of the server, when its disk falls behind) loses up to about a second of
///   claims and results, whose repeats then run again.
/// - RDB snapshots alone (`save`, with `appendonly no`) lose everything since the last
///   snapshot; with neither, a restart loses everything.
/// - Replicas are updated asynchronously: a failover to a replica can lose claims and results
///   the primary had answered. `WAIT` and `min-replicas-to-write` narrow that window; they do
///   not close it.
///
/// [`connect`](Self::connect) reads the server's settings (`CONFIG GET appendonly`,
/// `appendfsync`, `save`) and logs a warning through `tracing` when a restart would forget
/// claims (`appendonly no`), and, at info level, what `appendfsync everysec` or `no` still
/// risks. A server that refuses `CONFIG` (as many managed services do) is connected to all
/// the same, and that the settings could not be read is logged at info level: check the
/// service's persistence settings yourself.
///
/// ```no_run
/// # async fn demo() -> Result<(), tool_runtime::idempotency::StoreError> {
/// use tool_runtime::idempotency::RedisStore;
///
/// let store = RedisStore::connect("redis://127.0.0.1:6379/").await?.with_prefix("agent");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct RedisStore {
    connection: ConnectionManager,
    scripts: std::sync::Arc<Scripts>,
    prefix: String,
    command_timeout: Duration,
    approval_ttl: Duration,
    run_ttl: Duration,
}

impl fmt::Debug for RedisStore {
    // The connection's description may hold the URL's password: left out.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisStore")
            .field("prefix", &self.prefix)
            .field("command_timeout", &self.command_timeout)
            .field("approval_ttl", &self.approval_ttl)
            .field("run_ttl", &self.run_ttl)
            .finish_non_exhaustive()
    }
}

impl RedisStore {
    /// Connects to the Redis server at `url` (`redis://[:password@]host[:port][/db]`, or
    /// `rediss://` where the `redis` crate is built with TLS), with a command timeout of 2 s.
    ///
    /// Fails if the URL is malformed or the server does not answer within the timeout.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::connect_with_timeout(url, DEFAULT_COMMAND_TIMEOUT).await
    }

    /// Connects like [`connect`](Self::connect), with `command_timeout` bounding each
    /// operation (and the connection itself): past it, an operation answers an error.
    pub async fn connect_with_timeout(
        url: &str,
        command_timeout: Duration,
    ) -> Result<Self, StoreError> {
        let client = Client::open(url).map_err(RedisStoreError::from)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(command_timeout))
            .set_response_timeout(Some(command_timeout))
            .set_number_of_retries(2)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(command_timeout / 4);
        let connection = bounded(command_timeout, async {
            Ok(ConnectionManager::new_with_config(client, config).await?)
        })
        .await?;
        let store = Self {
            connection,
            scripts: std::sync::Arc::new(Scripts::new()),
            prefix: DEFAULT_PREFIX.to_owned(),
            command_timeout,
            approval_ttl: DEFAULT_APPROVAL_TTL,
            run_ttl: DEFAULT_RUN_TTL,
        };
        store.load_scripts().await?;
        store.check_persistence().await;
        Ok(store)
    }

    /// Prefixes every key with `prefix` instead of `tools` (several applications can share
    /// one server).
    #[must_use]
    pub fn with_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    /// Keeps pending approvals for `ttl` (24 h by default) after they were put; past it a
    /// request is gone and its decision finds nothing to resume.
    #[must_use]
    pub fn with_approval_ttl(mut self, ttl: Duration) -> Self {
        self.approval_ttl = ttl;
        self
    }

    /// The prefix of the store's keys.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// How long one operation may take before it answers an error.
    pub fn command_timeout(&self) -> Duration {
        self.command_timeout
    }

    /// The key of an idempotent execution: `<prefix>:idem:<scope>:<tool>:<digest>`, each
    /// segment escaped (`%` as `%25`, `:` as `%3A`; a hex digest is unchanged).
    pub fn idempotency_key(&self, key: &IdempotencyKey) -> String {
        format!(
            "{}:idem:{}:{}:{}",
            self.prefix,
            escape(&key.scope),
            escape(&key.tool),
            escape(&key.digest)
        )
    }

    /// The key of a pending approval: `<prefix>:approval:<session>:<request_id>`, session and
    /// id escaped (`%` as `%25`, `:` as `%3A`).
    pub fn approval_key(&self, session: &str, request_id: &str) -> String {
        format!(
            "{}{}",
            self.approval_key_prefix(session),
            escape(request_id)
        )
    }

    /// The sorted set of a session's pending request ids: `<prefix>:approvals:<session>`.
    pub fn approval_index_key(&self, session: &str) -> String {
        format!("{}:approvals:{}", self.prefix, escape(session))
    }

    fn approval_key_prefix(&self, session: &str) -> String {
        format!("{}:approval:{}:", self.prefix, escape(session))
    }

    fn approval_seq_key(&self) -> String {
        format!("{}:approval-seq", self.prefix)
    }

    /// Loads every script in one round trip, so the first call of each is one `EVALSHA`.
    async fn load_scripts(&self) -> Result<(), RedisStoreError> {
        let mut pipeline = ::redis::pipe();
        for source in &self.scripts.sources {
            pipeline.cmd("SCRIPT").arg("LOAD").arg(source).ignore();
        }
        let mut connection = self.connection.clone();
        bounded(self.command_timeout, async move {
            pipeline.query_async::<()>(&mut connection).await?;
            Ok(())
        })
        .await
    }

    /// Reads the server's persistence settings and says through `tracing` what a restart or a
    /// crash of the server would forget. Never an error: a server that refuses `CONFIG` is
    /// still used.
    async fn check_persistence(&self) {
        let mut pipeline = ::redis::pipe();
        for setting in ["appendonly", "appendfsync", "save"] {
            pipeline.cmd("CONFIG").arg("GET").arg(setting);
        }
        let mut connection = self.connection.clone();
        let settings = bounded(self.command_timeout, async move {
            Ok(pipeline
                .query_async::<Vec<HashMap<String, String>>>(&mut connection)
                .await?)
        })
        .await;
        let settings: HashMap<String, String> = match settings {
            Ok(settings) => settings.into_iter().flatten().collect(),
            Err(error) => {
                tracing::info!(
                    %error,
                    "cannot read the Redis server's persistence settings (CONFIG GET refused, \
                     as on many managed services): exactly once across a restart of the \
                     server needs appendonly yes; check the service's settings"
                );
                return;
            }
        };
        let setting = |name: &str| settings.get(name).map(String::as_str);
        match (
            setting("appendonly"),
            setting("appendfsync"),
            setting("save"),
        ) {
            (Some("no"), _, Some("") | None) => tracing::warn!(
                "the Redis server keeps nothing on disk (appendonly no, no snapshots): a \
                 restart forgets every idempotency claim and result, and a repeat after it runs \
                 the write again; set appendonly yes"
            ),
            (Some("no"), _, Some(save)) => tracing::warn!(
                save,
                "the Redis server keeps only RDB snapshots (appendonly no): a restart forgets \
                 the idempotency claims and results since the last snapshot, and a repeat of \
                 those runs the write again; set appendonly yes"
            ),
            (Some("yes"), Some("everysec"), _) => tracing::info!(
                "the Redis server syncs its append-only file once a second (appendfsync \
                 everysec): a crash of its machine can lose up to about a second of \
                 idempotency claims, whose repeats then run again"
            ),
            (Some("yes"), Some("no"), _) => tracing::info!(
                "the Redis server leaves syncing its append-only file to the operating system \
                 (appendfsync no): a crash of its machine can lose the idempotency claims of \
                 the last seconds, whose repeats then run again"
            ),
            (appendonly, appendfsync, save) => tracing::debug!(
                appendonly,
                appendfsync,
                save,
                "the Redis server's persistence settings"
            ),
        }
    }

    /// Runs the claim script once, and confirms a claim that wins.
    async fn claim_once(
        &self,
        redis_key: &str,
        key: &IdempotencyKey,
        ttl: Duration,
    ) -> Result<Lookup, RedisStoreError> {
        let sent = tokio::time::Instant::now();
        let holder = key
            .holder
            .as_ref()
            .map_or_else(new_holder, |own| own.token.clone());
        // This claim's own token: a takeover gets a new one, so the run it took over from (if
        // it was only paused) cannot complete or free the new holder's claim.
        let lease = new_holder();
        let (own, stale_after) = match &key.holder {
            Some(own) => (own.token.as_str(), ttl_millis(own.stale_after)),
            None => ("", 0),
        };
        let pending = encode(
            redis_key,
            &EntryRef::Pending {
                holder: &holder,
                lease: &lease,
                arguments_digest: &key.arguments_digest,
                confirmed: false,
            },
        )?;
        let claim_lease = self.claim_lease().min(ttl);
        let mut connection = self.connection.clone();
        let answer: Vec<String> = bounded(self.command_timeout, async move {
            Ok(self
                .scripts
                .claim
                .key(redis_key)
                .arg(pending)
                .arg(ttl_millis(claim_lease))
                .arg(own)
                .arg(stale_after)
                .invoke_async(&mut connection)
                .await?)
        })
        .await?;
        let unexpected = || RedisStoreError::Unexpected {
            key: redis_key.to_owned(),
            answer: format!("{answer:?}"),
        };
        match answer.iter().map(String::as_str).collect::<Vec<_>>()[..] {
            ["claimed"] => {
                self.confirm(redis_key, &lease, ttl, sent).await?;
                Ok(Lookup::Claimed(Claim { holder: lease }))
            }
            ["taken_over"] => Ok(Lookup::Claimed(Claim { holder: lease })),
            ["abandoned", left] => {
                let left: i64 = left.parse().map_err(|_| unexpected())?;
                Ok(Lookup::Abandoned {
                    expires_in: u64::try_from(left).ok().map(Duration::from_millis),
                })
            }
            ["found", text] => match serde_json::from_str(text) {
                Ok(Entry::Done { result }) => Ok(Lookup::Done(result)),
                Ok(Entry::Pending {}) => Ok(Lookup::Pending),
                Err(source) => Err(RedisStoreError::Decode {
                    key: redis_key.to_owned(),
                    source,
                }),
            },
            _ => Err(unexpected()),
        }
    }

    /// How long a claim holds the key until it is confirmed: twice the command timeout, so
    /// a confirmation applied as late as the claimer can still hear it finds the claim.
    fn claim_lease(&self) -> Duration {
        self.command_timeout.saturating_mul(2)
    }

    /// Confirms the claim `lease` that was sent at `sent` and answered: from then on it holds
    /// the key for the rest of the window (`ttl` from the claim). Within what is left of the
    /// command timeout since `sent`; the script applies it only that long after the claim,
    /// so a confirmation the server applies after this store gave up on it does nothing.
    async fn confirm(
        &self,
        redis_key: &str,
        lease: &str,
        ttl: Duration,
        sent: tokio::time::Instant,
    ) -> Result<(), RedisStoreError> {
        let left =
            (sent + self.command_timeout).saturating_duration_since(tokio::time::Instant::now());
        // Whole milliseconds, rounded down: the server's clock counts in them.
        let left_millis = u64::try_from(left.as_millis()).unwrap_or(u64::MAX);
        let mut connection = self.connection.clone();
        let confirmed: Result<i64, _> = bounded(left, async {
            Ok(self
                .scripts
                .confirm
                .key(redis_key)
                .arg(lease)
                .arg(ttl_millis(ttl))
                .arg(left_millis)
                .invoke_async(&mut connection)
                .await?)
        })
        .await;
        match confirmed {
            Ok(1) => Ok(()),
            Ok(_) => Err(RedisStoreError::Unconfirmed {
                key: redis_key.to_owned(),
                timeout: self.command_timeout,
            }),
            Err(error) => {
                // The confirmation may have been applied, its answer lost: released in the
                // background, or the key would be held for the window with nothing running.
                self.release_in_background(redis_key.to_owned(), lease.to_owned());
                Err(match error {
                    RedisStoreError::Timeout(_) => RedisStoreError::Unconfirmed {
                        key: redis_key.to_owned(),
                        timeout: self.command_timeout,
                    },
                    other => other,
                })
            }
        }
    }

    /// Releases the claim `lease` (that nothing runs) once the server answers, trying
    /// [`RELEASE_ATTEMPTS`] times with a doubling pause; a store used outside a Tokio runtime
    /// leaves the claim to its window.
    fn release_in_background(&self, redis_key: String, lease: String) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::warn!(
                key = %redis_key,
                "no Tokio runtime to release a claim nothing runs: it holds the key until its \
                 window ends"
            );
            return;
        };
        let store = self.clone();
        runtime.spawn(async move {
            let mut delay = FIRST_RELEASE_DELAY;
            for attempt in 1..=RELEASE_ATTEMPTS {
                match store
                    .holder_script(&store.scripts.release, &redis_key, &lease, "")
                    .await
                {
                    Ok(released) => {
                        tracing::debug!(
                            key = %redis_key,
                            released = released == 1,
                            "released a claim the store gave up on"
                        );
                        return;
                    }
                    Err(error) if attempt == RELEASE_ATTEMPTS => {
                        tracing::warn!(
                            key = %redis_key,
                            %error,
                            "could not release a claim the store gave up on: if its \
                             confirmation was applied, it holds the key until its window ends"
                        );
                    }
                    Err(_) => {
                        tokio::time::sleep(delay).await;
                        delay = delay.saturating_mul(2);
                    }
                }
            }
        });
    }

    async fn wait_for(
        &self,
        key: &IdempotencyKey,
        ttl: Duration,
        wait: Duration,
    ) -> Result<Lookup, RedisStoreError> {
        let redis_key = self.idempotency_key(key);
        let deadline = tokio::time::Instant::now() + wait;
        let mut delay = FIRST_POLL_DELAY;
        loop {
            let now = tokio::time::Instant::now();
            tokio::time::sleep(delay.min(deadline.saturating_duration_since(now))).await;
            let lookup = self.claim_once(&redis_key, key, ttl).await?;
            if !matches!(lookup, Lookup::Pending) || tokio::time::Instant::now() >= deadline {
                return Ok(lookup);
            }
            delay = (delay * 2).min(MAX_POLL_DELAY);
        }
    }

    async fn complete_claim(
        &self,
        key: &IdempotencyKey,
        claim: &Claim,
        result: &StoredResult,
    ) -> Result<(), RedisStoreError> {
        let redis_key = self.idempotency_key(key);
        let done = encode(&redis_key, &EntryRef::Done { result })?;
        let kept = self
            .holder_script(&self.scripts.complete, &redis_key, &claim.holder, &done)
            .await?;
        if kept == 0 {
            tracing::warn!(
                key = %redis_key,
                "idempotency claim lost before completion (expired or taken over): result not kept"
            );
        }
        Ok(())
    }

    async fn release_claim(
        &self,
        key: &IdempotencyKey,
        claim: &Claim,
    ) -> Result<(), RedisStoreError> {
        let redis_key = self.idempotency_key(key);
        let released = self
            .holder_script(&self.scripts.release, &redis_key, &claim.holder, "")
            .await?;
        if released == 0 {
            tracing::debug!(
                key = %redis_key,
                "idempotency claim already gone at release: nothing removed"
            );
        }
        Ok(())
    }

    /// Runs one of the scripts that act only for the claim's holder (complete, release,
    /// abandon): KEYS[1] the key, ARGV[1] the holder, ARGV[2] `extra`. Answers the script's
    /// 1 (done) or 0 (the claim no longer held the key).
    async fn holder_script(
        &self,
        script: &Script,
        redis_key: &str,
        holder: &str,
        extra: &str,
    ) -> Result<i64, RedisStoreError> {
        let mut connection = self.connection.clone();
        bounded(self.command_timeout, async {
            Ok(script
                .key(redis_key)
                .arg(holder)
                .arg(extra)
                .invoke_async(&mut connection)
                .await?)
        })
        .await
    }

    async fn abandon_claim(
        &self,
        key: &IdempotencyKey,
        claim: &Claim,
    ) -> Result<(), RedisStoreError> {
        let redis_key = self.idempotency_key(key);
        let token = new_holder();
        self.holder_script(&self.scripts.abandon, &redis_key, &claim.holder, &token)
            .await?;
        Ok(())
    }

    async fn put_approval(&self, pending: PendingApproval) -> io::Result<()> {
        let redis_key = self.approval_key(&pending.session, &pending.request_id);
        let text = encode(&redis_key, &pending)?;
        let index = self.approval_index_key(&pending.session);
        let seq = self.approval_seq_key();
        let member = escape(&pending.request_id);
        let mut connection = self.connection.clone();
        let kept: i64 = bounded(self.command_timeout, async {
            Ok(self
                .scripts
                .put_approval
                .key(&redis_key)
                .key(&index)
                .key(&seq)
                .arg(text)
                .arg(ttl_millis(self.approval_ttl))
                .arg(member.as_ref())
                .invoke_async(&mut connection)
                .await?)
        })
        .await?;
        if kept == 0 {
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "approval request `{}` is already pending",
                    pending.request_id
                ),
            ));
        }
        Ok(())
    }

    async fn pending_approvals(&self, session: &str) -> io::Result<Vec<PendingApproval>> {
        let index = self.approval_index_key(session);
        let key_prefix = self.approval_key_prefix(session);
        let mut connection = self.connection.clone();
        let texts: Vec<String> = bounded(self.command_timeout, async {
            Ok(self
                .scripts
                .pending_approvals
                .key(&index)
                .arg(&key_prefix)
                .invoke_async(&mut connection)
                .await?)
        })
        .await?;
        texts
            .iter()
            .map(|text| codec::decode(&index, text))
            .collect()
    }

    async fn take_approval(
        &self,
        session: &str,
        request_id: &str,
    ) -> io::Result<Option<PendingApproval>> {
        let redis_key = self.approval_key(session, request_id);
        let index = self.approval_index_key(session);
        let member = escape(request_id);
        let mut connection = self.connection.clone();
        let text: Option<String> = bounded(self.command_timeout, async {
            Ok(self
                .scripts
                .take_approval
                .key(&redis_key)
                .key(&index)
                .arg(member.as_ref())
                .invoke_async(&mut connection)
                .await?)
        })
        .await?;
        text.map(|text| codec::decode(&redis_key, &text))
            .transpose()
    }
}

impl IdempotencyStore for RedisStore {
    fn claim(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        Box::pin(async move {
            let redis_key = self.idempotency_key(&key);
            Ok(self.claim_once(&redis_key, &key, ttl).await?)
        })
    }

    fn wait(
        &self,
        key: IdempotencyKey,
        ttl: Duration,
        wait: Duration,
    ) -> BoxFuture<'_, Result<Lookup, StoreError>> {
        Box::pin(async move { Ok(self.wait_for(&key, ttl, wait).await?) })
    }

    fn complete(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        result: StoredResult,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move { Ok(self.complete_claim(&key, &claim, &result).await?) })
    }

    fn release(
        &self,
        key: IdempotencyKey,
        claim: Claim,
        _failure: SharedFailure,
    ) -> BoxFuture<'_, Result<(), StoreError>> {
        // Waiters in other processes poll the key: they find it free and claim it, so the
        // failure itself is not shared.
        Box::pin(async move { Ok(self.release_claim(&key, &claim).await?) })
    }

    fn abandon(&self, key: IdempotencyKey, claim: Claim) -> BoxFuture<'_, Result<(), StoreError>> {
        Box::pin(async move { Ok(self.abandon_claim(&key, &claim).await?) })
    }
}

impl ApprovalStore for RedisStore {
    fn put(&self, pending: PendingApproval) -> BoxFuture<'_, io::Result<()>> {
        Box::pin(self.put_approval(pending))
    }

    fn pending<'a>(&'a self, session: &'a str) -> BoxFuture<'a, io::Result<Vec<PendingApproval>>> {
        Box::pin(self.pending_approvals(session))
    }

    fn take<'a>(
        &'a self,
        session: &'a str,
        request_id: &'a str,
    ) -> BoxFuture<'a, io::Result<Option<PendingApproval>>> {
        Box::pin(self.take_approval(session, request_id))
    }
}

/// Runs `operation` for at most `limit`.
async fn bounded<T>(
    limit: Duration,
    operation: impl Future<Output = Result<T, RedisStoreError>>,
) -> Result<T, RedisStoreError> {
    tokio::time::timeout(limit, operation)
        .await
        .unwrap_or(Err(RedisStoreError::Timeout(limit)))
}

/// A new holder token: 128 random bits, hex.
fn new_holder() -> String {
    format!("{:032x}", rand::random::<u128>())
}
