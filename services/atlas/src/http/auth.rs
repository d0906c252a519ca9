//! Who calls: the administrator (the platform's admin token) or a user (a bearer token the
//! administrator issued, looked up by its SHA-256 in the `users` read model). Taken from the
//! headers, before any body is read: extract [`Caller`] before the body in every handler.
//!
//! The lookup asks the read model on every request rather than a cache in this process: the
//! revoke's answer waits until the read model shows the revoke (the command runner's
//! read-your-writes), and every instance reads the same table, so a revoked token stops working
//! at once on every instance; a cache here could not see a revoke answered by another one.

use crate::projection::NAME;
use crate::user::Role;
use crate::user::decide::ADMIN_ACTOR;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_web::{ApiError, AppState, secret};
use serde_json::json;
use sha2::{Digest, Sha256};

/// The caller of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The administrator: issues users, and may do everything a user may (acting as `admin`).
    Admin,
    /// A user the administrator issued a token.
    User {
        /// The user's id: what the spec's `created_by`, `locked_by`, `reviewed_by` … hold.
        id: String,
        /// Its roles.
        roles: Vec<Role>,
    },
}

/// A 401: no credential, or one that names nobody.
#[derive(Debug)]
pub struct Unauthenticated(pub &'static str);

impl IntoResponse for Unauthenticated {
    fn into_response(self) -> Response {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer realm=\"atlas\"")],
            axum::Json(json!({ "error": self.0 })),
        )
            .into_response()
    }
}

/// Lowercase hex SHA-256 of a token: what the log and the read model keep of it.
pub fn token_sha256(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or_else(|| {
            Unauthenticated("an Authorization: Bearer token is required").into_response()
        })?;
        if secret::equal(token, &state.admin_token) {
            return Ok(Caller::Admin);
        }
        lookup(state, token)
            .await
            .map_err(IntoResponse::into_response)?
            .ok_or_else(|| Unauthenticated("unknown or revoked bearer token").into_response())
    }
}

/// The bearer token of the request, if it sent one.
fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// The active user whose token hashes to `token`'s hash.
async fn lookup(state: &AppState, token: &str) -> Result<Option<Caller>, ApiError> {
    let client = state.read.get().await.map_err(|e| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            format!("atlas read model: {e}"),
        )
    })?;
    let row = client
        .query_opt(
            &format!("SELECT user_id, roles FROM {NAME}.users WHERE token_sha256 = $1"),
            &[&token_sha256(token)],
        )
        .await
        .map_err(|e| {
            // The table is missing while the read model is first built or rebuilt (a new
            // version): the client may retry, and the log says why.
            tracing::error!(error = %e, "atlas token lookup failed");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the atlas users cannot be read now (read model unavailable); retry",
            )
        })?;
    Ok(row.map(|row| Caller::User {
        id: row.get(0),
        roles: row
            .get::<_, Vec<String>>(1)
            .iter()
            .filter_map(|name| Role::parse(name))
            .collect(),
    }))
}

impl Caller {
    /// The name the caller's events and the spec's columns carry: the user's id, or `admin`.
    pub fn actor(&self) -> &str {
        match self {
            Caller::Admin => ADMIN_ACTOR,
            Caller::User { id, .. } => id,
        }
    }

    /// Whether the caller is the administrator.
    pub fn is_admin(&self) -> bool {
        matches!(self, Caller::Admin)
    }

    /// Refuses (403) a user without `role`; the administrator has every role.
    pub fn require(&self, role: Role, what: &str) -> Result<(), ApiError> {
        match self {
            Caller::Admin => Ok(()),
            Caller::User { roles, .. } if roles.contains(&role) => Ok(()),
            Caller::User { id, .. } => Err(forbidden(format!(
                "{what} needs the {} role, which user {id} does not have",
                role.as_str()
            ))),
        }
    }

    /// Refuses (403) anyone but the administrator.
    pub fn require_admin(&self, what: &str) -> Result<(), ApiError> {
        match self {
            Caller::Admin => Ok(()),
            Caller::User { id, .. } => Err(forbidden(format!(
                "{what} is for the administrator, not user {id}"
            ))),
        }
    }

    /// Refuses (403) a request that names a user other than the caller under `field` (old
    /// clients send their own name, which is accepted).
    pub fn named(&self, field: &str, named: Option<&str>) -> Result<(), ApiError> {
        match named {
            Some(name) if name != self.actor() => Err(forbidden(format!(
                "{field} `{name}` is not the caller: the acting user is the token's, `{}`",
                self.actor()
            ))),
            _ => Ok(()),
        }
    }
}

/// A 403 with its message.
pub fn forbidden(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, message)
}
