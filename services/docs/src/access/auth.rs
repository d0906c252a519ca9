//! Who is asking: the administrator (the admin token as a bearer token, or as HTTP Basic
//! credentials under the configured admin name), Sync Gateway's users (HTTP Basic auth against
//! bcrypt hashes kept sealed, throttled on failure; or a session cookie), or the guest
//! (disabled unless the database's configuration enables it), and which channels that caller
//! may read. Who may call which route: `docs/authorization/docs-access.md`.
//!
//! A user's password login and channels (`all_channels`, derived on each request, so a revoked
//! grant takes effect on the next one) are [`super::user`]'s; a session cookie's check is
//! [`super::session`]'s.

pub use crate::access::session_token::{SessionClaim, new_session_id};
use crate::access::{Access, LoginKeys, scope, session, user};
use crate::http::error::CouchError;
use crate::stored::SyncData;
use crate::sync::Writer;
use axum::http::{HeaderMap, StatusCode, header};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use deadpool_postgres::Object;
use palimpsest_web::AppState;
use std::collections::BTreeSet;

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
        return match session::cookie(headers) {
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

/// Who the credentials of `headers` name, for database `db`.
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
                user::password_login(client, &access, db, &name, &password).await
            }
        }
        Credentials::Session(token) => session::caller(state, client, db, &token).await,
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

/// The guest of `db`, when its configuration lets one in (with the channels it gives it).
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

/// The administrator, when `headers` carry its credential (the admin token as a bearer token,
/// or as the Basic password of the admin name) and it is right: who that caller is does not
/// depend on the database, so it is known, and remembered for `db`, without a query (each
/// query of a write's check costs a round trip or two). `None`: another credential, none, or a
/// wrong one, which [`caller`] answers against the database.
pub fn known_administrator(
    state: &AppState,
    db: &str,
    headers: &HeaderMap,
) -> Result<Option<Caller>, CouchError> {
    let caller = match credentials(headers) {
        Credentials::Bearer(token) if palimpsest_web::secret::equal(&token, &state.admin_token) => {
            Caller::administrator()
        }
        Credentials::Basic { name, password }
            if palimpsest_web::secret::equal(&password, &state.admin_token) =>
        {
            let access = scope::access()?;
            if name != access.admin_name {
                return Ok(None);
            }
            // Throttled and recorded like every password login.
            admin_password(state, &access, &password)?
        }
        _ => return Ok(None),
    };
    scope::remember(db, &caller);
    Ok(Some(caller))
}

/// [`caller`] with a connection of its own, taken only when the request's scope does not
/// know the caller yet and it is not the administrator.
pub async fn caller_of(
    state: &AppState,
    db: &str,
    headers: &HeaderMap,
) -> Result<Caller, CouchError> {
    if let Some(known) = scope::cached(db) {
        return Ok(known);
    }
    if let Some(administrator) = known_administrator(state, db, headers)? {
        return Ok(administrator);
    }
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
        let cookie = format!("{}=tok", session::SESSION_COOKIE);
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
