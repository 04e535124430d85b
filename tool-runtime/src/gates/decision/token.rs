//! Signed decisions: the [`DecisionKeys`] that sign and verify them, the token a
//! [`SignedDecision`] carries, and the [`DecisionClaims`] it says once verified.
//!
//! # Token format
//!
//! ```text
//! base64url(payload) "." base64url(HMAC-SHA256(key, payload))
//! ```
//!
//! Both parts are base64url without padding (RFC 4648 §5). `payload` is a JSON object with
//! fixed field names, so no two different decisions share the same bytes:
//!
//! ```json
//! {"v":1,"kid":"k1","request_id":"r-1","call_id":"c-1","session":"s-1","principal":"ada",
//!  "tool":"refund","arguments_digest":"9f86…","decision":{"kind":"approve"},
//!  "expires_at":1767225600}
//! ```
//!
//! `decision` is `{"kind":"approve"}`, `{"kind":"approve_with","arguments":{…}}` or
//! `{"kind":"deny","reason":"…"}`; `expires_at` is in unix seconds; `principal` may be
//! `null`. The MAC covers the exact payload bytes. Every version of the payload keeps `v` and
//! `kid` at its top level: the key is chosen by `kid` before the MAC is checked, and nothing
//! else in the payload is read before the MAC is.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;

use crate::gates::approval::Approval;

type HmacSha256 = Hmac<Sha256>;

/// The payload version this runtime signs and accepts.
const PAYLOAD_VERSION: u64 = 1;

/// Tokens longer than this are refused before anything is decoded. Edited arguments are at
/// most [`Limits::max_argument_bytes`](crate::Limits) (1 MiB by default); base64 adds a third.
const MAX_TOKEN_LEN: usize = 4 << 20;

/// How long a decision stays valid unless [`DecisionKeys::with_ttl`] says otherwise.
const DEFAULT_TTL: Duration = Duration::from_secs(15 * 60);

/// One signing key: its id (the token's `kid`) and its secret.
#[derive(Clone)]
struct Key {
    id: String,
    secret: Vec<u8>,
}

/// A key rotated out: still accepted until `retire_at` (`None`: the grace overflowed the
/// clock, so never).
#[derive(Clone)]
struct RetiredKey {
    key: Key,
    retire_at: Option<SystemTime>,
}

/// The keys that sign and verify approval decisions (HMAC-SHA256).
///
/// One key signs (the current one); keys rotated out keep verifying for a grace period, so
/// decisions signed just before a rotation still resume. Every key has an id, written in the
/// token as `kid`; one id names one secret.
///
/// Secrets are expected to be at least [`MIN_SECRET_LEN`](Self::MIN_SECRET_LEN) (32) bytes
/// from a cryptographic random source. [`new`](Self::new) and [`rotate`](Self::rotate)
/// accept any secret (a test may use a short one); [`try_new`](Self::try_new) and
/// [`try_rotate`](Self::try_rotate) refuse short secrets and reused ids, and are what a
/// deployment should call.
///
/// `Debug` shows the key ids and the ttl, never a secret.
///
/// ```
/// use std::time::Duration;
/// use tool_runtime::approvals::DecisionKeys;
///
/// let keys = DecisionKeys::try_new("2025-01", [7u8; 32])?
///     .try_rotate("2025-02", [9u8; 32], Duration::from_secs(3600))?
///     .with_ttl(Duration::from_secs(600));
/// assert_eq!(keys.current_key_id(), "2025-02");
/// assert!(!format!("{keys:?}").contains("9, 9"));
/// # Ok::<(), tool_runtime::approvals::DecisionError>(())
/// ```
#[derive(Clone)]
pub struct DecisionKeys {
    current: Key,
    previous: Vec<RetiredKey>,
    ttl: Duration,
}

impl std::fmt::Debug for DecisionKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let previous: Vec<&str> = self
            .previous
            .iter()
            .map(|old| old.key.id.as_str())
            .collect();
        f.debug_struct("DecisionKeys")
            .field("current", &self.current.id)
            .field("previous", &previous)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

impl DecisionKeys {
    /// The length, in bytes, a secret is expected to have at least (the HMAC-SHA256 output
    /// size); [`try_new`](Self::try_new) and [`try_rotate`](Self::try_rotate) check it.
    pub const MIN_SECRET_LEN: usize = 32;

    /// Signs with `secret`, named `key_id`; decisions expire 15 minutes after signing.
    ///
    /// Any secret is accepted; a deployment should use at least
    /// [`MIN_SECRET_LEN`](Self::MIN_SECRET_LEN) random bytes, which
    /// [`try_new`](Self::try_new) checks.
    pub fn new(key_id: impl Into<String>, secret: impl Into<Vec<u8>>) -> Self {
        Self {
            current: Key {
                id: key_id.into(),
                secret: secret.into(),
            },
            previous: Vec::new(),
            ttl: DEFAULT_TTL,
        }
    }

    /// Like [`new`](Self::new), but refuses an empty id and a secret shorter than
    /// [`MIN_SECRET_LEN`](Self::MIN_SECRET_LEN) bytes.
    pub fn try_new(
        key_id: impl Into<String>,
        secret: impl Into<Vec<u8>>,
    ) -> Result<Self, DecisionError> {
        let (key_id, secret) = (key_id.into(), secret.into());
        check_key(&key_id, &secret)?;
        Ok(Self::new(key_id, secret))
    }

    /// Signs with a new key from now on; decisions signed with the old one are accepted for
    /// `grace` more.
    ///
    /// One id names one secret: if `key_id` is already in use (the current key, or a previous
    /// one), the keys it named are dropped without grace. [`try_rotate`](Self::try_rotate)
    /// refuses a reused id instead.
    #[must_use]
    pub fn rotate(
        mut self,
        key_id: impl Into<String>,
        secret: impl Into<Vec<u8>>,
        grace: Duration,
    ) -> Self {
        let key = Key {
            id: key_id.into(),
            secret: secret.into(),
        };
        self.previous.retain(|old| old.key.id != key.id);
        let old = std::mem::replace(&mut self.current, key);
        if old.id != self.current.id {
            self.previous.push(RetiredKey {
                key: old,
                retire_at: SystemTime::now().checked_add(grace),
            });
        }
        self
    }

    /// Like [`rotate`](Self::rotate), but refuses an empty id, a secret shorter than
    /// [`MIN_SECRET_LEN`](Self::MIN_SECRET_LEN) bytes, and an id already in use (current or
    /// previous).
    pub fn try_rotate(
        self,
        key_id: impl Into<String>,
        secret: impl Into<Vec<u8>>,
        grace: Duration,
    ) -> Result<Self, DecisionError> {
        let (key_id, secret) = (key_id.into(), secret.into());
        check_key(&key_id, &secret)?;
        if self.current.id == key_id || self.previous.iter().any(|old| old.key.id == key_id) {
            return Err(DecisionError::DuplicateKeyId(key_id));
        }
        Ok(self.rotate(key_id, secret, grace))
    }

    /// How long a signed decision stays valid (whole seconds; a ttl under a second makes
    /// decisions that expire at once).
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The id of the key that signs.
    pub fn current_key_id(&self) -> &str {
        &self.current.id
    }

    /// The id and secret of the key that signs (and seals).
    pub(in crate::gates) fn signing_key(&self) -> (&str, &[u8]) {
        (&self.current.id, &self.current.secret)
    }

    /// The secret `kid` names among every key held, current or rotated out, whatever its
    /// grace: what opens a pending request sealed under it.
    pub(in crate::gates) fn held_secret(&self, kid: &str) -> Result<&[u8], DecisionError> {
        if self.current.id == kid {
            return Ok(&self.current.secret);
        }
        self.previous
            .iter()
            .find(|old| old.key.id == kid)
            .map(|old| old.key.secret.as_slice())
            .ok_or_else(|| DecisionError::UnknownKey(kid.to_owned()))
    }

    /// The secret `kid` names, if it is accepted at `now`: the current key, or a previous one
    /// whose grace has not passed.
    fn secret_for(&self, kid: &str, now: SystemTime) -> Result<&[u8], DecisionError> {
        if self.current.id == kid {
            return Ok(&self.current.secret);
        }
        match self.previous.iter().find(|old| old.key.id == kid) {
            Some(old) if old.retire_at.is_none_or(|retire_at| now < retire_at) => {
                Ok(&old.key.secret)
            }
            Some(_) => Err(DecisionError::RetiredKey(kid.to_owned())),
            None => Err(DecisionError::UnknownKey(kid.to_owned())),
        }
    }
}

fn check_key(key_id: &str, secret: &[u8]) -> Result<(), DecisionError> {
    if key_id.is_empty() {
        return Err(DecisionError::EmptyKeyId);
    }
    if secret.len() < DecisionKeys::MIN_SECRET_LEN {
        return Err(DecisionError::ShortSecret {
            key_id: key_id.to_owned(),
            len: secret.len(),
        });
    }
    Ok(())
}

/// A decision about a pending call, signed: what the application hands back to resume it.
/// Opaque text, safe to send through a browser or a queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SignedDecision(String);

impl SignedDecision {
    /// The token's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<String> for SignedDecision {
    fn from(text: String) -> Self {
        Self(text)
    }
}

/// What a signed decision says, once verified.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DecisionClaims {
    pub(crate) request_id: String,
    pub(crate) call_id: String,
    pub(crate) session: String,
    pub(crate) principal: Option<String>,
    pub(crate) tool: String,
    pub(crate) arguments_digest: String,
    /// `Approve`, `ApproveWith` or `Deny`; never `Pending`.
    pub(crate) approval: Approval,
}

/// Why a decision could not be signed, why a signed decision was refused, or why keys were
/// refused ([`DecisionKeys::try_new`], [`DecisionKeys::try_rotate`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecisionError {
    /// The text is not a decision this runtime signs.
    #[error("the decision is malformed: {0}")]
    Malformed(String),
    /// The signature does not match any accepted key.
    #[error("the decision's signature is not valid")]
    BadSignature,
    /// The runtime has no decision keys
    /// ([`RuntimeBuilder::decision_keys`](crate::RuntimeBuilder::decision_keys)).
    #[error("this runtime has no decision keys")]
    NoKeys,
    /// The decision is past its expiry.
    #[error("the decision expired")]
    Expired,
    /// The decision names a key these keys do not have.
    #[error("the decision was signed with an unknown key `{0}`")]
    UnknownKey(String),
    /// The decision was signed with a key rotated out whose grace has passed.
    #[error(
        "the decision was signed with key `{0}`, which was rotated out and is no longer accepted"
    )]
    RetiredKey(String),
    /// The decision's payload version is not one this runtime reads.
    #[error("the decision's payload version {0} is not supported (expected {PAYLOAD_VERSION})")]
    UnsupportedVersion(u64),
    /// Only approve, approve-with and deny are decisions; a pending approval cannot be signed.
    #[error("a pending approval is not a decision and cannot be signed")]
    NotADecision,
    /// A key was given an empty id.
    #[error("a decision key needs a non-empty id")]
    EmptyKeyId,
    /// A key's secret is shorter than [`DecisionKeys::MIN_SECRET_LEN`].
    #[error(
        "decision key `{key_id}` has a {len}-byte secret; at least {min} random bytes are needed",
        min = DecisionKeys::MIN_SECRET_LEN
    )]
    ShortSecret {
        /// The key's id.
        key_id: String,
        /// The secret's length in bytes.
        len: usize,
    },
    /// A key id already names a key (the current one, or one rotated out).
    #[error("decision key id `{0}` is already in use; every key needs its own id")]
    DuplicateKeyId(String),
}

/// The payload's top level as read before the MAC is checked: only the key id.
#[derive(Deserialize)]
struct Envelope {
    kid: String,
}

/// The payload's version, read once the MAC is checked.
#[derive(Deserialize)]
struct Version {
    v: u64,
}

/// The signed payload, version 1.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PayloadV1 {
    v: u64,
    kid: String,
    request_id: String,
    call_id: String,
    session: String,
    principal: Option<String>,
    tool: String,
    arguments_digest: String,
    decision: WireDecision,
    expires_at: u64,
}

/// The decision as written in the payload.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum WireDecision {
    Approve,
    ApproveWith { arguments: Value },
    Deny { reason: String },
}

/// Seconds since the unix epoch (0 for a time before it).
fn unix_seconds(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |since| since.as_secs())
}

fn unix_seconds_rounded_up(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH).map_or(0, |since| {
        since
            .as_secs()
            .saturating_add(u64::from(since.subsec_nanos() > 0))
    })
}

fn mac_for(secret: &[u8], payload: &[u8]) -> HmacSha256 {
    // HMAC takes a key of any length: `new_from_slice` never fails for it.
    let mut mac = <HmacSha256 as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
    mac.update(payload);
    mac
}

/// Signs `claims` with the current key; the decision expires after the keys' ttl.
///
/// A claim whose approval is [`Approval::Pending`] is [`DecisionError::NotADecision`].
pub(crate) fn sign(
    keys: &DecisionKeys,
    claims: &DecisionClaims,
    now: SystemTime,
) -> Result<SignedDecision, DecisionError> {
    let decision = match &claims.approval {
        Approval::Approve => WireDecision::Approve,
        Approval::ApproveWith(arguments) => WireDecision::ApproveWith {
            arguments: arguments.clone(),
        },
        Approval::Deny(reason) => WireDecision::Deny {
            reason: reason.clone(),
        },
        Approval::Pending => return Err(DecisionError::NotADecision),
    };
    let payload = PayloadV1 {
        v: PAYLOAD_VERSION,
        kid: keys.current.id.clone(),
        request_id: claims.request_id.clone(),
        call_id: claims.call_id.clone(),
        session: claims.session.clone(),
        principal: claims.principal.clone(),
        tool: claims.tool.clone(),
        arguments_digest: claims.arguments_digest.clone(),
        decision,
        // Rounded up: a decision never expires before its whole ttl has passed.
        expires_at: unix_seconds_rounded_up(now).saturating_add(keys.ttl.as_secs()),
    };
    let bytes = serde_json::to_vec(&payload)
        .map_err(|error| DecisionError::Malformed(error.to_string()))?;
    Ok(SignedDecision(encode_token(&keys.current.secret, &bytes)))
}

/// The token for payload bytes: `base64url(payload) "." base64url(mac)`.
fn encode_token(secret: &[u8], payload: &[u8]) -> String {
    let tag = mac_for(secret, payload).finalize().into_bytes();
    let mut token = URL_SAFE_NO_PAD.encode(payload);
    token.push('.');
    token.push_str(&URL_SAFE_NO_PAD.encode(tag));
    token
}

/// Checks a decision's signature (current key, or a previous one within its grace) and
/// expiry, and returns its claims.
///
/// In order: the token's shape and base64; the key its `kid` names (unknown, or retired at
/// `now`, is refused); the MAC over the exact payload bytes, compared in constant time; the
/// version; the payload's fields; the expiry (`expires_at` must be after `now`). Nothing but
/// `kid` is read before the MAC is checked. No input panics.
pub(crate) fn verify(
    keys: &DecisionKeys,
    decision: &SignedDecision,
    now: SystemTime,
) -> Result<DecisionClaims, DecisionError> {
    let token = decision.as_str();
    if token.len() > MAX_TOKEN_LEN {
        return Err(malformed("the token is too long"));
    }
    let Some((payload_text, tag_text)) = token.split_once('.') else {
        return Err(malformed("expected two base64url parts separated by `.`"));
    };
    if payload_text.is_empty() || tag_text.is_empty() {
        return Err(malformed(
            "expected two non-empty base64url parts separated by `.`",
        ));
    }
    let payload = URL_SAFE_NO_PAD.decode(payload_text).map_err(|error| {
        DecisionError::Malformed(format!("the payload is not base64url: {error}"))
    })?;
    let tag = URL_SAFE_NO_PAD.decode(tag_text).map_err(|error| {
        DecisionError::Malformed(format!("the signature is not base64url: {error}"))
    })?;

    let envelope: Envelope = serde_json::from_slice(&payload).map_err(|error| {
        DecisionError::Malformed(format!("the payload is not a decision: {error}"))
    })?;
    let secret = keys.secret_for(&envelope.kid, now)?;
    mac_for(secret, &payload)
        .verify_slice(&tag)
        .map_err(|_| DecisionError::BadSignature)?;

    // Authentic from here on: the bytes are ones a holder of the key signed.
    let version: Version = serde_json::from_slice(&payload).map_err(|error| {
        DecisionError::Malformed(format!("the payload has no version: {error}"))
    })?;
    if version.v != PAYLOAD_VERSION {
        return Err(DecisionError::UnsupportedVersion(version.v));
    }
    let payload: PayloadV1 = serde_json::from_slice(&payload).map_err(|error| {
        DecisionError::Malformed(format!("the payload is not a decision: {error}"))
    })?;
    if payload.kid != envelope.kid {
        return Err(malformed("the payload names two keys"));
    }
    if payload.expires_at <= unix_seconds(now) {
        return Err(DecisionError::Expired);
    }
    let approval = match payload.decision {
        WireDecision::Approve => Approval::Approve,
        WireDecision::ApproveWith { arguments } => Approval::ApproveWith(arguments),
        WireDecision::Deny { reason } => Approval::Deny(reason),
    };
    Ok(DecisionClaims {
        request_id: payload.request_id,
        call_id: payload.call_id,
        session: payload.session,
        principal: payload.principal,
        tool: payload.tool,
        arguments_digest: payload.arguments_digest,
        approval,
    })
}

fn malformed(why: &str) -> DecisionError {
    DecisionError::Malformed(why.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arguments::digest::arguments_digest;
    use proptest::prelude::*;
    use serde_json::json;

    const SECRET: [u8; 32] = [0x42; 32];

    fn keys() -> DecisionKeys {
        DecisionKeys::new("k1", SECRET)
    }

    fn claims(approval: Approval) -> DecisionClaims {
        DecisionClaims {
            request_id: "r-1".into(),
            call_id: "c-1".into(),
            session: "s-1".into(),
            principal: Some("ada".into()),
            tool: "refund".into(),
            arguments_digest: arguments_digest(&json!({"amount": 20, "order": "o-9"})),
            approval,
        }
    }

    fn now() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_750_000_000)
    }

    fn token(text: &str) -> SignedDecision {
        SignedDecision::from(text.to_owned())
    }

    fn decode_payload(decision: &SignedDecision) -> Value {
        let (payload, _) = decision.as_str().split_once('.').expect("two parts");
        let bytes = URL_SAFE_NO_PAD.decode(payload).expect("base64url");
        serde_json::from_slice(&bytes).expect("json")
    }

    /// Re-encodes the payload and keeps the old signature.
    fn with_payload(decision: &SignedDecision, payload: &Value) -> SignedDecision {
        let (_, tag) = decision.as_str().split_once('.').expect("two parts");
        let bytes = serde_json::to_vec(payload).expect("json");
        token(&format!("{}.{tag}", URL_SAFE_NO_PAD.encode(bytes)))
    }

    /// Signs arbitrary payload bytes with `secret`, as a key holder could.
    fn signed_raw(secret: &[u8], payload: &Value) -> SignedDecision {
        let bytes = serde_json::to_vec(payload).expect("json");
        token(&encode_token(secret, &bytes))
    }

    #[test]
    fn round_trip_for_every_decision() {
        for approval in [
            Approval::Approve,
            Approval::ApproveWith(json!({"amount": 10, "order": "o-9"})),
            Approval::Deny("not this month".into()),
        ] {
            let claims = claims(approval);
            let decision = sign(&keys(), &claims, now()).expect("signs");
            assert!(!decision.as_str().contains('='), "no padding");
            assert_eq!(verify(&keys(), &decision, now()), Ok(claims));
        }
        let mut anonymous = claims(Approval::Approve);
        anonymous.principal = None;
        let decision = sign(&keys(), &anonymous, now()).expect("signs");
        assert_eq!(verify(&keys(), &decision, now()), Ok(anonymous));
    }

    #[test]
    fn payload_is_versioned_json_with_fixed_fields() {
        let decision = sign(&keys(), &claims(Approval::Deny("no".into())), now()).expect("signs");
        let payload = decode_payload(&decision);
        assert_eq!(payload["v"], 1);
        assert_eq!(payload["kid"], "k1");
        assert_eq!(payload["tool"], "refund");
        assert_eq!(payload["decision"], json!({"kind": "deny", "reason": "no"}));
        assert_eq!(payload["expires_at"], 1_750_000_000 + 15 * 60);
        // Signed within a second, it expires no earlier than its whole ttl after.
        let late = UNIX_EPOCH + Duration::from_millis(1_750_000_000_900);
        let decision = sign(&keys(), &claims(Approval::Approve), late).expect("signs");
        assert_eq!(
            decode_payload(&decision)["expires_at"],
            1_750_000_001 + 15 * 60
        );
    }

    #[test]
    fn pending_cannot_be_signed() {
        assert_eq!(
            sign(&keys(), &claims(Approval::Pending), now()),
            Err(DecisionError::NotADecision)
        );
    }

    #[test]
    fn forged_signature_is_refused() {
        let decision = sign(&keys(), &claims(Approval::Approve), now()).expect("signs");
        let (payload, tag) = decision.as_str().split_once('.').expect("two parts");
        let mut tag = URL_SAFE_NO_PAD.decode(tag).expect("base64url");
        for index in [0, 31] {
            tag[index] ^= 0x01;
            let forged = token(&format!("{payload}.{}", URL_SAFE_NO_PAD.encode(&tag)));
            assert_eq!(
                verify(&keys(), &forged, now()),
                Err(DecisionError::BadSignature)
            );
            tag[index] ^= 0x01;
        }
        // A truncated signature, and one from another secret with the same key id.
        let short = token(&format!("{payload}.{}", URL_SAFE_NO_PAD.encode(&tag[..16])));
        assert_eq!(
            verify(&keys(), &short, now()),
            Err(DecisionError::BadSignature)
        );
        let other = DecisionKeys::new("k1", [0x43; 32]);
        assert_eq!(
            verify(&other, &decision, now()),
            Err(DecisionError::BadSignature)
        );
    }

    #[test]
    fn edited_payload_is_refused() {
        let decision = sign(&keys(), &claims(Approval::Deny("no".into())), now()).expect("signs");
        let original = decode_payload(&decision);
        let edits: [(&str, Value); 7] = [
            ("tool", json!("delete_everything")),
            (
                "arguments_digest",
                json!(arguments_digest(&json!({"amount": 9999}))),
            ),
            ("decision", json!({"kind": "approve"})),
            ("session", json!("s-2")),
            ("principal", Value::Null),
            ("expires_at", json!(u64::MAX)),
            ("request_id", json!("r-2")),
        ];
        for (field, value) in edits {
            let mut edited = original.clone();
            edited[field] = value;
            assert_eq!(
                verify(&keys(), &with_payload(&decision, &edited), now()),
                Err(DecisionError::BadSignature),
                "{field}"
            );
        }
        // The same JSON with other bytes (whitespace) is not the signed payload either.
        let (_, tag) = decision.as_str().split_once('.').expect("two parts");
        let pretty = serde_json::to_vec_pretty(&original).expect("json");
        let respaced = token(&format!("{}.{tag}", URL_SAFE_NO_PAD.encode(pretty)));
        assert_eq!(
            verify(&keys(), &respaced, now()),
            Err(DecisionError::BadSignature)
        );
    }

    #[test]
    fn expired_is_refused() {
        let keys = keys().with_ttl(Duration::from_secs(60));
        let decision = sign(&keys, &claims(Approval::Approve), now()).expect("signs");
        assert!(verify(&keys, &decision, now() + Duration::from_secs(59)).is_ok());
        assert_eq!(
            verify(&keys, &decision, now() + Duration::from_secs(60)),
            Err(DecisionError::Expired)
        );
        assert_eq!(
            verify(&keys, &decision, now() + Duration::from_secs(3600)),
            Err(DecisionError::Expired)
        );
        let instant = keys.with_ttl(Duration::ZERO);
        let decision = sign(&instant, &claims(Approval::Approve), now()).expect("signs");
        assert_eq!(
            verify(&instant, &decision, now()),
            Err(DecisionError::Expired)
        );
    }

    #[test]
    fn huge_ttl_does_not_overflow() {
        let keys = keys().with_ttl(Duration::MAX);
        let decision = sign(&keys, &claims(Approval::Approve), now()).expect("signs");
        assert_eq!(decode_payload(&decision)["expires_at"], u64::MAX);
        assert!(verify(&keys, &decision, now()).is_ok());
        let forever = DecisionKeys::new("k0", SECRET).rotate("k1", [1; 32], Duration::MAX);
        let old = sign(
            &DecisionKeys::new("k0", SECRET),
            &claims(Approval::Approve),
            now(),
        )
        .expect("signs");
        assert!(verify(&forever, &old, now()).is_ok());
    }

    #[test]
    fn unknown_key_is_refused() {
        let decision = sign(
            &DecisionKeys::new("k9", SECRET),
            &claims(Approval::Approve),
            now(),
        )
        .expect("signs");
        assert_eq!(
            verify(&keys(), &decision, now()),
            Err(DecisionError::UnknownKey("k9".into()))
        );
    }

    #[test]
    fn rotated_key_is_accepted_within_grace_only() {
        let start = SystemTime::now();
        let old_keys = DecisionKeys::new("k1", SECRET).with_ttl(Duration::from_secs(3600));
        let old = sign(&old_keys, &claims(Approval::Approve), start).expect("signs");
        let keys = old_keys.rotate("k2", [0x77; 32], Duration::from_secs(300));
        assert_eq!(keys.current_key_id(), "k2");

        let fresh = sign(&keys, &claims(Approval::Approve), start).expect("signs");
        assert_eq!(decode_payload(&fresh)["kid"], "k2");
        assert!(verify(&keys, &fresh, start + Duration::from_secs(1000)).is_ok());

        assert!(verify(&keys, &old, start).is_ok());
        assert!(verify(&keys, &old, start + Duration::from_secs(200)).is_ok());
        assert_eq!(
            verify(&keys, &old, start + Duration::from_secs(400)),
            Err(DecisionError::RetiredKey("k1".into()))
        );
    }

    #[test]
    fn one_id_names_one_secret() {
        // `rotate` to an id in use drops what it named; `try_rotate` refuses it.
        let keys =
            DecisionKeys::new("k1", SECRET).rotate("k1", [0x77; 32], Duration::from_secs(300));
        let old = sign(
            &DecisionKeys::new("k1", SECRET),
            &claims(Approval::Approve),
            now(),
        )
        .expect("signs");
        assert_eq!(verify(&keys, &old, now()), Err(DecisionError::BadSignature));
        assert!(keys.previous.is_empty());

        let keys = DecisionKeys::new("k1", SECRET)
            .rotate("k2", [2; 32], Duration::from_secs(300))
            .rotate("k1", [3; 32], Duration::from_secs(300));
        let ids: Vec<&str> = keys
            .previous
            .iter()
            .map(|old| old.key.id.as_str())
            .collect();
        assert_eq!((keys.current_key_id(), ids), ("k1", vec!["k2"]));

        let keys = DecisionKeys::try_new("k1", SECRET).expect("valid");
        assert_eq!(
            keys.clone().try_rotate("k1", [5; 32], Duration::ZERO).err(),
            Some(DecisionError::DuplicateKeyId("k1".into()))
        );
        let keys = keys
            .try_rotate("k2", [5; 32], Duration::from_secs(60))
            .expect("valid");
        assert_eq!(
            keys.try_rotate("k1", [6; 32], Duration::ZERO).err(),
            Some(DecisionError::DuplicateKeyId("k1".into()))
        );
    }

    #[test]
    fn try_new_refuses_weak_keys() {
        assert_eq!(
            DecisionKeys::try_new("k1", b"short".to_vec()).err(),
            Some(DecisionError::ShortSecret {
                key_id: "k1".into(),
                len: 5
            })
        );
        assert_eq!(
            DecisionKeys::try_new("", SECRET).err(),
            Some(DecisionError::EmptyKeyId)
        );
        assert!(DecisionKeys::try_new("k1", SECRET).is_ok());
        // `new` takes any secret, as documented.
        let short = DecisionKeys::new("k1", b"short".to_vec());
        let decision = sign(&short, &claims(Approval::Approve), now()).expect("signs");
        assert!(verify(&short, &decision, now()).is_ok());
    }

    #[test]
    fn debug_never_prints_secrets() {
        let keys = DecisionKeys::new("k1", b"hunter2-hunter2-hunter2-hunter2!".to_vec()).rotate(
            "k2",
            b"correct horse battery staple!!!!".to_vec(),
            Duration::from_secs(60),
        );
        let text = format!("{keys:?} {keys:#?}");
        assert!(text.contains("k1") && text.contains("k2"), "{text}");
        for leak in ["hunter2", "horse", "104, 117", "99, 111"] {
            assert!(!text.contains(leak), "{text}");
        }
    }

    #[test]
    fn other_versions_are_refused() {
        let decision = sign(&keys(), &claims(Approval::Approve), now()).expect("signs");
        let mut payload = decode_payload(&decision);
        for version in [0, 2, 99] {
            payload["v"] = json!(version);
            assert_eq!(
                verify(&keys(), &signed_raw(&SECRET, &payload), now()),
                Err(DecisionError::UnsupportedVersion(version))
            );
        }
        // A version that is not a number, or none, is malformed.
        payload["v"] = json!("1");
        assert!(matches!(
            verify(&keys(), &signed_raw(&SECRET, &payload), now()),
            Err(DecisionError::Malformed(_))
        ));
        if let Value::Object(map) = &mut payload {
            map.remove("v");
        }
        assert!(matches!(
            verify(&keys(), &signed_raw(&SECRET, &payload), now()),
            Err(DecisionError::Malformed(_))
        ));
    }

    #[test]
    fn signed_but_unreadable_payloads_are_malformed() {
        let decision = sign(&keys(), &claims(Approval::Approve), now()).expect("signs");
        let original = decode_payload(&decision);
        let mut extra = original.clone();
        extra["admin"] = json!(true);
        let mut pending = original.clone();
        pending["decision"] = json!({"kind": "pending"});
        let mut missing = original;
        if let Value::Object(map) = &mut missing {
            map.remove("tool");
        }
        for payload in [extra, pending, missing] {
            assert!(
                matches!(
                    verify(&keys(), &signed_raw(&SECRET, &payload), now()),
                    Err(DecisionError::Malformed(_))
                ),
                "{payload}"
            );
        }
        // Duplicate fields are refused, not resolved one way or the other.
        let text = br#"{"v":1,"kid":"k1","kid":"k1"}"#;
        let duplicate = token(&encode_token(&SECRET, text));
        assert!(matches!(
            verify(&keys(), &duplicate, now()),
            Err(DecisionError::Malformed(_))
        ));
    }

    #[test]
    fn malformed_inputs_are_malformed() {
        let decision = sign(&keys(), &claims(Approval::Approve), now()).expect("signs");
        let (payload, tag) = decision.as_str().split_once('.').expect("two parts");
        let not_json = URL_SAFE_NO_PAD.encode(b"not json");
        let not_object = URL_SAFE_NO_PAD.encode(b"[1,2]");
        let cases = [
            String::new(),
            ".".into(),
            "no-dot-here".into(),
            payload.to_owned(),
            format!("{payload}."),
            format!(".{tag}"),
            format!("{payload}.{tag}.{tag}"),
            format!("{payload}=.{tag}"),
            format!("{payload}.!!!"),
            format!("%%%.{tag}"),
            format!("{payload}+.{tag}"),
            format!("{not_json}.{tag}"),
            format!("{not_object}.{tag}"),
            "x".repeat(MAX_TOKEN_LEN + 1),
        ];
        for case in cases {
            let result = verify(&keys(), &token(&case), now());
            assert!(
                matches!(result, Err(DecisionError::Malformed(_))),
                "{case:.80}: {result:?}"
            );
        }
    }

    proptest! {
        #[test]
        fn verify_never_panics_on_any_text(text in ".{0,256}") {
            let _ = verify(&keys(), &token(&text), now());
        }

        #[test]
        fn verify_never_panics_on_base64_parts(
            payload in proptest::collection::vec(any::<u8>(), 0..256),
            tag in proptest::collection::vec(any::<u8>(), 0..48),
        ) {
            let text =
                format!("{}.{}", URL_SAFE_NO_PAD.encode(&payload), URL_SAFE_NO_PAD.encode(&tag));
            prop_assert!(verify(&keys(), &token(&text), now()).is_err());
        }

        #[test]
        fn verify_never_panics_on_mutated_tokens(index in any::<usize>(), byte in any::<u8>()) {
            let decision = sign(&keys(), &claims(Approval::Approve), now()).expect("signs");
            let mut bytes = decision.as_str().as_bytes().to_vec();
            let at = index % bytes.len();
            let changed = bytes[at] != byte;
            bytes[at] = byte;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let result = verify(&keys(), &token(&text), now());
            if changed {
                // Base64's unused trailing bits are refused, so every change is caught.
                prop_assert!(result.is_err(), "{}", text);
            }
        }
    }
}
