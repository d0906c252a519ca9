//! Who is asking: Sync Gateway's users (HTTP Basic auth, bcrypt password hashes), the admin
//! bearer token, or the guest (disabled unless the database's configuration enables it), and
//! which channels that caller may read.
//!
//! A user's channels (`all_channels`) are derived on each request from its `admin_channels`,
//! its roles' `admin_channels`, the documents' access grants to it or its roles, and the
//! public channel `!`; so a revoked grant takes effect on the next request.

use super::error::CouchError;
use crate::stored::SyncData;
use crate::sync::Writer;
use axum::http::{HeaderMap, StatusCode, header};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use deadpool_postgres::Object;
use palimpsest_web::AppState;
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};
use std::sync::{Mutex, OnceLock};

/// The caller of a request.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The admin token (or CouchDB's admin party): everything is visible.
    pub admin: bool,
    /// The user's name; `None` for the guest and the admin.
    pub name: Option<String>,
    /// The user's roles.
    pub roles: Vec<String>,
    /// The channels it may read (`*`: all).
    pub channels: BTreeSet<String>,
    /// The channels a revoked grant took away, with the sequence of the loss (see
    /// [`super::revoked`]): their documents read as removed.
    pub lost: std::collections::BTreeMap<String, i64>,
}

/// Whether a caller may read a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// In one of its channels.
    Visible,
    /// It left the caller's channels: reads as `{"_removed": true}`.
    Removed,
    /// Never in the caller's channels.
    Hidden,
}

impl Caller {
    /// Whether every document is visible.
    pub fn sees_all(&self) -> bool {
        self.admin || self.channels.contains("*")
    }

    /// The writer the sync function's `require…()` helpers check.
    pub fn writer(&self) -> Writer {
        Writer {
            admin: self.sees_all(),
            name: self.name.clone(),
            roles: self.roles.clone(),
            channels: self.channels.iter().cloned().collect(),
        }
    }

    /// The channels to filter `_changes` by, `None` when everything is visible.
    pub fn filter(&self) -> Option<Vec<String>> {
        (!self.sees_all()).then(|| self.channels.iter().cloned().collect())
    }

    /// Whether the caller may read a stored document.
    pub fn sees(&self, sync: &SyncData) -> Visibility {
        if self.sees_all() {
            return Visibility::Visible;
        }
        let mut removed = false;
        for (channel, removal) in &sync.channels {
            if self.channels.contains(channel) {
                if removal.is_none() {
                    return Visibility::Visible;
                }
                removed = true;
            }
        }
        let lost = || {
            sync.channels
                .iter()
                .any(|(channel, removal)| removal.is_none() && self.lost.contains_key(channel))
        };
        if removed || lost() {
            Visibility::Removed
        } else {
            Visibility::Hidden
        }
    }
}

fn unauthorized(reason: &str) -> CouchError {
    CouchError::new(StatusCode::UNAUTHORIZED, "unauthorized", reason)
}

/// The 403 of a document outside the caller's channels.
pub fn forbidden() -> CouchError {
    CouchError::new(StatusCode::FORBIDDEN, "forbidden", "missing channel access")
}

/// Identifies the caller of a request to database `db`.
pub async fn caller(
    state: &AppState,
    client: &Object,
    db: &str,
    headers: &HeaderMap,
) -> Result<Caller, CouchError> {
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok());
    if let Some(token) = auth.and_then(|a| a.strip_prefix("Bearer ")) {
        if palimpsest_web::secret::equal(token.trim(), &state.admin_token) {
            return Ok(Caller {
                admin: true,
                ..Caller::default()
            });
        }
        return Err(unauthorized("Invalid login"));
    }
    if let Some(basic) = auth.and_then(|a| a.strip_prefix("Basic ")) {
        let decoded = STANDARD
            .decode(basic.trim())
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| unauthorized("Invalid login"))?;
        let (name, password) = decoded
            .split_once(':')
            .ok_or_else(|| unauthorized("Invalid login"))?;
        return user(client, db, name, password).await;
    }
    if let Some(token) = session_cookie(headers) {
        let now = chrono::Utc::now().timestamp();
        let name = session_user(&state.admin_token, db, &token, now)
            .ok_or_else(|| unauthorized("Session expired"))?;
        let stored = stored_user(client, db, &name).await?;
        return channels_of(client, db, &name, stored.admin_channels, stored.roles).await;
    }
    guest(client, db).await
}

async fn guest(client: &Object, db: &str) -> Result<Caller, CouchError> {
    let row = client
        .query_opt("SELECT guest FROM docs.databases WHERE name = $1", &[&db])
        .await?
        .ok_or_else(CouchError::no_database)?;
    let guest: Option<String> = row.get(0);
    let channels: Vec<String> = match guest {
        None => return Err(unauthorized("Login required")),
        Some(text) => serde_json::from_str(&text).map_err(CouchError::internal)?,
    };
    let mut caller = Caller {
        channels: channels.into_iter().collect(),
        ..Caller::default()
    };
    caller.admin = caller.channels.contains("*");
    caller.channels.insert("!".into());
    Ok(caller)
}

#[derive(serde::Deserialize)]
struct StoredUser {
    #[serde(default)]
    admin_channels: Vec<String>,
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    disabled: bool,
    #[serde(default)]
    passwordhash_bcrypt: Option<String>,
}

async fn stored_user(client: &Object, db: &str, name: &str) -> Result<StoredUser, CouchError> {
    let row = client
        .query_opt(
            "SELECT value FROM docs.kv WHERE db = $1 AND key = $2",
            &[&db, &format!("user:{name}")],
        )
        .await?
        .ok_or_else(|| unauthorized("Invalid login"))?;
    let stored: StoredUser =
        serde_json::from_str(row.get::<_, &str>(0)).map_err(CouchError::internal)?;
    if stored.disabled {
        return Err(unauthorized("Invalid login"));
    }
    Ok(stored)
}

async fn user(client: &Object, db: &str, name: &str, password: &str) -> Result<Caller, CouchError> {
    let stored = stored_user(client, db, name).await?;
    let hash = stored
        .passwordhash_bcrypt
        .clone()
        .ok_or_else(|| unauthorized("Invalid login"))?;
    if !verified(&hash, password).await? {
        return Err(unauthorized("Invalid login"));
    }
    channels_of(client, db, name, stored.admin_channels, stored.roles).await
}

/// A user's derived roles and channels (`all_channels`): its admin roles and the roles
/// documents grant it (`role()`); its admin channels, its roles' channels, the documents'
/// grants to it or its roles, and the public channel. Read on each request, so a revoked grant
/// (the granting document changed, deleted or purged) takes effect on the next one, and the
/// channels it took away are kept as lost.
pub async fn channels_of(
    client: &Object,
    db: &str,
    name: &str,
    admin_channels: Vec<String>,
    admin_roles: Vec<String>,
) -> Result<Caller, CouchError> {
    let mut channels: BTreeSet<String> = admin_channels.into_iter().collect();
    let mut roles: BTreeSet<String> = admin_roles.into_iter().collect();
    for row in client
        .query(
            "SELECT DISTINCT role FROM docs.role_access \
             WHERE db = $1 AND grantee = $2 AND revoked_seq IS NULL",
            &[&db, &name],
        )
        .await?
    {
        roles.insert(row.get(0));
    }
    let role_keys: Vec<String> = roles.iter().map(|r| format!("role:{r}")).collect();
    for row in client
        .query(
            "SELECT value FROM docs.kv WHERE db = $1 AND key = ANY($2)",
            &[&db, &role_keys],
        )
        .await?
    {
        let role: StoredUser =
            serde_json::from_str(row.get::<_, &str>(0)).map_err(CouchError::internal)?;
        channels.extend(role.admin_channels);
    }
    let mut grantees = role_keys;
    grantees.push(name.to_owned());
    for row in client
        .query(
            "SELECT DISTINCT channel FROM docs.access \
             WHERE db = $1 AND grantee = ANY($2) AND revoked_seq IS NULL",
            &[&db, &grantees],
        )
        .await?
    {
        channels.insert(row.get(0));
    }
    channels.insert("!".into());
    let lost = super::revoked::lost(client, db, name, &roles, &channels).await?;
    Ok(Caller {
        admin: false,
        name: Some(name.to_owned()),
        roles: roles.into_iter().collect(),
        channels,
        lost,
    })
}

/// The session cookie's name, Sync Gateway's.
pub const SESSION_COOKIE: &str = "SyncGatewaySession";

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
fn hmac(key: &[u8], message: &[u8]) -> Vec<u8> {
    let mut block = [0u8; 64];
    if key.len() > 64 {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let inner: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let outer: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let inner_hash = Sha256::new()
        .chain_update(&inner)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(&outer)
        .chain_update(inner_hash)
        .finalize()
        .to_vec()
}

/// A signed session token for user `name` of `db`, valid until `expires` (unix seconds).
pub fn session_token(secret: &str, db: &str, name: &str, expires: i64) -> String {
    let name64 = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(name);
    let signature = hmac(
        secret.as_bytes(),
        format!("{db}\n{name}\n{expires}").as_bytes(),
    );
    format!("{name64}.{expires}.{}", hex::encode(signature))
}

/// The user a session token names, if it is valid and unexpired at `now`.
pub fn session_user(secret: &str, db: &str, token: &str, now: i64) -> Option<String> {
    let mut parts = token.split('.');
    let name64 = parts.next()?;
    let expires: i64 = parts.next()?.parse().ok()?;
    let signature = parts.next()?;
    let name = String::from_utf8(
        base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(name64)
            .ok()?,
    )
    .ok()?;
    let expected = session_token(secret, db, &name, expires);
    let matches =
        palimpsest_web::secret::equal(expected.rsplit('.').next().unwrap_or_default(), signature);
    (matches && expires > now).then_some(name)
}

fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == SESSION_COOKIE)
        .map(|(_, v)| v.to_owned())
}

/// A user logged in through `POST /{db}/_session`: checks the password, returns the caller.
pub async fn login(
    state: &AppState,
    db: &str,
    name: &str,
    password: &str,
) -> Result<Caller, CouchError> {
    let client = super::read::client(state).await?;
    super::read::database(&client, db).await?;
    user(&client, db, name, password).await
}

/// Checks a password against its bcrypt hash; a pair checked once is remembered (by a
/// SHA-256 of the password) so replication's many requests do not each pay for bcrypt.
async fn verified(hash: &str, password: &str) -> Result<bool, CouchError> {
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

/// [`caller`] with a connection of its own.
pub async fn caller_of(
    state: &AppState,
    db: &str,
    headers: &HeaderMap,
) -> Result<Caller, CouchError> {
    let client = super::read::client(state).await?;
    caller(state, &client, db, headers).await
}

/// What a caller reads for a document that left its channels.
pub fn removed_doc(doc_id: &str, rev: &str) -> String {
    crate::body::Outgoing::new(doc_id, rev, "{}")
        .member("_removed", "true")
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        assert_eq!(
            hex::encode(hmac(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_session_token_names_its_user_until_it_expires() {
        let token = session_token("secret", "db", "ann:x", 100);
        assert_eq!(
            session_user("secret", "db", &token, 99),
            Some("ann:x".into())
        );
        assert_eq!(session_user("secret", "db", &token, 100), None);
        assert_eq!(session_user("other", "db", &token, 99), None);
        assert_eq!(session_user("secret", "db2", &token, 99), None);
    }
}
