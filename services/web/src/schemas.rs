//! `/v1/schemas` and `/v1/asyncapi.json`: the machine-readable contract of the events, public
//! like the events' description in `events/README.md`. Generated once per process from the
//! payload types (`palimpsest_events::schema`), so what is served is what the code writes and
//! reads; the files kept in `events/schemas/` are the same bytes (a test keeps them so).

use crate::ApiError;
use axum::extract::Path;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use palimpsest_events::{asyncapi, schema};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock};

/// Every schema file by its path under `/v1/schemas/` (`index.json` included).
static CATALOGUE: LazyLock<BTreeMap<String, Value>> = LazyLock::new(schema::catalogue);
/// The public routes of the contract; the AsyncAPI document served names `prefix`, the
/// deployment's subject prefix, as every channel's default.
pub fn router(prefix: &str) -> Router {
    let document = Arc::new(with_prefix(asyncapi::document(), prefix));
    Router::new()
        .route("/v1/schemas", get(index))
        .route("/v1/schemas/", get(index))
        .route("/v1/schemas/{*path}", get(file))
        .route(
            "/v1/asyncapi.json",
            get(move || async move { Json(&*document).into_response() }),
        )
}

/// `document` with `prefix` as the default of every channel's `prefix` parameter (the kept
/// `events/asyncapi.yaml` says `palimpsest`, the default).
fn with_prefix(mut document: Value, prefix: &str) -> Value {
    if let Some(channels) = document["channels"].as_object_mut() {
        for channel in channels.values_mut() {
            if let Some(parameter) = channel.pointer_mut("/parameters/prefix") {
                parameter["default"] = Value::String(prefix.to_owned());
            }
        }
    }
    document
}

/// The index: one entry per event type and schema version, with its file's path.
async fn index() -> Response {
    schema_response(&CATALOGUE[schema::INDEX_PATH], "application/json")
}

/// One schema file, e.g. `pads/RevisionAppended.v1.json`; 404 naming it when there is none.
async fn file(Path(path): Path<String>) -> Result<Response, ApiError> {
    match CATALOGUE.get(&path) {
        Some(value) if path == schema::INDEX_PATH => Ok(schema_response(value, "application/json")),
        Some(value) => Ok(schema_response(value, "application/schema+json")),
        None => Err(ApiError::not_found(format!(
            "no schema {path}: GET /v1/schemas lists them"
        ))),
    }
}

fn schema_response(value: &Value, content_type: &'static str) -> Response {
    (
        [(CONTENT_TYPE, content_type), (CACHE_CONTROL, "no-cache")],
        schema::file_text(value),
    )
        .into_response()
}
