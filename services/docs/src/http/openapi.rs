//! `GET /docs/openapi.json`: the OpenAPI 3 description of what this context serves.

use axum::Json;
use serde_json::Value;

/// The document, built once from `openapi.json` beside this file.
pub async fn document() -> Json<Value> {
    Json(serde_json::from_str(include_str!("openapi.json")).unwrap_or(Value::Null))
}
