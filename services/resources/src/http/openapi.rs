//! The OpenAPI 3.1 description of the routes, served at `/resources/openapi.json`.

use axum::Json;
use serde_json::{Value, json};

/// `GET /resources/openapi.json`.
pub async fn document() -> Json<Value> {
    Json(json!({"openapi": "3.1.0", "info": {"title": "Palimpsest resources (MindTouch Deki)", "version": "1"}, "paths": {}}))
}
