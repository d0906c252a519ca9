//! `/admin/users` (the administrator): issue, list and revoke the users who may call the
//! section workflow, through the command runner.
//!
//! An issue answers the new token once: the reply kept for its Idempotency-Key (stored in the
//! log's database) holds no token, and the token is added only to the answer of the call that
//! decided the issue. A retry with the same key therefore answers the user without a token
//! (reissue to get a new one).

use crate::http::body::Body;
use crate::read::users as read;
use crate::user::command::run;
use crate::user::{Caller, UserCommand, UserState, new_token, token_sha256};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use palimpsest_web::command::{Answer, CommandRequest, Reply};
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
    let answer = run(
        &state,
        &request,
        &user_id,
        &caller,
        |now| UserCommand::Issue {
            user_id: user_id.clone(),
            roles: roles.clone(),
            token_sha256: hash.clone(),
            now,
        },
        |before, after| {
            let status = match before.user_id {
                Some(_) => StatusCode::OK,
                None => StatusCode::CREATED,
            };
            Ok(Reply::json(status, &user_row(after)))
        },
    )
    .await?;
    match answer {
        Answer::Decided { value: reply, .. } => with_token(reply, &token),
        Answer::Repeated(kept) => Ok(kept),
    }
}

/// The issue's answer with its new `token`: only the call that decided the issue has it (the
/// reply kept under the Idempotency-Key never holds it).
fn with_token(reply: Reply, token: &str) -> Result<Reply, ApiError> {
    if !reply.status.is_success() {
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
    run(
        &state,
        &request,
        &user_id,
        &caller,
        |now| UserCommand::Revoke { now },
        |_, after| Ok(Reply::json(StatusCode::OK, &user_row(after))),
    )
    .await
    .map(|answer| match answer {
        Answer::Decided { value: reply, .. } | Answer::Repeated(reply) => reply,
    })
}

/// `GET /admin/users` (administrator): every user with its roles and whether it is active.
pub async fn list(
    caller: Caller,
    State(state): State<AppState>,
) -> Result<Json<Vec<Value>>, ApiError> {
    caller.require_admin("listing atlas users")?;
    Ok(Json(read::list(&state).await?))
}
