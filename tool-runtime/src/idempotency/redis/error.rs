//! [`RedisStoreError`]: what went wrong talking to Redis, and how each store interface
//! answers it.

use std::io;
use std::time::Duration;

use ::redis::RedisError;

use crate::idempotency::store::StoreError;

/// What went wrong talking to Redis.
///
/// The idempotency operations answer it as a [`StoreError`] (its text); the approval
/// operations as an [`io::Error`] whose kind says what happened (`TimedOut`,
/// `ConnectionRefused`, `ConnectionAborted`, `InvalidData`, `Other`) and whose
/// [`get_ref`](io::Error::get_ref) downcasts to this error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RedisStoreError {
    /// The server answered an error, or the connection failed.
    #[error("redis: {0}")]
    Redis(#[from] RedisError),
    /// No answer within the command timeout.
    #[error("redis did not answer within {0:?}")]
    Timeout(Duration),
    /// A value the store cannot read.
    #[error("unreadable value at `{key}`: {source}")]
    Decode {
        /// The key that held it.
        key: String,
        /// Why it could not be read.
        source: serde_json::Error,
    },
    /// A value the store cannot write.
    #[error("cannot encode the value for `{key}`: {source}")]
    Encode {
        /// The key it was meant for.
        key: String,
        /// Why it could not be written.
        source: serde_json::Error,
    },
    /// A script answered something the store does not know (another version's script under
    /// the same name?).
    #[error("unexpected answer for `{key}`: {answer}")]
    Unexpected {
        /// The key the script ran on.
        key: String,
        /// What it answered.
        answer: String,
    },
    /// A claim was answered, but not confirmed within the command timeout: the call does not
    /// run, and the claim lapses with its lease.
    #[error("the claim on `{key}` was not confirmed within {timeout:?}; it lapses by itself")]
    Unconfirmed {
        /// The key claimed.
        key: String,
        /// The command timeout.
        timeout: Duration,
    },
}

impl From<RedisStoreError> for StoreError {
    fn from(error: RedisStoreError) -> Self {
        StoreError::new(error)
    }
}

impl From<RedisStoreError> for io::Error {
    fn from(error: RedisStoreError) -> Self {
        let kind = match &error {
            RedisStoreError::Timeout(_) => io::ErrorKind::TimedOut,
            RedisStoreError::Redis(redis) if redis.is_timeout() => io::ErrorKind::TimedOut,
            RedisStoreError::Redis(redis) if redis.is_connection_refusal() => {
                io::ErrorKind::ConnectionRefused
            }
            RedisStoreError::Redis(redis) if redis.is_connection_dropped() => {
                io::ErrorKind::ConnectionAborted
            }
            RedisStoreError::Redis(_) => io::ErrorKind::Other,
            RedisStoreError::Decode { .. }
            | RedisStoreError::Encode { .. }
            | RedisStoreError::Unexpected { .. } => io::ErrorKind::InvalidData,
            RedisStoreError::Unconfirmed { .. } => io::ErrorKind::TimedOut,
        };
        io::Error::new(kind, error)
    }
}
