//! Who is asking: the administrator (the admin token as a bearer token, or as HTTP Basic
//! credentials under the configured admin name), Sync Gateway's users (HTTP Basic auth against
//! bcrypt hashes kept sealed, throttled on failure; or a session cookie), or the guest
//! (disabled unless the database's configuration enables it), and which channels that caller
//! may read. Who may call which route: `docs/authorization/docs-access.md`.
//!
//! A user's channels (`all_channels`) are derived on each request from its `admin_channels`,
//! its roles' `admin_channels`, the documents' access grants to it or its roles, and the
//! public channel `!`; so a revoked grant takes effect on the next request.

use crate::access::scope;
pub use crate::access::session_token::{SessionClaim, new_session_id};
use crate::access::{Access, LoginKeys};
use crate::http::error::CouchError;
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
    /// Everything is visible: the administrator, or CouchDB's admin party (a guest allowed `*`).
    pub admin: bool,
    /// The administrator itself (the admin token, as a bearer token or Basic credentials):
    /// what only it may do (databases, design documents) checks this, not [`Caller::admin`].
    pub administrator: bool,
    /// The user's name; `None` for the guest and the admin.
    pub name: Option<String>,
    /// The user's roles.
    pub roles: Vec<String>,
    /// The channels it may read (`*`: all).
    pub channels: BTreeSet<String>,
    /// The channels a revoked grant took away, with the sequence of the loss (see
    /// [`crate::revocation`]): their documents read as removed.
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
    /// The administrator.
    pub fn administrator() -> Caller {
        Caller {
            admin: true,
            administrator: true,
            ..Caller::default()
        }
    }

    /// The actor events caused by this caller name (`Metadata.actor`): `admin`, `user:<name>`
    /// (prefixed, so that a Sync Gateway user called `admin` is not taken for the
    /// administrator) or `guest`.
    pub fn actor(&self) -> String {
        match (&self.name, self.administrator) {
            (_, true) => "admin".to_owned(),
            (Some(name), false) => format!("user:{name}"),
            (None, false) => "guest".to_owned(),
        }
    }

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

/// A 401 `unauthorized` saying why.
pub fn unauthorized(reason: &str) -> CouchError {
    CouchError::new(StatusCode::UNAUTHORIZED, "unauthorized", reason)
}

/// The 403 of a document outside the caller's channels.
pub fn forbidden() -> CouchError {
    CouchError::new(StatusCode::FORBIDDEN, "forbidden", "missing channel access")
}

/// The 403 of what only the administrator may do.
pub fn admin_required() -> CouchError {
    CouchError::new(
        StatusCode::FORBIDDEN,
        "forbidden",
        "You are not a server admin.",
    )
}

/// The credentials a request presents, in the order they are considered: the
/// `Authorization` header (bearer or Basic), else the session cookie, else none (the guest).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    /// `Authorization: Bearer <token>`.
    Bearer(String),
    /// `Authorization: Basic` with a name and a password.
    Basic {
        /// The user name.
        name: String,
        /// The password.
        password: String,
    },
    /// The `SyncGatewaySession` cookie.
    Session(String),
    /// An `Authorization` header that is neither well-formed Basic nor bearer.
    Malformed,
    /// Nothing: the guest.
    None,
}

/// What credentials `headers` present.
pub fn credentials(headers: &HeaderMap) -> Credentials {
    let Some(auth) = headers.get(header::AUTHORIZATION) else {
        return match session_cookie(headers) {
            Some(token) => Credentials::Session(token),
            None => Credentials::None,
        };
    };
    let Ok(auth) = auth.to_str() else {
        return Credentials::Malformed;
    };
    if let Some(token) = auth.strip_prefix("Bearer ") {
        return Credentials::Bearer(token.trim().to_owned());
    }
    let basic = auth
        .strip_prefix("Basic ")
        .and_then(|b| STANDARD.decode(b.trim()).ok())
        .and_then(|b| String::from_utf8(b).ok());
    match basic.as_deref().and_then(|d| d.split_once(':')) {
        Some((name, password)) => Credentials::Basic {
            name: name.to_owned(),
            password: password.to_owned(),
        },
        None => Credentials::Malformed,
    }
}

/// Identifies the caller of a request to database `db` (once per request: a second question
/// is answered from the request's scope).
pub async fn caller(
    state: &AppState,
    client: &Object,
    db: &str,
    headers: &HeaderMap,
) -> Result<Caller, CouchError> {
    if let Some(known) = scope::cached(db) {
        return Ok(known);
    }
    let caller = identify(state, client, db, headers).await?;
    scope::remember(db, &caller);
    Ok(caller)
}

async fn identify(
    state: &AppState,
    client: &Object,
    db: &str,
    headers: &HeaderMap,
) -> Result<Caller, CouchError> {
    match credentials(headers) {
        Credentials::Bearer(token) => admin_token(state, &token),
        Credentials::Basic { name, password } => {
            let access = scope::access()?;
            if name == access.admin_name {
                admin_password(state, &access, &password)
            } else {
                user(client, &access, db, &name, &password).await
            }
        }
        Credentials::Session(token) => session(state, client, db, &token).await,
        Credentials::Malformed => Err(unauthorized("Invalid login")),
        Credentials::None => guest(client, db).await,
    }
}

/// The administrator, if `headers` carry the admin token (bearer, or Basic under the admin
/// name); outside a database nobody else can be recognised: any other credential or none is
/// a 401.
pub fn administrator(state: &AppState, headers: &HeaderMap) -> Result<Caller, CouchError> {
    let caller = match credentials(headers) {
        Credentials::Bearer(token) => admin_token(state, &token)?,
        Credentials::Basic { name, password } => {
            let access = scope::access()?;
            if name != access.admin_name {
                return Err(unauthorized("Name or password is incorrect."));
            }
            admin_password(state, &access, &password)?
        }
        Credentials::None => return Err(unauthorized("Authentication required.")),
        Credentials::Session(_) | Credentials::Malformed => {
            return Err(unauthorized("Name or password is incorrect."));
        }
    };
    scope::remember("", &caller);
    Ok(caller)
}

fn admin_token(state: &AppState, token: &str) -> Result<Caller, CouchError> {
    if palimpsest_web::secret::equal(token, &state.admin_token) {
        Ok(Caller::administrator())
    } else {
        Err(unauthorized("Invalid login"))
    }
}

/// Basic `<admin name>:<admin token>`, throttled like any password login.
fn admin_password(state: &AppState, access: &Access, password: &str) -> Result<Caller, CouchError> {
    let keys = LoginKeys::new("", &access.admin_name, scope::peer());
    access.check_login(&keys)?;
    let ok = palimpsest_web::secret::equal(password, &state.admin_token);
    access.record_login(&keys, ok)?;
    if ok {
        Ok(Caller::administrator())
    } else {
        Err(unauthorized("Invalid login"))
    }
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

/// A user's `user:<name>` entry as the read model keeps it.
#[derive(serde::Deserialize)]
pub struct StoredUser {
    #[serde(default)]
    admin_channels: Vec<String>,
    #[serde(default)]
    roles: Vec<String>,
    #[serde(default)]
    disabled: bool,
    /// The bcrypt hash sealed with the password key (every hash saved since they are sealed).
    #[serde(default)]
    passwordhash_sealed: Option<String>,
    /// The bcrypt hash in the clear (a user last saved by an event from before sealing).
    #[serde(default)]
    passwordhash_bcrypt: Option<String>,
}

impl StoredUser {
    /// The bcrypt hash, opened with the password keys when sealed.
    fn bcrypt_hash(&self, access: &Access) -> Result<Option<String>, CouchError> {
        match (&self.passwordhash_sealed, &self.passwordhash_bcrypt) {
            (Some(sealed), _) => {
                let plain = access.keys()?.open(sealed).map_err(CouchError::internal)?;
                String::from_utf8(plain)
                    .map(Some)
                    .map_err(CouchError::internal)
            }
            (None, plain) => Ok(plain.clone()),
        }
    }

    /// What a session is bound to: a digest of the stored password hash (sealed or not), so
    /// a new password (a new hash) ends the sessions made before it.
    pub fn password_tag(&self) -> String {
        let stored = self
            .passwordhash_sealed
            .as_deref()
            .or(self.passwordhash_bcrypt.as_deref())
            .unwrap_or_default();
        hex::encode(&Sha256::digest(stored.as_bytes())[..8])
    }
}

/// The stored entry of user `name` (disabled users included); `None` when there is none.
pub async fn stored_user(
    client: &Object,
    db: &str,
    name: &str,
) -> Result<Option<StoredUser>, CouchError> {
    let Some(row) = client
        .query_opt(
            "SELECT value FROM docs.kv WHERE db = $1 AND key = $2",
            &[&db, &format!("user:{name}")],
        )
        .await?
    else {
        return Ok(None);
    };
    serde_json::from_str(row.get::<_, &str>(0))
        .map(Some)
        .map_err(CouchError::internal)
}

/// The enabled user `name`, else a 401.
async fn enabled_user(client: &Object, db: &str, name: &str) -> Result<StoredUser, CouchError> {
    stored_user(client, db, name)
        .await?
        .filter(|stored| !stored.disabled)
        .ok_or_else(|| unauthorized("Invalid login"))
}

/// A password login, throttled per user and per client address.
async fn user(
    client: &Object,
    access: &Access,
    db: &str,
    name: &str,
    password: &str,
) -> Result<Caller, CouchError> {
    let keys = LoginKeys::new(db, name, scope::peer());
    access.check_login(&keys)?;
    let stored = stored_user(client, db, name)
        .await?
        .filter(|stored| !stored.disabled);
    let matched = match &stored {
        Some(user) => match user.bcrypt_hash(access)? {
            Some(hash) => verified(&hash, password).await?,
            None => false,
        },
        None => false,
    };
    access.record_login(&keys, matched)?;
    match stored {
        Some(stored) if matched => {
            channels_of(client, db, name, stored.admin_channels, stored.roles).await
        }
        _ => Err(unauthorized("Invalid login")),
    }
}

/// A request carrying a session cookie: signed by this server for this database, unexpired,
/// made under the user's current password, and not ended by a logout.
async fn session(
    state: &AppState,
    client: &Object,
    db: &str,
    token: &str,
) -> Result<Caller, CouchError> {
    let (name, stored) = valid_session(state, client, db, token)
        .await?
        .ok_or_else(|| unauthorized("Session expired"))?;
    channels_of(client, db, &name, stored.admin_channels, stored.roles).await
}

/// The user of a valid session token (see [`session`]), with its stored entry.
async fn valid_session(
    state: &AppState,
    client: &Object,
    db: &str,
    token: &str,
) -> Result<Option<(String, StoredUser)>, CouchError> {
    let Some(claim) = SessionClaim::parse(token) else {
        return Ok(None);
    };
    let Some(stored) = stored_user(client, db, &claim.name)
        .await?
        .filter(|stored| !stored.disabled)
    else {
        return Ok(None);
    };
    let now = chrono::Utc::now().timestamp();
    if !claim.valid(&state.admin_token, db, &stored.password_tag(), now) {
        return Ok(None);
    }
    let ended = client
        .query_opt(
            "SELECT 1 FROM docs.kv WHERE db = $1 AND key = $2",
            &[&db, &crate::principal::ended_session_key(&claim.id)],
        )
        .await?
        .is_some();
    Ok((!ended).then_some((claim.name, stored)))
}

/// The valid session a request's cookie names: its user, id and expiry (its user becomes the
/// request's caller).
pub async fn current_session(
    state: &AppState,
    client: &Object,
    db: &str,
    headers: &HeaderMap,
) -> Result<Option<SessionClaim>, CouchError> {
    let Some(token) = session_cookie(headers) else {
        return Ok(None);
    };
    let Some((name, stored)) = valid_session(state, client, db, &token).await? else {
        return Ok(None);
    };
    let caller = channels_of(client, db, &name, stored.admin_channels, stored.roles).await?;
    scope::remember(db, &caller);
    Ok(SessionClaim::parse(&token))
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
    let lost = crate::revocation::lost(client, db, name, &roles, &channels).await?;
    Ok(Caller {
        admin: false,
        administrator: false,
        name: Some(name.to_owned()),
        roles: roles.into_iter().collect(),
        channels,
        lost,
    })
}

/// The session cookie's name, Sync Gateway's.
pub const SESSION_COOKIE: &str = "SyncGatewaySession";

/// The session cookie a request carries.
pub fn session_cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == SESSION_COOKIE)
        .map(|(_, v)| v.to_owned())
}

/// A user logged in through `POST /{db}/_session`: checks the password (throttled), returns
/// the caller and its password tag (what the session is bound to).
pub async fn login(
    state: &AppState,
    db: &str,
    name: &str,
    password: &str,
) -> Result<(Caller, String), CouchError> {
    let client = crate::read::client(state).await?;
    crate::read::database(&client, db).await?;
    let access = scope::access()?;
    let caller = user(&client, &access, db, name, password).await?;
    let tag = enabled_user(&client, db, name).await?.password_tag();
    scope::remember(db, &caller);
    Ok((caller, tag))
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
    let client = crate::read::client(state).await?;
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

    fn with(auth: Option<&str>, cookie: Option<&str>) -> HeaderMap {
        let mut headers = HeaderMap::new();
        if let Some(auth) = auth {
            headers.insert(header::AUTHORIZATION, auth.parse().expect("header"));
        }
        if let Some(cookie) = cookie {
            headers.insert(header::COOKIE, cookie.parse().expect("header"));
        }
        headers
    }

    #[test]
    fn credentials_prefer_the_authorization_header_to_the_cookie() {
        let basic = format!("Basic {}", STANDARD.encode("ann:p:w"));
        let cookie = format!("{SESSION_COOKIE}=tok");
        assert_eq!(
            credentials(&with(Some(&basic), Some(&cookie))),
            Credentials::Basic {
                name: "ann".into(),
                password: "p:w".into()
            }
        );
        assert_eq!(
            credentials(&with(Some("Bearer  t "), None)),
            Credentials::Bearer("t".into())
        );
        assert_eq!(
            credentials(&with(None, Some(&cookie))),
            Credentials::Session("tok".into())
        );
        assert_eq!(
            credentials(&with(Some("Digest x"), None)),
            Credentials::Malformed
        );
        assert_eq!(credentials(&with(None, None)), Credentials::None);
    }
}
