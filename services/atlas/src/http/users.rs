//! `/admin/users` (the administrator): issue, list and revoke the users who may call the
//! section workflow, through the command runner.
//!
//! An issue answers the new token once: the reply kept for its Idempotency-Key (stored in the
//! log's database) holds no token, and the token is added to the live answer only when the
//! read model shows it is the user's current one. A retry with the same key therefore answers
//! the user without a token (reissue to get a new one).

use crate::http::auth::{Caller, token_sha256};
use crate::http::body::Body;
use crate::http::command::{command, now, rejected};
use crate::http::load::{encode, stream_of};
use crate::projection::NAME;
use crate::streams;
use crate::user::{UserCommand, UserState, decide, evolve};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use palimpsest_web::command::{CommandRequest, Decision, Reply};
use palimpsest_web::{ApiError, AppState};
use serde_json::{Value, json};

/// A user as the admin routes answer it (never its token hash).
fn user_row(user: &UserState) -> Value {
    json!({
        "user_id": user.user_id,
        "roles": user.roles,
        "active": user.active(),
        "issued_at": user.issued_at,
        "revoked_at": user.revoked_at,
    })
}

/// A fresh random 256-bit token, as 64 hex digits.
fn new_token() -> String {
    use rand::Rng;
    let bytes: [u8; 32] = rand::rng().random();
    hex::encode(bytes)
}

/// The role names of an issue's body: `roles`, an array of strings.
fn roles_of(body: &Body) -> Result<Vec<String>, ApiError> {
    let invalid = || ApiError::bad_request("roles must be an array of role names");
    match body.value("roles") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| item.as_str().map(str::to_owned).ok_or_else(invalid))
            .collect(),
        Some(_) => Err(invalid()),
        None => Err(ApiError::bad_request("roles is required")),
    }
}

/// `PUT /admin/users/:user_id` `{roles}` (administrator): issues the user a new token (201 for a
/// new user, 200 for a reissue, which replaces the old token) → `{user_id, roles, active,
/// issued_at, revoked_at, token}`.
#[tracing::instrument(skip_all, fields(user_id = %user_id))]
pub async fn issue(
    caller: Caller,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    caller.require_admin("issuing an atlas user")?;
    let roles = roles_of(&Body::parse(&body)?)?;
    let token = new_token();
    let hash = token_sha256(&token);
    let stream = &stream_of(streams::user, &user_id)?;
    let (user_id, roles, hash) = (&user_id, &roles, &hash);
    let reply = state
        .commands
        .run(
            command(&request, Some(caller.actor())),
            |attempt| async move {
                let user: UserState = attempt.load(stream).await?;
                let status = match user.user_id {
                    Some(_) => StatusCode::OK,
                    None => StatusCode::CREATED,
                };
                let issue = UserCommand::Issue {
                    user_id: user_id.clone(),
                    roles: roles.clone(),
                    token_sha256: hash.clone(),
                    now: now(),
                };
                let events = decide(issue, &user).map_err(rejected)?;
                let after = events.iter().fold(user, evolve);
                let reply = Reply::json(status, &user_row(&after));
                Ok(Decision::new(reply).write(stream.clone(), encode(&events).map_err(rejected)?))
            },
        )
        .await?;
    with_token_once(&state, user_id, hash, &token, reply).await
}

/// Adds `token` to the issue's answer when it is the user's current token: not on a replay of
/// the Idempotency-Key, whose stored answer was another request's.
async fn with_token_once(
    state: &AppState,
    user_id: &str,
    hash: &str,
    token: &str,
    reply: Reply,
) -> Result<Reply, ApiError> {
    if !reply.status.is_success() {
        return Ok(reply);
    }
    let client = state.read.get().await?;
    let current: Option<String> = client
        .query_opt(
            &format!("SELECT token_sha256 FROM {NAME}.users WHERE user_id = $1"),
            &[&user_id],
        )
        .await
        .map_err(ApiError::internal)?
        .and_then(|row| row.get(0));
    if current.as_deref() != Some(hash) {
        return Ok(reply);
    }
    let mut body: Value = reply.json_body().map_err(ApiError::internal)?;
    body["token"] = Value::String(token.to_owned());
    Ok(Reply::json(reply.status, &body))
}

/// `DELETE /admin/users/:user_id` (administrator): revokes the user's token → 200 the user; its
/// token stops working before this answer (404 for a user never issued).
#[tracing::instrument(skip_all, fields(user_id = %user_id))]
pub async fn revoke(
    caller: Caller,
    State(state): State<AppState>,
    Path(user_id): Path<String>,
    request: CommandRequest,
) -> Result<Reply, ApiError> {
    caller.require_admin("revoking an atlas user")?;
    let stream = &stream_of(streams::user, &user_id)?;
    let reply = state
        .commands
        .run(
            command(&request, Some(caller.actor())),
            |attempt| async move {
                let user: UserState = attempt.load(stream).await?;
                let events = decide(UserCommand::Revoke { now: now() }, &user).map_err(rejected)?;
                let after = events.iter().fold(user, evolve);
                let reply = Reply::json(StatusCode::OK, &user_row(&after));
                Ok(Decision::new(reply).write(stream.clone(), encode(&events).map_err(rejected)?))
            },
        )
        .await?;
    Ok(reply)
}

/// `GET /admin/users` (administrator): every user with its roles and whether it is active.
pub async fn list(
    caller: Caller,
    State(state): State<AppState>,
) -> Result<Json<Vec<Value>>, ApiError> {
    caller.require_admin("listing atlas users")?;
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
    Ok(Json(
        rows.iter()
            .map(|row| {
                json!({
                    "user_id": row.get::<_, String>(0),
                    "roles": row.get::<_, Vec<String>>(1),
                    "active": row.get::<_, bool>(2),
                    "issued_at": row.get::<_, String>(3),
                    "revoked_at": row.get::<_, Option<String>>(4),
                })
            })
            .collect(),
    ))
}
