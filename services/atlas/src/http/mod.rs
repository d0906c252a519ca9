//! The atlas HTTP API: the History Map's routes (served under `/atlas`), answering rows with
//! the spec's column names and errors as `{"error": message}`.
//!
//! Who may call what ([`crate::user::Caller`], taken from the headers in [`auth`]): the published map's reads are public (as the map viewer is);
//! the section workflow needs a user's bearer token (editor: create, lock, commit, restore,
//! submit; reviewer: approve, reject; any user: its reads) or the admin token, and acts as the
//! caller; `/admin/users` is the administrator's.

pub mod auth;
mod body;
mod entities;
mod error;
mod geometries;
pub mod openapi;
mod params;
mod sections;
mod submissions;
mod users;

use axum::Router;
use axum::routing::{get, post, put};
use palimpsest_web::{AppState, limits};

/// The context's routes, without prefix.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/entities", get(entities::list))
        .route("/entities/search", get(entities::search))
        .route("/entities/{id}", get(entities::get_one))
        .route("/entities/{id}/history", get(entities::history))
        .route("/geometries", get(geometries::map))
        .route("/geometries/{id}/history", get(geometries::history))
        .route("/sections", post(sections::create).get(sections::list))
        .route("/sections/{id}", get(sections::get_one))
        .route(
            "/sections/{id}/editor",
            // The editor takes the lock when given a user: HEAD must not run it.
            get(sections::editor).head(|| async { limits::method_not_allowed("GET") }),
        )
        .route("/sections/{id}/lock", post(sections::lock))
        .route("/sections/{id}/unlock", post(sections::unlock))
        .route(
            "/sections/{id}/commits",
            post(sections::commit).get(sections::commits),
        )
        .route("/sections/{id}/restore", post(sections::restore))
        .route("/sections/{id}/submit", post(sections::submit))
        .route("/sections/{id}/submissions", get(sections::submissions))
        .route("/submissions/{id}/approve", post(submissions::approve))
        .route("/submissions/{id}/reject", post(submissions::reject))
        .route("/admin/users", get(users::list))
        .route(
            "/admin/users/{user_id}",
            put(users::issue).delete(users::revoke),
        )
        .route("/openapi.json", get(openapi::document))
        .layer(axum::middleware::from_fn(body::json_only))
        .layer(axum::middleware::from_fn(limits::refuse_nul))
        .with_state(state)
}
