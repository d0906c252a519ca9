//! `data` as the host stores it: msgpack, then AES-256-GCM with the site key, stored as
//! `IV (12 bytes) ‖ ciphertext ‖ tag (16 bytes)`, carried in events as base64url.
//!
//! Sealing is deterministic given its IV, so deciders stay pure: the handler draws fresh IVs
//! ([`Nonces::fresh`]) at the edge and the decider takes them one by one. The key comes from
//! `PALIMPSEST_RECORDS_KEY` or the secret file `<data dir>/records-key` (64 hex digits), like the
//! platform's other secrets; it is never logged.

use aes_gcm::aead::{Aead, AeadInPlace, KeyInit};
use aes_gcm::{Aes256Gcm, Nonce};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use std::path::Path;

/// Length of the random IV in front of each sealed value.
pub const IV_LEN: usize = 12;

/// Why a value could not be sealed or opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SealError {
    /// The key is not 32 bytes of hex.
    #[error("the records site key must be 64 hex digits")]
    BadKey,
    /// msgpack refused the value.
    #[error("data does not serialise: {0}")]
    Encode(String),
    /// The sealed bytes are not ours or were altered.
    #[error("sealed data does not open with the site key")]
    Open,
    /// The decider ran out of the IVs it was given (a bug in the handler).
    #[error("no fresh IV left for sealing")]
    NoNonce,
}

/// The site key.
///
/// Besides the current key it may hold previous ones: values sealed with them still open, and
/// `rotateKey` reseals them with the current key (by new events, never by editing old ones).
#[derive(Clone)]
pub struct SiteKey(Aes256Gcm, Vec<Aes256Gcm>);

impl std::fmt::Debug for SiteKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SiteKey(…)")
    }
}

impl SiteKey {
    /// The key from 64 hex digits.
    pub fn from_hex(text: &str) -> Result<SiteKey, SealError> {
        let bytes = hex::decode(text.trim()).map_err(|_| SealError::BadKey)?;
        let cipher = Aes256Gcm::new_from_slice(&bytes).map_err(|_| SealError::BadKey)?;
        Ok(SiteKey(cipher, Vec::new()))
    }

    /// This key, still opening what `previous` (64 hex digits each) sealed.
    pub fn with_previous<'a>(
        mut self,
        previous: impl IntoIterator<Item = &'a str>,
    ) -> Result<SiteKey, SealError> {
        for text in previous {
            let SiteKey(old, _) = SiteKey::from_hex(text)?;
            self.1.push(old);
        }
        Ok(self)
    }

    /// Whether `sealed` opens with the current key (else a previous one sealed it).
    pub fn is_current(&self, sealed: &[u8]) -> bool {
        sealed.len() >= IV_LEN + 16 && {
            let (iv, rest) = sealed.split_at(IV_LEN);
            self.0.decrypt(Nonce::from_slice(iv), rest).is_ok()
        }
    }

    /// The key `given` by the operator or the one in `<data_dir>/records-key`, created there
    /// when missing,
    /// still opening what the `previous` keys (64 hex digits each: the context's settings,
    /// `--records-old-keys`) sealed.
    pub fn load(
        data_dir: &Path,
        given: Option<&str>,
        previous: &[String],
    ) -> Result<SiteKey, std::io::Error> {
        let text = palimpsest_web::secret::load_or_create(given, &data_dir.join("records-key"))?;
        let old = previous.iter().map(|k| k.trim()).filter(|k| !k.is_empty());
        SiteKey::from_hex(&text)
            .and_then(|key| key.with_previous(old))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()))
    }

    /// msgpack of `data`, sealed with `iv`: `IV ‖ ciphertext ‖ tag`.
    pub fn seal_bytes<T: serde::Serialize + ?Sized>(
        &self,
        data: &T,
        iv: [u8; IV_LEN],
    ) -> Result<Vec<u8>, SealError> {
        let plain = rmp_serde::to_vec_named(data).map_err(|e| SealError::Encode(e.to_string()))?;
        let sealed = self
            .0
            .encrypt(Nonce::from_slice(&iv), plain.as_slice())
            .map_err(|e| SealError::Encode(e.to_string()))?;
        let mut out = Vec::with_capacity(IV_LEN + sealed.len());
        out.extend_from_slice(&iv);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// [`SiteKey::seal_bytes`] as base64url, the form events carry.
    pub fn seal(&self, data: &Value, iv: [u8; IV_LEN]) -> Result<String, SealError> {
        Ok(URL_SAFE_NO_PAD.encode(self.seal_bytes(data, iv)?))
    }

    /// Opens sealed bytes back into data.
    pub fn open_bytes(&self, sealed: &[u8]) -> Result<Value, SealError> {
        let plain = self.open_plain(sealed)?;
        rmp_serde::from_slice(&plain).map_err(|_| SealError::Open)
    }

    /// Opens sealed bytes into the msgpack they hold, not decoded (lists write it as JSON
    /// directly: `crate::transcode`).
    pub fn open_plain(&self, sealed: &[u8]) -> Result<Vec<u8>, SealError> {
        let mut plain = Vec::with_capacity(sealed.len());
        self.open_plain_into(sealed, &mut plain)?;
        Ok(plain)
    }

    /// Opens sealed bytes into `plain` (cleared first), reusing its allocation: a list opens
    /// thousands of rows one after another into one buffer.
    pub fn open_plain_into(&self, sealed: &[u8], plain: &mut Vec<u8>) -> Result<(), SealError> {
        if sealed.len() < IV_LEN + 16 {
            return Err(SealError::Open);
        }
        let (iv, rest) = sealed.split_at(IV_LEN);
        for key in std::iter::once(&self.0).chain(self.1.iter()) {
            plain.clear();
            plain.extend_from_slice(rest);
            if key
                .decrypt_in_place(Nonce::from_slice(iv), b"", plain)
                .is_ok()
            {
                return Ok(());
            }
        }
        Err(SealError::Open)
    }

    /// Opens the base64url form.
    pub fn open(&self, sealed: &str) -> Result<Value, SealError> {
        self.open_bytes(&decode(sealed)?)
    }
}

/// The raw bytes of the base64url form (what the row's `data bytea` holds).
pub fn decode(sealed: &str) -> Result<Vec<u8>, SealError> {
    URL_SAFE_NO_PAD.decode(sealed).map_err(|_| SealError::Open)
}

/// IVs drawn at the edge for one decision; the decider takes them in order.
#[derive(Debug, Clone)]
pub struct Nonces(Vec<[u8; IV_LEN]>);

impl Nonces {
    /// `count` random IVs.
    pub fn fresh(count: usize) -> Nonces {
        use rand::Rng;
        let mut rng = rand::rng();
        Nonces((0..count).map(|_| rng.random()).collect())
    }

    /// Given IVs, for tests.
    pub fn given(ivs: Vec<[u8; IV_LEN]>) -> Nonces {
        Nonces(ivs)
    }

    /// The next IV.
    pub fn take(&mut self) -> Result<[u8; IV_LEN], SealError> {
        self.0.pop().ok_or(SealError::NoNonce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key() -> SiteKey {
        SiteKey::from_hex(&"ab".repeat(32)).expect("key")
    }

    #[test]
    fn sealed_data_opens_back_and_hides_its_text() {
        let data = json!({"clazz": "Article", "titre": "Les Misérables", "taille": 3, "ok": true});
        let sealed = key().seal_bytes(&data, [7; IV_LEN]).expect("seal");
        assert_eq!(&sealed[..IV_LEN], &[7; IV_LEN]);
        assert!(!String::from_utf8_lossy(&sealed).contains("Mis"));
        assert_eq!(key().open_bytes(&sealed), Ok(data));
    }

    #[test]
    fn an_altered_or_foreign_seal_does_not_open() {
        let mut sealed = key()
            .seal_bytes(&json!({"a": 1}), [1; IV_LEN])
            .expect("seal");
        let last = sealed.len() - 1;
        sealed[last] ^= 1;
        assert_eq!(key().open_bytes(&sealed), Err(SealError::Open));
        let other = SiteKey::from_hex(&"cd".repeat(32)).expect("key");
        let good = key()
            .seal_bytes(&json!({"a": 1}), [1; IV_LEN])
            .expect("seal");
        assert_eq!(other.open_bytes(&good), Err(SealError::Open));
    }

    #[test]
    fn a_previous_key_still_opens_and_is_told_apart() {
        let old = key()
            .seal_bytes(&json!({"a": 1}), [3; IV_LEN])
            .expect("seal");
        let rotated = SiteKey::from_hex(&"cd".repeat(32))
            .and_then(|k| k.with_previous([&*"ab".repeat(32)]))
            .expect("keys");
        assert_eq!(rotated.open_bytes(&old), Ok(json!({"a": 1})));
        assert!(!rotated.is_current(&old));
        assert!(rotated.is_current(&rotated.seal_bytes(&json!(1), [4; IV_LEN]).expect("seal")));
    }

    #[test]
    fn opening_into_a_used_buffer_gives_the_plain_bytes_even_under_a_previous_key() {
        let rotated = SiteKey::from_hex(&"cd".repeat(32))
            .and_then(|k| k.with_previous([&*"ab".repeat(32)]))
            .expect("keys");
        let old = key()
            .seal_bytes(&json!({"titre": "Germinal"}), [5; IV_LEN])
            .expect("seal");
        let mut plain = b"left over from the row before".to_vec();
        rotated.open_plain_into(&old, &mut plain).expect("open");
        assert_eq!(Ok(plain), key().open_plain(&old));
        let mut altered = old.clone();
        altered[IV_LEN] ^= 1;
        assert_eq!(
            rotated.open_plain_into(&altered, &mut Vec::new()),
            Err(SealError::Open)
        );
    }

    #[test]
    fn a_key_is_64_hex_digits() {
        assert!(SiteKey::from_hex("abcd").is_err());
        assert!(SiteKey::from_hex(&"zz".repeat(32)).is_err());
    }

    #[test]
    fn fresh_nonces_differ() {
        let mut n = Nonces::fresh(2);
        assert_ne!(n.take(), n.take());
        assert_eq!(n.take(), Err(SealError::NoNonce));
    }
}
