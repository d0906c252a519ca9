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

/// Events read from the log per query while `/v1/events` writes its page: the most its
/// answer holds at once is this many events (each at most the log's event limit) and a piece
/// of [`EVENTS_PIECE`] bytes, not a page of up to 1,000 events and their JSON tree.
const EVENTS_PER_READ: i64 = 16;

/// Bytes of `/v1/events`' JSON gathered before they are handed to the connection.
const EVENTS_PIECE: usize = 64 * 1024;

/// `GET /v1/events?after&limit`: `{"events": [...], "next_after"}`, written as the events are
/// read. The first read happens before the answer starts (a failure there is a 5xx); a failure
/// after it is logged and cuts the transfer.
async fn read_all(
    State(state): State<AppState>,
    Query(page): Query<Page>,
) -> Result<Response, ApiError> {
    let limit = limit(&page)?;
    let after = page.after.max(0);
    let first = state
        .store
        .read_all(after, limit.min(EVENTS_PER_READ))
        .await?;
    let (sender, receiver) = tokio::sync::mpsc::channel(4);
    let pages = EventPages {
        state,
        limit,
        next_after: page.after,
    };
    tokio::spawn(async move {
        match pages.write(first, &sender).await {
            Ok(()) => {}
            Err(PageError::Gone) => tracing::debug!("/v1/events: the client went away"),
            Err(e) => {
                tracing::error!(error = %e, "/v1/events answer cut: it failed after it started");
                // The client may be gone too; the log line above says what happened.
                let _ = sender.send(Err(std::io::Error::other(e.to_string()))).await;
            }
        }
    });
    let body = futures::stream::unfold(receiver, |mut receiver| async move {
        receiver.recv().await.map(|piece| (piece, receiver))
    });
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        axum::body::Body::from_stream(body),
    )
        .into_response())
}

/// Why a streamed `/v1/events` answer stopped before its end.
#[derive(Debug, thiserror::Error)]
enum PageError {
    #[error("the client went away")]
    Gone,
    #[error(transparent)]
    Log(#[from] palimpsest_log::LogError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
}

/// A `/v1/events` page being written: up to `limit` events, the log read a few at a time.
struct EventPages {
    state: AppState,
    limit: i64,
    /// The position of the last event written (`after` as given until one is).
    next_after: i64,
}

type Piece = Result<axum::body::Bytes, std::io::Error>;

impl EventPages {
    /// Writes the page, starting with the events already read, as `Json(json!({...}))`
    /// wrote it (keys in order, each event as its JSON value).
    async fn write(
        mut self,
        mut batch: Vec<palimpsest_events::RecordedEvent>,
        sender: &tokio::sync::mpsc::Sender<Piece>,
    ) -> Result<(), PageError> {
        let mut out = String::from("{\"events\":[");
        let mut sent = 0i64;
        loop {
            let full = batch.len() as i64 == EVENTS_PER_READ;
            for event in &batch {
                if sent > 0 {
                    out.push(',');
                }
                out.push_str(&serde_json::to_value(event)?.to_string());
                sent += 1;
                self.next_after = event.position;
                if out.len() >= EVENTS_PIECE {
                    hand_over(sender, &mut out).await?;
                }
            }
            if !full || sent >= self.limit {
                break;
            }
            let want = (self.limit - sent).min(EVENTS_PER_READ);
            batch = self.state.store.read_all(self.next_after, want).await?;
        }
        out.push_str(&format!("],\"next_after\":{}}}", self.next_after));
        hand_over(sender, &mut out).await
    }
}

/// Sends the gathered text to the connection.
async fn hand_over(
    sender: &tokio::sync::mpsc::Sender<Piece>,
    out: &mut String,
) -> Result<(), PageError> {
    let piece = axum::body::Bytes::from(std::mem::take(out));
    sender.send(Ok(piece)).await.map_err(|_| PageError::Gone)
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
