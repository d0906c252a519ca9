//! Passwords, Sync Gateway's way: bcrypt hashes (cost 10), checked off the async threads; a
//! password checked once against a hash is remembered (by its SHA-256) so that replication's
//! many requests do not each pay for bcrypt.

use crate::http::error::CouchError;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Checks a password against its bcrypt hash; a pair checked once is remembered (by a
/// SHA-256 of the password) so replication's many requests do not each pay for bcrypt.
pub async fn verified(hash: &str, password: &str) -> Result<bool, CouchError> {
    static CHECKED: OnceLock<Mutex<HashMap<String, Vec<u8>>>> = OnceLock::new();
    let fingerprint = Sha256::digest(password.as_bytes()).to_vec();
    let cache = CHECKED.get_or_init(Mutex::default);
    if let Ok(checked) = cache.lock()
        && checked.get(hash) == Some(&fingerprint)
    {
        return Ok(true);
    }
    let (hash_owned, password_owned) = (hash.to_owned(), password.to_owned());
    let ok = tokio::task::spawn_blocking(move || bcrypt::verify(password_owned, &hash_owned))
        .await
        .map_err(CouchError::internal)?
        .unwrap_or(false);
    if ok && let Ok(mut checked) = cache.lock() {
        checked.insert(hash.to_owned(), fingerprint);
    }
    Ok(ok)
}

/// Hashes a new password (bcrypt, cost 10).
pub async fn hash_password(password: String) -> Result<String, CouchError> {
    tokio::task::spawn_blocking(move || bcrypt::hash(password, 10))
        .await
        .map_err(CouchError::internal)?
        .map_err(CouchError::internal)
}
