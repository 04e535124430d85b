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

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use serde_json::Value;
use sha2::Sha256;

use super::decision::{DecisionError, DecisionKeys, PendingApproval, SealedArguments};

/// The label the sealing key is derived under: a signing secret never keys two algorithms.
const KEY_LABEL: &[u8] = b"tool-runtime pending approval seal v1";

/// The associated data of a pending request's seal: every field of the request but the seal
/// itself, so what a person reads (the redacted arguments, the reason, the preview, the risk)
/// and what the resumed call runs under (its idempotency key, version, principal) cannot be
/// changed in the store without the seal refusing to open. Each part is length-prefixed (u64,
/// little-endian), an absent one marked apart from an empty one.
fn associated_data(pending: &PendingApproval) -> Vec<u8> {
    let shown = serde_json::to_vec(&(
        &pending.arguments,
        &pending.reason,
        pending.risk,
        &pending.preview,
    ))
    .unwrap_or_default();
    let mut bytes = Vec::new();
    let mut part = |value: Option<&[u8]>| match value {
        None => bytes.push(0),
        Some(value) => {
            bytes.push(1);
            bytes.extend_from_slice(&(value.len() as u64).to_le_bytes());
            bytes.extend_from_slice(value);
        }
    };
    part(Some(b"pending approval v1"));
    part(Some(pending.request_id.as_bytes()));
    part(Some(pending.session.as_bytes()));
    part(pending.principal.as_deref().map(str::as_bytes));
    part(Some(pending.call_id.as_bytes()));
    part(Some(pending.tool.as_bytes()));
    part(pending.version.as_deref().map(str::as_bytes));
    part(pending.idempotency_key.as_deref().map(str::as_bytes));
    part(Some(pending.arguments_digest.as_bytes()));
    part(Some(&shown));
    bytes
}

fn cipher(secret: &[u8]) -> XChaCha20Poly1305 {
    // HMAC accepts a key of any length.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(KEY_LABEL);
    XChaCha20Poly1305::new(&mac.finalize().into_bytes())
}

/// Seals `arguments` (what will run) into `pending`, bound to every other field of it, under
/// the keys' signing key.
pub(crate) fn seal(
    keys: &DecisionKeys,
    pending: &mut PendingApproval,
    arguments: &Value,
) -> Result<(), DecisionError> {
    let (kid, secret) = keys.signing_key();
    // 192 random bits: nonces drawn at random never repeat in practice.
    let mut nonce = [0_u8; 24];
    rand::RngCore::fill_bytes(&mut rand::rng(), &mut nonce);
    let nonce = XNonce::from(nonce);
    let plaintext = arguments.to_string();
    let aad = associated_data(pending);
    let sealed = cipher(secret)
        .encrypt(
            &nonce,
            Payload {
                msg: plaintext.as_bytes(),
                aad: &aad,
            },
        )
        .map_err(|_| DecisionError::Malformed("the arguments could not be sealed".to_owned()))?;
    let mut body = nonce.to_vec();
    body.extend_from_slice(&sealed);
    pending.sealed_arguments = SealedArguments::from(format!(
        "v1.{}.{}",
        URL_SAFE_NO_PAD.encode(kid.as_bytes()),
        URL_SAFE_NO_PAD.encode(body)
    ));
    Ok(())
}

/// Opens what [`seal`] sealed into `pending`, with the key it names: any key the runtime
/// still holds, current or rotated out (a rotation's grace bounds how long *decisions* signed
/// with the old key are accepted, not how long requests sealed under it can be decided; a
/// key dropped from the [`DecisionKeys`] opens nothing more).
pub(crate) fn open(keys: &DecisionKeys, pending: &PendingApproval) -> Result<Value, DecisionError> {
    let malformed = |why: &str| DecisionError::Malformed(format!("sealed arguments: {why}"));
    let mut parts = pending.sealed_arguments.as_str().splitn(3, '.');
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
    let secret = keys.held_secret(&kid)?;
    let aad = associated_data(pending);
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
    use tool_core::RiskLevel;

    fn pending(request_id: &str) -> PendingApproval {
        PendingApproval {
            request_id: request_id.into(),
            session: "s".into(),
            principal: Some("ada".into()),
            call_id: "c".into(),
            tool: "t".into(),
            version: None,
            arguments: json!({ "api_key": "[REDACTED:openai_api_key]" }),
            sealed_arguments: SealedArguments::from(String::new()),
            arguments_digest: "d".into(),
            reason: "writes ask".into(),
            risk: RiskLevel::Write,
            preview: None,
            idempotency_key: None,
        }
    }

    fn sealed(keys: &DecisionKeys, request_id: &str, arguments: &Value) -> PendingApproval {
        let mut pending = pending(request_id);
        match seal(keys, &mut pending, arguments) {
            Ok(()) => pending,
            Err(error) => panic!("{error}"),
        }
    }

    #[test]
    fn sealed_arguments_open_for_their_request_with_their_keys_only() {
        let keys = DecisionKeys::new("k1", [7_u8; 32].to_vec());
        let arguments = json!({ "api_key": "sk-proj-abcdefghijklmnopqrstuvwx1234" });
        let kept = sealed(&keys, "r1", &arguments);
        let text = kept.sealed_arguments.as_str();
        assert!(!text.contains("sk-proj"));
        assert!(!format!("{:?}", kept.sealed_arguments).contains(text));
        assert_eq!(open(&keys, &kept), Ok(arguments.clone()));
        // Moved to another request, or any field of it changed: it does not open.
        let mut moved = pending("r2");
        moved.sealed_arguments = kept.sealed_arguments.clone();
        assert!(open(&keys, &moved).is_err());
        for change in [
            |p: &mut PendingApproval| p.arguments = json!({ "api_key": "other" }),
            |p: &mut PendingApproval| p.reason = "reads ask".into(),
            |p: &mut PendingApproval| p.idempotency_key = Some("req-1".into()),
            |p: &mut PendingApproval| p.principal = None,
            |p: &mut PendingApproval| p.version = Some(String::new()),
            |p: &mut PendingApproval| p.risk = RiskLevel::Read,
        ] {
            let mut changed = kept.clone();
            change(&mut changed);
            assert_eq!(open(&keys, &changed), Err(DecisionError::BadSignature));
        }
        // Other keys, a changed byte: nothing opens.
        let other = DecisionKeys::new("k1", [8_u8; 32].to_vec());
        assert_eq!(open(&other, &kept), Err(DecisionError::BadSignature));
        let mut tampered = kept.clone();
        let mut text = text.to_owned();
        let last = text
            .pop()
            .map_or('A', |last| if last == 'A' { 'B' } else { 'A' });
        text.push(last);
        tampered.sealed_arguments = SealedArguments::from(text);
        assert!(open(&keys, &tampered).is_err());
        // Two seals of the same arguments differ (a fresh nonce each).
        assert_ne!(
            sealed(&keys, "r1", &arguments).sealed_arguments,
            kept.sealed_arguments
        );
    }

    #[test]
    fn a_key_rotated_out_keeps_opening_what_it_sealed_after_its_grace() {
        let old = DecisionKeys::new("k1", [7_u8; 32].to_vec());
        let kept = sealed(&old, "r1", &json!({ "n": 1 }));
        let rotated = old.rotate("k2", [9_u8; 32].to_vec(), std::time::Duration::ZERO);
        assert_eq!(open(&rotated, &kept), Ok(json!({ "n": 1 })));
        // A key no longer held opens nothing.
        let dropped = DecisionKeys::new("k2", [9_u8; 32].to_vec());
        assert!(open(&dropped, &kept).is_err());
    }
}
