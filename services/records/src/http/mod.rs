//! The records HTTP API, served under `/records`: the generic API `POST /api/<function>`, the
//! change feed, the OpenAPI document. Routes, argument extraction and answers only: the
//! commands live in their aggregates (`class/`, `document/`, `ftp/`, `task/`, `token/`), the
//! queries on the row tables in `read/`, the bulk work in `purge`, `rotation`, `transfer/`, the
//! background jobs in `tasks` and `retention`.

pub mod admin;
pub mod api;
pub mod body;
pub mod feed;
pub mod ftp;
pub mod history;
pub mod listing;
pub mod openapi;
pub mod purges;
pub mod reads;
pub mod stream;
pub mod tasks;
pub mod transfer;
pub mod writes;

use crate::class::command::declare_schema;
use crate::coded_error::CodedError;
use crate::context::Records;
use crate::seal::SiteKey;
use crate::settings::Settings;
use crate::{retention, tasks as runner};
use axum::Router;
use axum::routing::{any, get, post};
use palimpsest_web::AppState;
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
        None => SiteKey::load(
            &state.data_dir,
            settings.site_key_hex.as_deref(),
            &settings.old_keys,
        ),
    };
    let key = match loaded {
        Ok(key) => key,
        Err(e) => {
            tracing::error!(error = %e, "records: no site key; every call answers 503");
            return Router::new().fallback(any(|| async {
                CodedError::unavailable("the records site key could not be loaded")
            }));
        }
    };
    let records = Records::new(state, key, settings);
    declare_schema(&records);
    runner::spawn_runner(&records, &records.settings.clone());
    retention::spawn(&records);
    Router::new()
        .route("/api/{function}", post(api::call))
        .route("/feed", get(feed::feed))
        .route("/history/{org}/{clazz}/{pk}", get(history::document_at))
        .route("/openapi.json", get(openapi::document))
        .with_state(Arc::new(records))
}
