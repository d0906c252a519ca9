//! The `/v1` admin API over the log: read the log and streams, verify chains. Every route needs
//! `Authorization: Bearer <admin token>`; anything else is a 401 that reveals nothing.

use crate::{ApiError, AppState, secret};
use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use palimpsest_events::StreamName;
use palimpsest_log::audit;
use serde::Deserialize;
use serde_json::{Value, json};

/// The admin routes, behind the bearer token.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/events", get(read_all))
        .route("/v1/head", get(head))
        .route("/v1/streams/{context}/{category}/{*key}", get(read_stream))
        .route("/v1/audit/verify", get(verify))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token))
        .with_state(state)
}

/// Refuses requests without the admin bearer token.
pub async fn require_token(
    State(state): State<AppState>,
    request: Request,
    next: Next,
) -> Response {
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    match given {
        Some(token) if secret::equal(token.trim(), &state.admin_token) => next.run(request).await,
        _ => (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            Json(json!({ "error": "a valid admin bearer token is required" })),
        )
            .into_response(),
    }
}

/// Paging through the log or a stream.
#[derive(Debug, Deserialize)]
pub struct Page {
    /// Return events after this position (log) or version (stream).
    #[serde(default)]
    pub after: i64,
    /// At most this many (1-1000, default 100).
    pub limit: Option<i64>,
}

fn limit(page: &Page) -> Result<i64, ApiError> {
    match page.limit.unwrap_or(100) {
        l @ 1..=1000 => Ok(l),
        _ => Err(ApiError::bad_request("limit must be between 1 and 1000")),
    }
}

async fn read_all(
    State(state): State<AppState>,
    Query(page): Query<Page>,
) -> Result<Json<Value>, ApiError> {
    let events = state
        .store
        .read_all(page.after.max(0), limit(&page)?)
        .await?;
    let next = events.last().map(|e| e.position).unwrap_or(page.after);
    Ok(Json(json!({ "events": events, "next_after": next })))
}

async fn head(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    Ok(Json(
        json!({ "position": state.store.head_position().await?, "log_id": state.store.log_id() }),
    ))
}

async fn read_stream(
    State(state): State<AppState>,
    Path((context, category, key)): Path<(String, String, String)>,
    Query(page): Query<Page>,
) -> Result<Json<Value>, ApiError> {
    let stream = StreamName::new(context, category, key)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let events = state
        .store
        .read_stream(&stream, page.after.max(0), limit(&page)?)
        .await?;
    if events.is_empty() && state.store.stream_version(&stream).await? == 0 {
        return Err(ApiError::not_found(format!("no stream {stream}")));
    }
    if !events.is_empty() {
        state.store.wait_durable().await?;
    }
    let next = events.last().map(|e| e.version).unwrap_or(page.after);
    Ok(Json(
        json!({ "stream": stream, "events": events, "next_after": next }),
    ))
}

/// Which stream to verify (`context/category/key`); all of them when absent.
#[derive(Debug, Deserialize)]
pub struct VerifyQuery {
    /// The stream, as `context/category/key`.
    pub stream: Option<String>,
}

async fn verify(
    State(state): State<AppState>,
    Query(q): Query<VerifyQuery>,
) -> Result<Json<Value>, ApiError> {
    let stream = q
        .stream
        .as_deref()
        .map(StreamName::parse)
        .transpose()
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let report = audit::verify(state.store.pool(), stream.as_ref()).await?;
    Ok(Json(
        json!({ "ok": report.broken.is_none(), "report": report }),
    ))
}
