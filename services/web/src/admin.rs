//! The `/v1` admin API over the log: read the log (filtered) and streams (as they were at a
//! time), list streams, verify chains, watch the pipeline (`operations.rs`). Every route needs `Authorization: Bearer <admin token>`;
//! anything else is a 401 that reveals nothing. A query parameter a route does not know is a 400
//! naming it: an auditor's filter is never silently ignored.

use crate::{ApiError, AppState, secret};
use axum::extract::{Path, Query, Request, State};
use axum::http::{StatusCode, Uri, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use palimpsest_events::StreamName;
use palimpsest_log::audit;
use palimpsest_log::query::{EventFilter, parse_time};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// The admin routes, behind the bearer token.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/events", get(read_all))
        .route("/v1/head", get(head))
        .route("/v1/streams", get(list_streams))
        .route("/v1/streams/{context}/{category}/{*key}", get(read_stream))
        .route("/v1/audit/verify", get(verify))
        .route("/v1/operations", get(crate::operations::operations))
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

/// The query of a `/v1` route, refusing what it does not know: the rejection (an unknown or
/// repeated parameter, a value of the wrong kind) is a 400 whose message names the parameter.
pub fn query<T: DeserializeOwned>(uri: &Uri) -> Result<T, ApiError> {
    Query::<T>::try_from_uri(uri)
        .map(|Query(q)| q)
        .map_err(|rejection| ApiError::bad_request(rejection.body_text()))
}

/// `/v1/events`' query: paging and the filters, combined with AND.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Return events after this position.
    #[serde(default)]
    pub after: i64,
    /// At most this many (1-1000, default 100).
    pub limit: Option<i64>,
    /// Only this context's events.
    pub context: Option<String>,
    /// Only this stream's events, as `context/category/key`.
    pub stream: Option<String>,
    /// Only events of this type.
    #[serde(rename = "type")]
    pub event_type: Option<String>,
    /// Only events with this correlation id.
    pub correlation_id: Option<String>,
    /// Only events recorded at or after this time (RFC 3339, or without seconds: UTC).
    pub since: Option<String>,
    /// Only events recorded at or before this time.
    pub until: Option<String>,
}

impl EventsQuery {
    /// The filter asked for, or a 400 naming the parameter that is not what it should be.
    fn filter(&self) -> Result<EventFilter, ApiError> {
        let stream = self
            .stream
            .as_deref()
            .map(StreamName::parse)
            .transpose()
            .map_err(|e| ApiError::bad_request(format!("stream: {e}")))?;
        let correlation_id = self
            .correlation_id
            .as_deref()
            .map(uuid::Uuid::parse_str)
            .transpose()
            .map_err(|e| ApiError::bad_request(format!("correlation_id is not a uuid: {e}")))?;
        Ok(EventFilter {
            context: self.context.clone(),
            stream,
            event_type: self.event_type.clone(),
            correlation_id,
            since: time("since", self.since.as_deref())?,
            until: time("until", self.until.as_deref())?,
        })
    }
}

/// A time parameter, or a 400 naming it.
fn time(name: &str, text: Option<&str>) -> Result<Option<chrono::DateTime<chrono::Utc>>, ApiError> {
    text.map(parse_time)
        .transpose()
        .map_err(|e| ApiError::bad_request(format!("{name}: {e}")))
}

/// The query of a route that takes none.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Nothing {}

/// A stream read's query: paging and the time to read the stream at.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamQuery {
    /// Return events after this version.
    #[serde(default)]
    pub after: i64,
    /// At most this many (1-1000, default 100).
    pub limit: Option<i64>,
    /// The stream as it was at this time: only its events recorded at or before it.
    pub at: Option<String>,
}

/// `/v1/streams`' query: which streams, paged by name.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamsQuery {
    /// Only streams whose `context/category/key` starts with this.
    #[serde(default)]
    pub prefix: String,
    /// Streams after this one (`context/category/key`, the last page's `next_after`).
    pub after: Option<String>,
    /// At most this many (1-1000, default 100).
    pub limit: Option<i64>,
}

fn limit(limit: Option<i64>) -> Result<i64, ApiError> {
    match limit.unwrap_or(100) {
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

/// `GET /v1/events?after&limit&context&stream&type&correlation_id&since&until`:
/// `{"events": [...], "next_after"}`, the matching events after `after`, written as they are
/// read. The first read happens before the answer starts (a failure there is a 5xx); a failure
/// after it is logged and cuts the transfer.
async fn read_all(State(state): State<AppState>, uri: Uri) -> Result<Response, ApiError> {
    let page: EventsQuery = query(&uri)?;
    let filter = page.filter()?;
    let limit = limit(page.limit)?;
    let after = page.after.max(0);
    let first = state
        .store
        .read_matching(&filter, after, limit.min(EVENTS_PER_READ))
        .await?;
    let (sender, receiver) = tokio::sync::mpsc::channel(4);
    let pages = EventPages {
        state,
        filter,
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
    filter: EventFilter,
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
            batch = (self.state.store)
                .read_matching(&self.filter, self.next_after, want)
                .await?;
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

async fn head(State(state): State<AppState>, uri: Uri) -> Result<Json<Value>, ApiError> {
    let Nothing {} = query(&uri)?;
    Ok(Json(
        json!({ "position": state.store.head_position().await?, "log_id": state.store.log_id() }),
    ))
}

/// `GET /v1/streams/{context}/{category}/{key}?after&limit&at`: the stream's events after
/// version `after`; with `at`, only those recorded at or before it (the stream as it was then,
/// the events `palimpsest audit stream --at` folds). A stream with no event by `at` is a 404.
async fn read_stream(
    State(state): State<AppState>,
    Path((context, category, key)): Path<(String, String, String)>,
    uri: Uri,
) -> Result<Json<Value>, ApiError> {
    let page: StreamQuery = query(&uri)?;
    let stream = StreamName::new(context, category, key)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let at = time("at", page.at.as_deref())?;
    let after = page.after.max(0);
    let events = state
        .store
        .read_stream_at(&stream, after, at, limit(page.limit)?)
        .await?;
    if events.is_empty() && state.store.stream_version(&stream).await? == 0 {
        return Err(ApiError::not_found(format!("no stream {stream}")));
    }
    if let (true, 0, Some(at)) = (events.is_empty(), after, at) {
        return Err(ApiError::not_found(format!(
            "stream {stream} has no event at or before {}",
            at.to_rfc3339()
        )));
    }
    if !events.is_empty() {
        state.store.wait_durable().await?;
    }
    let next = events.last().map(|e| e.version).unwrap_or(page.after);
    Ok(Json(
        json!({ "stream": stream, "events": events, "next_after": next }),
    ))
}

/// `GET /v1/streams?prefix&after&limit`: `{"streams": [{stream, version, last_recorded_at}],
/// "next_after"}`, the streams whose name starts with `prefix`, in name order, after the
/// stream `after` (`next_after` is the last one listed, `null` on an empty page).
async fn list_streams(State(state): State<AppState>, uri: Uri) -> Result<Json<Value>, ApiError> {
    let page: StreamsQuery = query(&uri)?;
    let after = page
        .after
        .as_deref()
        .map(StreamName::parse)
        .transpose()
        .map_err(|e| ApiError::bad_request(format!("after: {e}")))?;
    let streams = state
        .store
        .list_streams(&page.prefix, after.as_ref(), limit(page.limit)?)
        .await?;
    if !streams.is_empty() {
        state.store.wait_durable().await?;
    }
    let next = streams.last().map(|s| s.stream.to_string()).or(page.after);
    Ok(Json(json!({ "streams": streams, "next_after": next })))
}

/// Which stream to verify (`context/category/key`); all of them when absent.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerifyQuery {
    /// The stream, as `context/category/key`.
    pub stream: Option<String>,
}

async fn verify(State(state): State<AppState>, uri: Uri) -> Result<Json<Value>, ApiError> {
    let q: VerifyQuery = query(&uri)?;
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
