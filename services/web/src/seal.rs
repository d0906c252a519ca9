//! Values a context keeps out of the log in the clear: sealed with AES-256-GCM under a key the
//! server holds (crypto-shredding). The log keeps only the sealed form; whoever holds the key
//! opens it, and destroying the key makes every value sealed with it unreadable for good, events
//! and their copies (NATS, `/v1/events`, backups) included.
//!
//! A [`SealKeys`] holds the current key, which seals, and previous keys, which still open what
//! they sealed: rotating is generating a new current key and keeping the old one as previous
//! until nothing sealed with it matters any more. Sealing is deterministic given its IV, so
//! deciders stay pure: the handler draws a fresh IV ([`fresh_iv`]) at the edge.
//!
//! Sealed form: `IV (12 bytes) ‖ ciphertext ‖ tag (16 bytes)`, base64url without padding.

use aes_gcm::aead::{Aead, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use std::path::Path;

/// Length of the random IV in front of each sealed value.
pub const IV_LEN: usize = 12;

/// Length of the GCM tag at the end of each sealed value.
const TAG_LEN: usize = 16;

/// Why a value could not be sealed or opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// A key is not 64 hex digits (32 bytes).
    #[error("a sealing key must be 64 hex digits")]
    BadKey,
    /// The cipher refused to seal (cannot happen with a valid key and IV).
    #[error("the value could not be sealed")]
    Seal,
    /// The sealed text is not ours, was altered, or its key is gone.
    #[error("the sealed value does not open with any key held")]
    Open,
}

/// The current sealing key and the previous keys that still open.
#[derive(Clone)]
pub struct SealKeys {
    current: Aes256Gcm,
    previous: Vec<Aes256Gcm>,
}

impl std::fmt::Debug for SealKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealKeys(current, {} previous)", self.previous.len())
    }
}

fn cipher(hex_key: &str) -> Result<Aes256Gcm, SealError> {
    let bytes = hex::decode(hex_key.trim()).map_err(|_| SealError::BadKey)?;
    Aes256Gcm::new_from_slice(&bytes).map_err(|_| SealError::BadKey)
}

/// A fresh random IV for [`SealKeys::seal`].
pub fn fresh_iv() -> [u8; IV_LEN] {
    use rand::Rng;
    rand::rng().random()
}

impl SealKeys {
    /// The keys from 64 hex digits each: `current` seals, `previous` still open.
    pub fn from_hex<'a>(
        current: &str,
        previous: impl IntoIterator<Item = &'a str>,
    ) -> Result<SealKeys, SealError> {
        Ok(SealKeys {
            current: cipher(current)?,
            previous: previous.into_iter().map(cipher).collect::<Result<_, _>>()?,
        })
    }

    /// The keys of secret `name` in `data_dir`: the current one `given` by the operator or the
    /// file `<data_dir>/<name>` (generated there, mode 0600, when missing, like the
    /// platform's other secrets), and the previous ones from `<data_dir>/<name>.previous` (one
    /// key a line; absent: none). Rotation: append the current key to the `.previous` file,
    /// remove the current file, restart. Destruction: remove both files.
    pub fn load(data_dir: &Path, name: &str, given: Option<&str>) -> std::io::Result<SealKeys> {
        let current = crate::secret::load_or_create(given, &data_dir.join(name))?;
        let previous = match std::fs::read_to_string(data_dir.join(format!("{name}.previous"))) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let previous = previous.lines().map(str::trim).filter(|l| !l.is_empty());
        SealKeys::from_hex(&current, previous)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))
    }

    /// `plain` sealed with the current key and `iv`, as base64url.
    pub fn seal(&self, plain: &[u8], iv: [u8; IV_LEN]) -> Result<String, SealError> {
        let sealed = self
            .current
            .encrypt(Nonce::from_slice(&iv), plain)
            .map_err(|_| SealError::Seal)?;
        let mut out = Vec::with_capacity(IV_LEN + sealed.len());
        out.extend_from_slice(&iv);
        out.extend_from_slice(&sealed);
        Ok(URL_SAFE_NO_PAD.encode(out))
    }

    /// Opens a sealed value with the current key, else each previous one.
    pub fn open(&self, sealed: &str) -> Result<Vec<u8>, SealError> {
        let bytes = URL_SAFE_NO_PAD
            .decode(sealed)
            .map_err(|_| SealError::Open)?;
        if bytes.len() < IV_LEN + TAG_LEN {
            return Err(SealError::Open);
        }
        let (iv, rest) = bytes.split_at(IV_LEN);
        std::iter::once(&self.current)
            .chain(&self.previous)
            .find_map(|key| key.decrypt(Nonce::from_slice(iv), rest).ok())
            .ok_or(SealError::Open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(current: &str, previous: &[&str]) -> SealKeys {
        SealKeys::from_hex(
            &current.repeat(32),
            previous
                .iter()
                .map(|p| p.repeat(32))
                .collect::<Vec<_>>()
                .iter()
                .map(String::as_str),
        )
        .expect("keys")
    }

    #[test]
    fn a_sealed_value_opens_with_its_key_only() {
        let sealed = keys("01", &[])
            .seal(b"$2b$10$hash", [7; IV_LEN])
            .expect("seal");
        assert!(!sealed.contains("hash"));
        assert_eq!(keys("01", &[]).open(&sealed), Ok(b"$2b$10$hash".to_vec()));
        assert_eq!(keys("02", &[]).open(&sealed), Err(SealError::Open));
    }

    #[test]
    fn after_rotation_the_previous_key_still_opens_and_the_new_one_seals() {
        let old = keys("01", &[]).seal(b"old", [1; IV_LEN]).expect("seal");
        let rotated = keys("02", &["01"]);
        assert_eq!(rotated.open(&old), Ok(b"old".to_vec()));
        let new = rotated.seal(b"new", [2; IV_LEN]).expect("seal");
        assert_eq!(keys("02", &[]).open(&new), Ok(b"new".to_vec()));
        assert_eq!(keys("01", &[]).open(&new), Err(SealError::Open));
    }

    #[test]
    fn an_altered_or_short_value_does_not_open() {
        let key = keys("01", &[]);
        let sealed = key.seal(b"value", [3; IV_LEN]).expect("seal");
        let mut bytes = URL_SAFE_NO_PAD.decode(&sealed).expect("b64");
        bytes[IV_LEN] ^= 1;
        assert_eq!(
            key.open(&URL_SAFE_NO_PAD.encode(bytes)),
            Err(SealError::Open)
        );
        assert_eq!(key.open("AAAA"), Err(SealError::Open));
        assert_eq!(key.open("not base64!"), Err(SealError::Open));
    }

    #[test]
    fn keys_load_from_the_data_dir_and_its_previous_file() {
        let dir = std::env::temp_dir().join(format!("palimpsest-seal-{}", uuid::Uuid::new_v4()));
        let first = SealKeys::load(&dir, "k", None).expect("create");
        let sealed = first.seal(b"x", [4; IV_LEN]).expect("seal");
        let current = std::fs::read_to_string(dir.join("k")).expect("key file");
        std::fs::write(dir.join("k.previous"), format!("{current}\n")).expect("previous");
        std::fs::remove_file(dir.join("k")).expect("rotate");
        let rotated = SealKeys::load(&dir, "k", None).expect("rotated");
        assert_eq!(rotated.open(&sealed), Ok(b"x".to_vec()));
        std::fs::remove_file(dir.join("k.previous")).expect("destroy");
        let destroyed = SealKeys::load(&dir, "k", None).expect("reload");
        assert_eq!(destroyed.open(&sealed), Err(SealError::Open));
        let _ = std::fs::remove_dir_all(dir);
    }
}
