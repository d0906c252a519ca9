//! Who is calling: an API key per caller that names its user, or the admin token.
//!
//! Keys live in `<data_dir>/resources-keys.json` (`{"<key>": {"user_id": 2}, ...}`), read when
//! the router is built; the platform's admin token acts as Deki's admin (user 1, which no key
//! may name, so the administrator's revisions are told apart from any user's). A key is sent
//! as `Authorization: Bearer <key>`, `X-Authtoken: <key>` (Deki's header) or `?authtoken=` /
//! `?apikey=`. Reads are open to anonymous callers (Deki's anonymous user, id 2 is not
//! assumed: anonymous is user 0) except a user's and the site's properties (the `permissions` module); writes need a key
//! ([`Writer`]); admin routes need the admin token ([`Admin`]). Both are extractors that look
//! only at the headers and query, so a request without a valid key is refused before its body
//! is read.
//!
//! Neither the admin token nor a key is compared with `==`: the token in constant time
//! ([`palimpsest_web::secret::equal`]), the keys by their sha256 (the map's lookup compares
//! digests of what the caller sent, which tell nothing about a key).

use crate::http::Resources;
use crate::resource::Principal;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use palimpsest_web::ApiError;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::Path;

/// Deki's admin user id, recorded for writes made with the admin token.
pub const ADMIN_USER_ID: i64 = 1;

/// The lowest user id a key may name: 0 is the anonymous caller, 1 the administrator.
const FIRST_USER_ID: i64 = 2;

/// One key's holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct KeyHolder {
    /// The user the key acts as.
    pub user_id: i64,
}

/// The keys the context accepts (its `Debug` shows how many, never a key or the token).
#[derive(Clone, Default)]
pub struct Keys {
    /// Key holders by the sha256 of their key.
    users: HashMap<[u8; 32], KeyHolder>,
    admin: String,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keys")
            .field("users", &self.users.len())
            .field("admin", &!self.admin.is_empty())
            .finish()
    }
}

/// A key's sha256: what the map is keyed by, so that no lookup compares a key itself.
fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

impl Keys {
    /// Reads `<data_dir>/resources-keys.json` (absent: no user keys) beside the admin token.
    /// A key naming user 0 (anonymous) or 1 (the administrator) is left out, with an error
    /// in the log.
    pub fn load(data_dir: &Path, admin: &str) -> Keys {
        let file = data_dir.join("resources-keys.json");
        let users: HashMap<String, KeyHolder> = match std::fs::read_to_string(&file) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::error!(file = %file.display(), error = %e, "API key file does not parse; no user keys");
                HashMap::new()
            }),
            Err(_) => HashMap::new(),
        };
        Keys::new(users, admin)
    }

    /// The keys `users` (without those naming a reserved user id) and the admin token.
    pub fn new(users: HashMap<String, KeyHolder>, admin: &str) -> Keys {
        let users = users
            .into_iter()
            .filter(|(_, holder)| {
                let allowed = holder.user_id >= FIRST_USER_ID;
                if !allowed {
                    tracing::error!(
                        user_id = holder.user_id,
                        "an API key names a reserved user id (0 anonymous, 1 the administrator); the key is ignored"
                    );
                }
                allowed
            })
            .map(|(key, holder)| (digest(&key), holder))
            .collect();
        Keys {
            users,
            admin: admin.to_owned(),
        }
    }

    /// Who `key` names, if anyone.
    pub fn caller(&self, key: &str) -> Option<Caller> {
        if !self.admin.is_empty() && palimpsest_web::secret::equal(key, &self.admin) {
            return Some(Caller {
                user_id: ADMIN_USER_ID,
                admin: true,
                known: true,
            });
        }
        self.users.get(&digest(key)).map(|holder| Caller {
            user_id: holder.user_id,
            admin: false,
            known: true,
        })
    }
}

/// The caller of a request; anonymous when it sent no key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caller {
    /// The user id recorded in revisions.
    pub user_id: i64,
    /// Holds the admin token.
    pub admin: bool,
    /// Sent a valid key (not anonymous).
    pub known: bool,
}

impl Caller {
    /// The caller if it may write, else 401.
    pub fn writer(self) -> Result<Caller, ApiError> {
        if self.known {
            Ok(self)
        } else {
            Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "an API key is required (Authorization: Bearer <key> or X-Authtoken)",
            ))
        }
    }

    /// The caller if it is the admin, else 401/403.
    pub fn admin(self) -> Result<Caller, ApiError> {
        let caller = self.writer()?;
        if caller.admin {
            Ok(caller)
        } else {
            Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "this needs the admin token",
            ))
        }
    }

    /// Who acts, as the access rules see it.
    pub fn principal(self) -> Principal {
        Principal {
            user_id: self.user_id,
            admin: self.admin,
        }
    }
}

/// A caller with a valid key (or the admin token); anonymous requests are refused with 401
/// before the body is read.
#[derive(Debug, Clone, Copy)]
pub struct Writer(pub Caller);

/// The administrator; others are refused (401 without a key, 403 with a user's) before the
/// body is read.
#[derive(Debug, Clone, Copy)]
pub struct Admin(pub Caller);

fn presented(parts: &Parts) -> Option<String> {
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
    };
    if let Some(bearer) =
        header("authorization").and_then(|v| v.strip_prefix("Bearer ").map(|k| k.trim().to_owned()))
    {
        return Some(bearer);
    }
    if let Some(token) = header("x-authtoken") {
        return Some(token);
    }
    parts.uri.query().and_then(|query| {
        query.split('&').find_map(|pair| {
            let (name, value) = pair.split_once('=')?;
            (name == "authtoken" || name == "apikey").then(|| value.to_owned())
        })
    })
}

impl FromRequestParts<Resources> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Resources,
    ) -> Result<Self, Self::Rejection> {
        match presented(parts) {
            None => Ok(Caller {
                user_id: 0,
                admin: false,
                known: false,
            }),
            Some(key) => state
                .keys
                .caller(&key)
                .ok_or_else(|| ApiError::new(StatusCode::UNAUTHORIZED, "unknown API key")),
        }
    }
}

impl FromRequestParts<Resources> for Writer {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Resources,
    ) -> Result<Self, Self::Rejection> {
        let caller = Caller::from_request_parts(parts, state).await?;
        caller.writer().map(Writer)
    }
}

impl FromRequestParts<Resources> for Admin {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &Resources,
    ) -> Result<Self, Self::Rejection> {
        let caller = Caller::from_request_parts(parts, state).await?;
        caller.admin().map(Admin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> Keys {
        let users = [
            ("ann".to_owned(), KeyHolder { user_id: 10 }),
            ("root".to_owned(), KeyHolder { user_id: 1 }),
            ("nobody".to_owned(), KeyHolder { user_id: 0 }),
        ];
        Keys::new(users.into_iter().collect(), "the-admin-token")
    }

    #[test]
    fn the_admin_token_and_user_keys_name_their_callers() {
        let keys = keys();
        let admin = keys.caller("the-admin-token").expect("admin");
        assert!(admin.admin && admin.known);
        assert_eq!(admin.user_id, ADMIN_USER_ID);
        let ann = keys.caller("ann").expect("ann");
        assert_eq!((ann.user_id, ann.admin), (10, false));
        assert_eq!(keys.caller("the-admin-toke"), None);
        assert_eq!(keys.caller("the-admin-token "), None);
        assert_eq!(keys.caller("an"), None);
    }

    #[test]
    fn no_key_may_name_the_administrator_or_the_anonymous_user() {
        let keys = keys();
        assert_eq!(keys.caller("root"), None);
        assert_eq!(keys.caller("nobody"), None);
    }

    #[test]
    fn debug_output_shows_no_secret() {
        let shown = format!("{:?}", keys());
        assert!(
            !shown.contains("the-admin-token") && !shown.contains("ann"),
            "{shown}"
        );
    }

    #[test]
    fn an_empty_admin_token_names_nobody() {
        let keys = Keys::new(HashMap::new(), "");
        assert_eq!(keys.caller(""), None);
    }
}
