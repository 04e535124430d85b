//! Lowercase hex, for digests and random tokens.

use sha2::{Digest, Sha256};

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lowercase hex.
pub(crate) fn encode(bytes: &[u8]) -> String {
    let mut hex = String::with_capacity(2 * bytes.len());
    for byte in bytes {
        hex.push(char::from(DIGITS[usize::from(byte >> 4)]));
        hex.push(char::from(DIGITS[usize::from(byte & 0x0f)]));
    }
    hex
}

/// SHA-256 of `bytes`, as lowercase hex.
pub(crate) fn sha256(bytes: &[u8]) -> String {
    encode(&Sha256::digest(bytes))
}

/// 128 random bits, as hex: a token nobody can guess.
pub(crate) fn random_token() -> String {
    use rand::RngCore;
    let mut bytes = [0_u8; 16];
    rand::rng().fill_bytes(&mut bytes);
    encode(&bytes)
}

/// Feeds `part` to a digest after its length (u64, little-endian, the same on every
/// platform), so that no two different sequences of parts hash the same bytes.
pub(crate) fn update_length_prefixed(digest: &mut Sha256, part: &[u8]) {
    digest.update((part.len() as u64).to_le_bytes());
    digest.update(part);
}

#[cfg(test)]
mod tests {
    #[test]
    fn encodes_lowercase_pairs() {
        assert_eq!(super::encode(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(super::random_token().len(), 32);
        assert_eq!(
            super::sha256(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
