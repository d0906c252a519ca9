//! A user's session: the `SyncGatewaySession` cookie a request carries, valid when this server
//! signed it for this database ([`super::session_token`]), unexpired, made under the user's
//! current password, and not ended by a logout.

use super::auth::{Caller, unauthorized};
use super::scope;
use super::session_token::SessionClaim;
use super::user::{StoredUser, channels_of, stored_user};
use crate::http::error::CouchError;
use axum::http::{HeaderMap, header};
use deadpool_postgres::Object;
use palimpsest_web::AppState;

/// A request carrying a session cookie: signed by this server for this database, unexpired,
/// made under the user's current password, and not ended by a logout.
pub async fn caller(
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

/// The user of a valid session token (see [`caller`]), with its stored entry.
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
    let Some(token) = cookie(headers) else {
        return Ok(None);
    };
    let Some((name, stored)) = valid_session(state, client, db, &token).await? else {
        return Ok(None);
    };
    let caller = channels_of(client, db, &name, stored.admin_channels, stored.roles).await?;
    scope::remember(db, &caller);
    Ok(SessionClaim::parse(&token))
}

/// The session cookie's name, Sync Gateway's.
pub const SESSION_COOKIE: &str = "SyncGatewaySession";

/// The session cookie a request carries.
pub fn cookie(headers: &HeaderMap) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == SESSION_COOKIE)
        .map(|(_, v)| v.to_owned())
}
