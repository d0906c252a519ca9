//! The records HTTP API, served under `/records`: the generic API `POST /api/<function>`, the
//! OpenAPI document.

pub mod admin;
pub mod api;
pub mod auth;
pub mod body;
pub mod chunks;
pub mod classes;
pub mod context;
pub mod failure;
pub mod feed;
pub mod ftp;
pub mod listing;
pub mod openapi;
pub mod page;
pub mod purges;
pub mod reads;
pub mod retention;
pub mod rotate;
pub mod run;
pub mod stream;
pub mod tasks;
pub mod transfer;
pub mod writes;

use crate::seal::SiteKey;
use auth::Caller;
use axum::Router;
use axum::routing::{any, get, post};
use context::{Records, Settings};
use failure::Failure;
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use std::sync::Arc;
/// The context's routes, without prefix, with the default settings.
pub fn router(state: AppState) -> Router {
    router_with(state, Settings::default())
}

/// The context's routes with explicit settings: the binary gives the schema file's classes
/// (`--records-schema`), tests their clock, DELTA and task handlers.
pub fn router_with(state: AppState, settings: Settings) -> Router {
    let loaded = match settings.site_key.clone() {
        Some(key) => Ok(key),
        None => SiteKey::load(&state.data_dir, &settings.old_keys),
    };
    let key = match loaded {
        Ok(key) => key,
        Err(e) => {
            tracing::error!(error = %e, "records: no site key; every call answers 503");
            return Router::new().fallback(any(|| async {
                Failure::unavailable("the records site key could not be loaded")
            }));
        }
    };
    let records = Records::new(state, key, settings);
    declare_schema(&records);
    tasks::spawn_runner(&records, &records.settings.clone());
    retention::spawn(&records);
    Router::new()
        .route("/api/{function}", post(api::call))
        .route("/feed", get(feed::feed))
        .route("/openapi.json", get(openapi::document))
        .with_state(Arc::new(records))
}

/// Records the schema file's classes in the background (a write also records one on first use).
fn declare_schema(records: &Records) {
    if records.settings.schema.is_empty() {
        return;
    }
    let records = records.clone();
    let background = records.app.background.clone();
    background.spawn("records schema", move |_| async move {
        for class in records.settings.schema.clone() {
            let clazz = class.clazz.clone();
            let request = CommandRequest::none();
            if let Err(e) = admin::declare(&records, &request, &Caller::Admin, class).await {
                tracing::error!(
                    clazz,
                    code = e.code,
                    message = e.message,
                    "records: schema class not declared"
                );
            }
        }
    });
}
