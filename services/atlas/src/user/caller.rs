//! Who calls: the administrator (the platform's admin token) or a user (a bearer token the
//! administrator issued, found by its SHA-256 in the `users` read model, see
//! [`crate::read::users::caller`]), and what each may do. The HTTP layer extracts the caller
//! from the request's headers (`http::auth`).

use crate::user::Role;
use crate::user::decide::ADMIN_ACTOR;
use axum::http::StatusCode;
use palimpsest_web::ApiError;

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
