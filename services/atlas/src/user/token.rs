//! A user's bearer token: drawn at random when issued, kept only as its SHA-256.

use sha2::{Digest, Sha256};

/// A fresh random 256-bit token, as 64 hex digits.
pub fn new_token() -> String {
    use rand::Rng;
    let bytes: [u8; 32] = rand::rng().random();
    hex::encode(bytes)
}

/// Lowercase hex SHA-256 of a token: what the log and the read model keep of it.
pub fn token_sha256(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}
