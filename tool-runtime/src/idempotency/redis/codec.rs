//! How the store writes to Redis: its idempotency values, its key segments and its expiries.

use std::borrow::Cow;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::error::RedisStoreError;
use crate::idempotency::store::StoredResult;

/// The longest expiry given to Redis, in milliseconds (about 146 million years): longer ones
/// would overflow the server's clock arithmetic.
pub(super) const MAX_TTL_MILLIS: u64 = 1 << 62;
/// An idempotency value as written.
#[derive(Serialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub(super) enum EntryRef<'a> {
    /// An execution holds the key.
    Pending {
        holder: &'a str,
        lease: &'a str,
        arguments_digest: &'a str,
        /// Whether the claimer heard its claim answered (always `false` as written: the
        /// confirmation sets it).
        confirmed: bool,
    },
    /// An execution succeeded.
    Done { result: &'a StoredResult },
}

/// An idempotency value as read.
#[derive(Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub(super) enum Entry {
    /// An execution holds the key.
    Pending {},
    /// An execution succeeded.
    Done { result: StoredResult },
}
/// A JSON value the store wrote under `key`, read back; one it cannot read is `InvalidData`,
/// naming the key.
pub(super) fn decode<T: serde::de::DeserializeOwned>(key: &str, text: &str) -> std::io::Result<T> {
    serde_json::from_str(text).map_err(|source| {
        std::io::Error::from(RedisStoreError::Decode {
            key: key.to_owned(),
            source,
        })
    })
}

/// Escapes one key segment: `%` as `%25`, `:` as `%3A`.
pub(super) fn escape(segment: &str) -> Cow<'_, str> {
    if !segment.contains([':', '%']) {
        return Cow::Borrowed(segment);
    }
    let mut escaped = String::with_capacity(segment.len() + 8);
    for character in segment.chars() {
        match character {
            '%' => escaped.push_str("%25"),
            ':' => escaped.push_str("%3A"),
            other => escaped.push(other),
        }
    }
    Cow::Owned(escaped)
}
/// `ttl` in whole milliseconds for `PX`: at least 1 (Redis refuses 0), at most
/// [`MAX_TTL_MILLIS`].
pub(super) fn ttl_millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis())
        .unwrap_or(u64::MAX)
        .clamp(1, MAX_TTL_MILLIS)
}

pub(super) fn encode(key: &str, value: &impl Serialize) -> Result<String, RedisStoreError> {
    serde_json::to_string(value).map_err(|source| RedisStoreError::Encode {
        key: key.to_owned(),
        source,
    })
}
