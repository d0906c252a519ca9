//! The CouchDB replication API under `/docs`: what PouchDB and other replicators use, answered
//! as CouchDB answers (`{"error", "reason"}` errors, `_id`/`_rev` first, no `_sync`).

mod admin;
mod all_docs;
mod attachment;
mod bulk;
mod bulk_get;
mod changes;
mod doc;
pub mod error;
mod local;
mod maintenance;
mod multipart;
mod open_revs;
pub mod openapi;
pub(crate) mod params;
mod principals;
mod range;
pub(crate) mod render;
mod server;
mod session;
mod streaming;
pub(crate) mod view;

use crate::access::{self, gate, scope};
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post, put};
use palimpsest_web::AppState;
use std::sync::Arc;

/// `/{db}` (with or without the trailing slash PouchDB sends).
fn database() -> axum::routing::MethodRouter<AppState> {
    put(server::create)
        .get(server::info)
        .delete(server::delete)
        .post(doc::post)
}

/// Sync Gateway's admin API: the administrator's only (the admin token as a bearer token or
/// as Basic credentials under the admin name), checked before any body is read.
fn admin_routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/_admin/{db}", put(admin::create))
        .route("/_admin/{db}/", put(admin::create))
        .route("/_admin/{db}/_user/", get(principals::list_users))
        .route(
            "/_admin/{db}/_user/{name}",
            get(principals::get_user)
                .put(principals::put_user)
                .delete(principals::delete_user),
        )
        .route("/_admin/{db}/_role/", get(principals::list_roles))
        .route(
            "/_admin/{db}/_role/{name}",
            get(principals::get_role)
                .put(principals::put_role)
                .delete(principals::delete_role),
        )
        .route("/_admin/{db}/_compact", post(admin::compact))
        .route("/_admin/{db}/_purge", post(maintenance::purge))
        .route("/_admin/{db}/_resync", post(maintenance::resync))
        .route("/_admin/{db}/_session", post(session::admin_post))
        .route("/_admin/{db}/_raw/{*doc}", get(admin::raw))
        .route("/_admin/{db}/_revtree/{*doc}", get(admin::revtree))
        .route(
            "/_admin/{db}/_config/sync",
            get(admin::get_sync)
                .put(admin::put_sync)
                .delete(admin::delete_sync),
        )
        .route_layer(axum::middleware::from_fn_with_state(
            state,
            gate::require_admin,
        ))
}

/// The context's routes, without prefix, configured by default.
pub fn router(state: AppState) -> Router {
    router_with(state, crate::settings::Settings::default())
}

/// The context's routes, without prefix, configured by `settings`. Every request runs in its
/// scope ([`crate::access::scope`]); the database routes identify their caller from the headers before the
/// handler reads a body ([`crate::access::gate`]).
pub fn router_with(state: AppState, settings: crate::settings::Settings) -> Router {
    let attachments = Arc::new(settings.attachment_store(&state.data_dir));
    let access = Arc::new(access::Access::new(&state, settings));
    Router::new()
        .merge(admin_routes(state.clone()))
        .merge(database_routes(state.clone()))
        .route("/", get(server::welcome))
        .route("/openapi.json", get(openapi::document))
        .route("/_all_dbs", get(server::all_dbs))
        .route(
            "/{db}/_session",
            get(session::get)
                .post(session::post)
                .delete(session::delete),
        )
        // The platform's guard bounds every body by its route's class (the upload class for
        // documents, `_bulk_docs` and attachments); axum's own 2 MiB default would cut those
        // short.
        .layer(DefaultBodyLimit::disable())
        .layer(axum::middleware::from_fn(move |request, next| {
            scope::enter(access.clone(), attachments.clone(), request, next)
        }))
        .with_state(state)
}

/// The routes of a database (sessions aside: a login's credential is its body).
fn database_routes(state: AppState) -> Router<AppState> {
    Router::new()
        .route("/{db}", database())
        .route("/{db}/", database())
        .route("/{db}/_bulk_docs", post(bulk::bulk_docs))
        .route("/{db}/_bulk_get", post(bulk_get::bulk_get))
        .route("/{db}/_revs_diff", post(bulk::revs_diff))
        .route("/{db}/_compact", post(server::compact))
        .route("/{db}/_all_docs", get(all_docs::get).post(all_docs::post))
        .route("/{db}/_changes", get(changes::get).post(changes::post))
        .route(
            "/{db}/_ensure_full_commit",
            post(server::ensure_full_commit),
        )
        .route(
            "/{db}/_local/{*id}",
            get(local::get).put(local::put).delete(local::delete),
        )
        .route(
            "/{db}/{doc}",
            get(doc::get).put(doc::put).delete(doc::delete),
        )
        .route(
            "/{db}/_design/{ddoc}",
            get(doc::get_design)
                .put(doc::put_design)
                .delete(doc::delete_design),
        )
        .route(
            "/{db}/_design/{ddoc}/_view/{view}",
            get(view::get).post(view::post),
        )
        .route(
            "/{db}/{doc}/{*name}",
            get(attachment::get)
                .put(attachment::put)
                .delete(attachment::delete),
        )
        .route_layer(axum::middleware::from_fn_with_state(
            state,
            gate::authenticate,
        ))
}
