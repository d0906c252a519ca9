//! `GET /v1/state/{context}/{category}/{key}?version=&at=`: a stream's state as of a version or
//! a time, folded by its own context as the write side folds it (what `audit stream --at`
//! prints), so the console can show each context in its own terms at any point of its history.
//! Admin only, like every `/v1` read of the log. Here, in the binary, because only the binary
//! knows every context's folder (`contexts::state_at`).

use crate::contexts;
use axum::extract::{Path, State};
use axum::http::Uri;
use axum::routing::get;
use axum::{Json, Router, middleware};
use palimpsest_events::{RecordedEvent, StreamName};
use palimpsest_log::query::parse_time;
use palimpsest_web::{ApiError, AppState, admin};
use serde::Deserialize;
use serde_json::{Value, json};

/// The most events folded for one answer: a longer stream is read with `audit stream`.
pub const MAX_FOLDED: usize = 100_000;

/// The route, behind the admin token.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/state/{context}/{category}/{*key}", get(state_of))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            admin::require_token,
        ))
        .with_state(state)
}

/// Up to which point the stream is folded: its first `version` events, and only those recorded
/// at or before `at`; both when both are given, the whole stream when neither is.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct StateQuery {
    version: Option<i64>,
    at: Option<String>,
}

async fn state_of(
    State(state): State<AppState>,
    Path((context, category, key)): Path<(String, String, String)>,
    uri: Uri,
) -> Result<Json<Value>, ApiError> {
    let asked: StateQuery = admin::query(&uri)?;
    let stream = StreamName::new(context, category, key)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let at = asked
        .at
        .as_deref()
        .map(parse_time)
        .transpose()
        .map_err(|e| ApiError::bad_request(format!("at: {e}")))?;
    let until = asked.version.unwrap_or(i64::MAX);
    if until < 1 {
        return Err(ApiError::bad_request("version must be 1 or more"));
    }
    let events = events_until(&state, &stream, until, at).await?;
    let Some(last) = events.last() else {
        return Err(ApiError::not_found(format!(
            "stream {stream} has no event at that point"
        )));
    };
    state.store.wait_durable().await?;
    Ok(Json(json!({
        "stream": stream.to_string(),
        "version": last.version,
        "recorded_at": last.recorded_at,
        "state": contexts::state_at(&stream, &events),
    })))
}

/// The stream's events up to version `until`, recorded at or before `at`.
async fn events_until(
    state: &AppState,
    stream: &StreamName,
    until: i64,
    at: Option<chrono::DateTime<chrono::Utc>>,
) -> Result<Vec<RecordedEvent>, ApiError> {
    let mut events: Vec<RecordedEvent> = Vec::new();
    loop {
        let after = events.last().map_or(0, |e| e.version);
        let want = (until - after).clamp(0, 1000);
        if want == 0 {
            return Ok(events);
        }
        let page = state.store.read_stream_at(stream, after, at, want).await?;
        if page.is_empty() {
            return Ok(events);
        }
        events.extend(page);
        if events.len() > MAX_FOLDED {
            return Err(ApiError::bad_request(format!(
                "stream {stream} has more than {MAX_FOLDED} events to fold: read it with \
                 `palimpsest audit stream`"
            )));
        }
    }
}
