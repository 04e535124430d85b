//! A pending call's arguments, sealed at rest.
//!
//! The call a person approves later must run with the real values, secrets included, but the
//! approval store (memory, Redis) must not hold a secret in clear. So the store keeps the
//! arguments twice: redacted, for the person who decides, and sealed with XChaCha20-Poly1305
//! under a key derived from the runtime's [`DecisionKeys`] (HMAC-SHA256 of the signing secret
//! over a fixed label), bound to the request it belongs to (its id, session, call, tool and
//! arguments digest as associated data): a sealed value moved to another request does not open.
//!
//! ```text
//! "v1." base64url(kid) "." base64url(nonce (24 bytes) || ciphertext || tag)
//! ```

use std::time::SystemTime;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Sha256;

use super::decision::{DecisionError, DecisionKeys};

/// The label the sealing key is derived under: a signing secret never keys two algorithms.
const KEY_LABEL: &[u8] = b"tool-runtime pending approval seal v1";

/// The arguments of a pending call, sealed: opaque text only a runtime holding the same
/// [`DecisionKeys`] can open, and only for the request it was sealed for.
///
/// `Debug` shows its length, never its content.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SealedArguments(String);

impl std::fmt::Debug for SealedArguments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedArguments({} chars)", self.0.len())
    }
}

impl SealedArguments {
    /// The sealed text, as stored.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The sealed text read back from a store of one's own: it opens only if it is what the
/// runtime sealed.
impl From<String> for SealedArguments {
    fn from(text: String) -> Self {
        Self(text)
    }
}

/// What a sealed value is bound to.
pub(crate) struct Binding<'a> {
    pub(crate) request_id: &'a str,
    pub(crate) session: &'a str,
    pub(crate) call_id: &'a str,
    pub(crate) tool: &'a str,
    pub(crate) arguments_digest: &'a str,
}

impl Binding<'_> {
    /// The associated data: every part length-prefixed, so no two bindings share the bytes.
    fn bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::new();
        for part in [
            self.request_id,
            self.session,
            self.call_id,
            self.tool,
            self.arguments_digest,
        ] {
            bytes.extend_from_slice(&(part.len() as u64).to_le_bytes());
            bytes.extend_from_slice(part.as_bytes());
        }
        bytes
    }
}

fn cipher(secret: &[u8]) -> XChaCha20Poly1305 {
    // HMAC accepts a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(KEY_LABEL);
    XChaCha20Poly1305::new(&mac.finalize().into_bytes())
}

/// Seals `arguments` for `binding` under the keys' signing key.
pub(crate) fn seal(
    keys: &DecisionKeys,
    binding: &Binding<'_>,
    arguments: &Value,
) -> SealedArguments {
    let (kid, secret) = keys.signing_key();
    // 192 random bits: nonces drawn at random never repeat in practice.
    let mut nonce = [0_u8; 24];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut nonce);
    let nonce = XNonce::from(nonce);
    let plaintext = arguments.to_string();
    let aad = binding.bytes();
    let sealed = cipher(secret)
        .encrypt(
            &nonce,
            Payload {
                msg: plaintext.as_bytes(),
                aad: &aad,
            },
        )
        // Encryption fails only for messages beyond the cipher's limit (256 GiB).
        .unwrap_or_default();
    let mut body = nonce.to_vec();
    body.extend_from_slice(&sealed);
    SealedArguments(format!(
        "v1.{}.{}",
        URL_SAFE_NO_PAD.encode(kid.as_bytes()),
        URL_SAFE_NO_PAD.encode(body)
    ))
}

/// Opens what [`seal`] sealed for `binding`, with the key it names (the current one, or one
/// rotated out whose grace has not passed).
pub(crate) fn open(
    keys: &DecisionKeys,
    sealed: &SealedArguments,
    binding: &Binding<'_>,
    now: SystemTime,
) -> Result<Value, DecisionError> {
    let malformed = |why: &str| DecisionError::Malformed(format!("sealed arguments: {why}"));
    let mut parts = sealed.0.splitn(3, '.');
    let (Some("v1"), Some(kid), Some(body)) = (parts.next(), parts.next(), parts.next()) else {
        return Err(malformed("not a sealed value this runtime makes"));
    };
    let kid = URL_SAFE_NO_PAD
        .decode(kid)
        .ok()
        .and_then(|kid| String::from_utf8(kid).ok())
        .ok_or_else(|| malformed("its key id is not base64url text"))?;
    let body = URL_SAFE_NO_PAD
        .decode(body)
        .map_err(|_| malformed("not base64url"))?;
    if body.len() < 24 {
        return Err(malformed("too short"));
    }
    let (nonce, ciphertext) = body.split_at(24);
    let secret = keys.secret_for(&kid, now)?;
    let aad = binding.bytes();
    let plaintext = cipher(secret)
        .decrypt(
            XNonce::from_slice(nonce),
            Payload {
                msg: ciphertext,
                aad: &aad,
            },
        )
        .map_err(|_| DecisionError::BadSignature)?;
    serde_json::from_slice(&plaintext).map_err(|_| malformed("not JSON once opened"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn binding<'a>(request_id: &'a str) -> Binding<'a> {
        Binding {
            request_id,
            session: "s",
            call_id: "c",
            tool: "t",
            arguments_digest: "d",
        }
    }

    #[test]
    fn sealed_arguments_open_for_their_request_with_their_keys_only() {
        let keys = DecisionKeys::new("k1", [7_u8; 32].to_vec());
        let arguments = json!({ "api_key": "sk-proj-abcdefghijklmnopqrstuvwx1234" });
        let sealed = seal(&keys, &binding("r1"), &arguments);
        assert!(!sealed.as_str().contains("sk-proj"));
        assert!(!format!("{sealed:?}").contains(sealed.as_str()));
        let now = SystemTime::now();
        assert_eq!(
            open(&keys, &sealed, &binding("r1"), now),
            Ok(arguments.clone())
        );
        // Another request, other keys, a changed byte: nothing opens.
        assert!(open(&keys, &sealed, &binding("r2"), now).is_err());
        let other = DecisionKeys::new("k1", [8_u8; 32].to_vec());
        assert_eq!(
            open(&other, &sealed, &binding("r1"), now),
            Err(DecisionError::BadSignature)
        );
        let mut tampered = sealed.as_str().to_owned();
        let last = tampered
            .pop()
            .map_or('A', |last| if last == 'A' { 'B' } else { 'A' });
        tampered.push(last);
        assert!(open(&keys, &SealedArguments(tampered), &binding("r1"), now).is_err());
        // Two seals of the same arguments differ (a fresh nonce each).
        assert_ne!(seal(&keys, &binding("r1"), &arguments), sealed);
    }

    #[test]
    fn a_rotation_keeps_opening_what_the_old_key_sealed_during_its_grace() {
        let old = DecisionKeys::new("k1", [7_u8; 32].to_vec());
        let sealed = seal(&old, &binding("r1"), &json!({ "n": 1 }));
        let rotated = old.rotate(
            "k2",
            [9_u8; 32].to_vec(),
            std::time::Duration::from_secs(60),
        );
        let now = SystemTime::now();
        assert_eq!(
            open(&rotated, &sealed, &binding("r1"), now),
            Ok(json!({ "n": 1 }))
        );
        let later = now + std::time::Duration::from_secs(120);
        assert!(open(&rotated, &sealed, &binding("r1"), later).is_err());
    }
}
