//! Path and query parameters as plain strings, so that every malformed request is answered by
//! this context's own JSON 400 (axum's own rejections are plain text).

use axum::extract::{FromRequestParts, Path, Query};
use axum::http::request::Parts;
use palimpsest_web::ApiError;
use std::collections::HashMap;

/// The path's parameters by name.
pub struct PathParams(pub HashMap<String, String>);

/// The query's parameters by name (the last of repeated ones).
pub struct QueryParams(pub HashMap<String, String>);

impl<S: Send + Sync> FromRequestParts<S> for PathParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Path::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Path(map)| PathParams(map))
            .map_err(|e| ApiError::bad_request(format!("path: {}", e.body_text())))
    }
}

impl<S: Send + Sync> FromRequestParts<S> for QueryParams {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Query::<HashMap<String, String>>::from_request_parts(parts, state)
            .await
            .map(|Query(map)| QueryParams(map))
            .map_err(|e| ApiError::bad_request(format!("query: {}", e.body_text())))
    }
}
