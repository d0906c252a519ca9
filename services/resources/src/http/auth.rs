//! Who is calling: an API key per caller that names its user, or the admin token.
//!
//! Keys live in `<data_dir>/resources-keys.json` (`{"<key>": {"user_id": 2}, ...}`), read when
//! the router is built; the platform's admin token acts as Deki's admin (user 1). A key is sent
//! as `Authorization: Bearer <key>`, `X-Authtoken: <key>` (Deki's header) or `?authtoken=` /
//! `?apikey=`. Reads are open to anonymous callers (Deki's anonymous user, id 2 is not
//! assumed: anonymous is user 0); writes need a key; admin routes need the admin token.

use crate::http::Resources;
use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;
use palimpsest_web::ApiError;
use serde::Deserialize;
use std::collections::HashMap;
use std::path::Path;

/// Deki's admin user id, recorded for writes made with the admin token.
pub const ADMIN_USER_ID: i64 = 1;

/// One key's holder.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct KeyHolder {
    /// The user the key acts as.
    pub user_id: i64,
}

/// The keys the context accepts.
#[derive(Debug, Clone, Default)]
pub struct Keys {
    users: HashMap<String, KeyHolder>,
    admin: String,
}

impl Keys {
    /// Reads `<data_dir>/resources-keys.json` (absent: no user keys) beside the admin token.
    pub fn load(data_dir: &Path, admin: &str) -> Keys {
        let file = data_dir.join("resources-keys.json");
        let users = match std::fs::read_to_string(&file) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::error!(file = %file.display(), error = %e, "API key file does not parse; no user keys");
                HashMap::new()
            }),
            Err(_) => HashMap::new(),
        };
        Keys {
            users,
            admin: admin.to_owned(),
        }
    }

    fn caller(&self, key: &str) -> Option<Caller> {
        if !self.admin.is_empty() && key == self.admin {
            return Some(Caller {
                user_id: ADMIN_USER_ID,
                admin: true,
                known: true,
            });
        }
        self.users.get(key).map(|holder| Caller {
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
}

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
