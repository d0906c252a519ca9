//! Sessions, Sync Gateway's way: `GET|POST|DELETE /{db}/_session` on the public side (a signed
//! `SyncGatewaySession` cookie after a password login) and `POST /_admin/{db}/_session` to make
//! one for a user without its password.

use super::error::CouchError;
use crate::access::auth::{self, Caller, SessionClaim};
use crate::access::session::{self, SESSION_COOKIE};
use crate::access::user;
use crate::read;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use serde::Deserialize;
use serde_json::{Value, json};

/// How long a session lasts: Sync Gateway's 24 hours.
const SESSION_SECS: i64 = 24 * 3600;

fn user_ctx(caller: &Caller) -> Value {
    let channels: serde_json::Map<String, Value> = caller
        .channels
        .iter()
        .map(|c| (c.clone(), json!(1)))
        .collect();
    json!({
        "ok": true,
        "userCtx": {"name": caller.name, "channels": channels},
        "authentication_handlers": ["default", "cookie"]
    })
}

/// A session belongs to a database: Sync Gateway answers 404 for one that does not exist.
async fn existing(state: &AppState, db: &str) -> Result<(), CouchError> {
    let client = read::client(state).await?;
    read::database(&client, db).await.map(|_| ())
}

/// `GET /{db}/_session`: who the request is.
pub async fn get(
    State(state): State<AppState>,
    Path(db): Path<String>,
    headers: HeaderMap,
) -> Result<Json<Value>, CouchError> {
    existing(&state, &db).await?;
    let caller = auth::caller_of(&state, &db, &headers).await?;
    Ok(Json(user_ctx(&caller)))
}

#[derive(Deserialize)]
struct Login {
    name: String,
    password: String,
}

fn cookie(db: &str, value: &str, max_age: i64) -> String {
    format!("{SESSION_COOKIE}={value}; Path=/docs/{db}; Max-Age={max_age}; HttpOnly")
}

/// `POST /{db}/_session` `{name, password}`: logs in and sets the session cookie, bound to the
/// user's current password (a new password ends it) and ended by a logout.
pub async fn post(
    State(state): State<AppState>,
    Path(db): Path<String>,
    body: Bytes,
) -> Result<Response, CouchError> {
    existing(&state, &db).await?;
    let login: Login = serde_json::from_slice(&body)
        .map_err(|e| CouchError::bad_request(format!("expected {{name, password}}: {e}")))?;
    let (caller, tag) = user::login(&state, &db, &login.name, &login.password).await?;
    let expires = chrono::Utc::now().timestamp() + SESSION_SECS;
    let id = auth::new_session_id();
    let token = SessionClaim::token(&state.admin_token, &db, &login.name, &id, &tag, expires);
    Ok((
        StatusCode::OK,
        [(header::SET_COOKIE, cookie(&db, &token, SESSION_SECS))],
        Json(user_ctx(&caller)),
    )
        .into_response())
}

/// `DELETE /{db}/_session`: ends the session the cookie names (its later requests are refused:
/// a `SessionEnded` event on the user's stream) and forgets the cookie.
pub async fn delete(
    State(state): State<AppState>,
    Path(db): Path<String>,
    headers: HeaderMap,
    request: CommandRequest,
) -> Result<Response, CouchError> {
    let client = read::client(&state).await?;
    read::database(&client, &db).await?;
    if let Some(claim) = session::current_session(&state, &client, &db, &headers).await? {
        drop(client);
        crate::principal::command::end_session(&state, &request, &db, &claim).await?;
    }
    Ok((
        StatusCode::OK,
        [(header::SET_COOKIE, cookie(&db, "", 0))],
        Json(json!({"ok": true})),
    )
        .into_response())
}

#[derive(Deserialize)]
struct AdminSession {
    name: String,
    #[serde(default)]
    ttl: Option<i64>,
}

/// `POST /_admin/{db}/_session` `{name, ttl?}`: a session for a user, as Sync Gateway's admin
/// API makes them.
pub async fn admin_post(
    State(state): State<AppState>,
    Path(db): Path<String>,
    body: Bytes,
) -> Result<Json<Value>, CouchError> {
    let request: AdminSession = serde_json::from_slice(&body)
        .map_err(|e| CouchError::bad_request(format!("expected {{name, ttl?}}: {e}")))?;
    let client = read::client(&state).await?;
    read::database(&client, &db).await?;
    let stored = user::stored_user(&client, &db, &request.name)
        .await?
        .ok_or_else(|| CouchError::not_found("no such user"))?;
    let ttl = request
        .ttl
        .unwrap_or(SESSION_SECS)
        .clamp(1, 365 * 24 * 3600);
    let expires = chrono::Utc::now().timestamp() + ttl;
    let id = auth::new_session_id();
    let token = SessionClaim::token(
        &state.admin_token,
        &db,
        &request.name,
        &id,
        &stored.password_tag(),
        expires,
    );
    Ok(Json(json!({
        "session_id": token,
        "expires": chrono::DateTime::from_timestamp(expires, 0).map(|t| t.to_rfc3339()),
        "cookie_name": SESSION_COOKIE
    })))
}
