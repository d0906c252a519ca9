//! Credentials are checked from the headers, before a handler reads the body: a wrong or
//! missing credential is refused at once instead of after an upload (the request's slot is
//! not held for the body's 30 s). The caller identified here is the one the handler uses
//! ([`crate::access::scope`]).

use crate::access::auth;
use crate::access::scope;
use crate::http::error::CouchError;
use crate::read;
use axum::extract::{Path, Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use palimpsest_web::AppState;
use std::collections::HashMap;

/// Middleware of the database routes: identifies the caller of an existing database from the
/// headers (401 for a wrong credential, or none where the guest is disabled; 429 while a
/// throttled login must wait). A database that does not exist is left to the handler (its
/// 404, or the administrator's `PUT`).
pub async fn authenticate(
    State(state): State<AppState>,
    Path(params): Path<HashMap<String, String>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(db) = params.get("db") else {
        return next.run(request).await;
    };
    let headers = request.headers().clone();
    match identify(&state, db, &headers).await {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

async fn identify(
    state: &AppState,
    db: &str,
    headers: &axum::http::HeaderMap,
) -> Result<(), CouchError> {
    // The administrator is the same caller in every database, existing or not: no query.
    if auth::known_administrator(state, db, headers)?.is_some() {
        return Ok(());
    }
    let client = read::client(state).await?;
    if read::database(&client, db).await.is_err() {
        return Ok(());
    }
    auth::caller(state, &client, db, headers).await.map(|_| ())
}

/// Middleware of Sync Gateway's admin API: only the administrator (the admin token as a bearer
/// token, or as Basic credentials under the admin name), before any body is read.
pub async fn require_admin(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    match auth::administrator(&state, request.headers()) {
        Ok(_) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

/// The administrator, for a route only it may call (`db`: the database the route names, if
/// any): the admin credential passes; a user authenticated in an existing `db` is a 403;
/// anyone else (the guest, a credential that is wrong or cannot be checked outside a
/// database) a 401.
pub async fn administrator_of(
    state: &AppState,
    db: Option<&str>,
    headers: &axum::http::HeaderMap,
) -> Result<auth::Caller, CouchError> {
    let admin_name = scope::access()?.admin_name.clone();
    let claims_admin = match auth::credentials(headers) {
        auth::Credentials::Bearer(_) => true,
        auth::Credentials::Basic { name, .. } => name == admin_name,
        _ => false,
    };
    let Some(db) = db.filter(|_| !claims_admin) else {
        return auth::administrator(state, headers);
    };
    let client = read::client(state).await?;
    if read::database(&client, db).await.is_err() {
        return auth::administrator(state, headers);
    }
    match auth::caller(state, &client, db, headers).await?.name {
        Some(_) => Err(auth::admin_required()),
        None => Err(auth::unauthorized("Authentication required.")),
    }
}

/// Design documents are the administrator's: Sync Gateway refuses them to users and the guest
/// (403), whatever their channels.
pub fn check_design_writes<'a>(ids: impl IntoIterator<Item = &'a str>) -> Result<(), CouchError> {
    let design = ids.into_iter().any(|id| id.starts_with("_design/"));
    if design && !scope::is_administrator() {
        return Err(CouchError::new(
            axum::http::StatusCode::FORBIDDEN,
            "forbidden",
            "only the administrator may write design documents",
        ));
    }
    Ok(())
}
