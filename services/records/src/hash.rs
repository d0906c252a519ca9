//! The spec's string hashes: every key the host sees (`pk`, collection values, `uniq`/`hash`
//! index values) is one of these, so equal values meet without being readable.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// `sha32(s)`: the SHA-256 of `s` (32 bytes), base64url without padding (43 characters).
pub fn sha32(s: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(s.as_bytes()))
}

/// `sha16(s)`: the SHA-256 of `s` cut to its bytes 3 to 19 (16 bytes), base64url without
/// padding (22 characters).
pub fn sha16(s: &str) -> String {
    let digest = Sha256::digest(s.as_bytes());
    URL_SAFE_NO_PAD.encode(&digest[3..19])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha16_is_bytes_3_to_19_of_sha256_in_base64url() {
        // sha256("abc") = ba7816bf (bytes 3..19 start at bf) 8f01cfea 414140de 5dae2223 b00361a3 96177a9c b410ff61 f20015ad
        let bytes = hex::decode("bf8f01cfea414140de5dae2223b00361").expect("hex");
        assert_eq!(sha16("abc"), URL_SAFE_NO_PAD.encode(bytes));
        assert_eq!(sha16("abc").len(), 22);
    }

    #[test]
    fn sha32_is_the_whole_sha256_in_base64url() {
        assert_eq!(sha32("abc"), "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
    }
}
