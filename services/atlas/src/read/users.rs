//! The `users` read model: who a bearer token names, whether an issued token is still the
//! user's, and the administrator's list.
//!
//! A token is looked up in the read model on every request rather than in a cache in this
//! process: the revoke's answer waits until the read model shows the revoke (the command
//! runner's read-your-writes), and every instance reads the same table, so a revoked token
//! stops working at once on every instance; a cache could not see a revoke answered by another
//! one.

use crate::projection::NAME;
use crate::user::{Caller, Role, token_sha256};
use axum::http::StatusCode;
use palimpsest_web::{ApiError, AppState};
use serde_json::{Value, json};

/// The active user whose token hashes to `token`'s hash.
pub async fn caller(state: &AppState, token: &str) -> Result<Option<Caller>, ApiError> {
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

/// Every user with its roles and whether it is active, by id (never a token hash).
pub async fn list(state: &AppState) -> Result<Vec<Value>, ApiError> {
    let client = state.read.get().await?;
    let rows = client
        .query(
            &format!(
                "SELECT user_id, roles, token_sha256 IS NOT NULL, issued_at, revoked_at \
                 FROM {NAME}.users ORDER BY user_id"
            ),
            &[],
        )
        .await
        .map_err(ApiError::internal)?;
    Ok(rows
        .iter()
        .map(|row| {
            json!({
                "user_id": row.get::<_, String>(0),
                "roles": row.get::<_, Vec<String>>(1),
                "active": row.get::<_, bool>(2),
                "issued_at": row.get::<_, String>(3),
                "revoked_at": row.get::<_, Option<String>>(4),
            })
        })
        .collect())
}
