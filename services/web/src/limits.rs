//! The platform's HTTP limits, one set for every context: how large a body may be (per route
//! class), how long its body may take to arrive, how long a request may run, how many run at
//! once; and JSON error bodies for everything the framework answers by itself.
//!
//! A slow or hostile client must not hold the server: the header read timeout lives in the
//! connection (`server.rs` of the binary sets it on hyper); everything else is [`guard`], one
//! middleware applied after routing, so it knows the matched route:
//!
//! 1. a body whose declared `Content-Length` is over its route class's limit is refused with 413
//!    before a byte of it is read;
//! 2. otherwise the body is wrapped so that reading past the limit, or past the body deadline,
//!    fails the read; whatever the handler then answered, the client gets 413 or 408;
//! 3. the request waits for one of `max_concurrent` permits and runs under `request_timeout`
//!    (503 when it expires, waiting included). A request that presents no credential
//!    ([`crate::credentials`]) first waits for one of the `max_anonymous` permits, a share of the
//!    same slots: anonymous clients holding unfinished bodies fill their share and no more, and
//!    requests with a credential keep flowing. The probes ([`PROBE_ROUTES`]) read no body and
//!    take a general slot only, so an orchestrator's health checks are not queued behind them.
//!
//! [`json_errors`] turns every error answer that is not JSON (axum's extractor rejections are
//! plain text, its 405 is empty) into `{"error": message}` with the same status and headers.

use crate::ApiError;
use crate::credentials;
use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use std::collections::HashSet;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Sleep;

/// The limits every HTTP request is held to (the README's configuration table lists their flags).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpLimits {
    /// Largest request body of an ordinary route, in bytes.
    pub body_limit: u64,
    /// Largest request body of an upload route (one a context opted into the upload class).
    pub upload_limit: u64,
    /// How long a client may take to send a request's headers (set on the connection).
    pub header_timeout: Duration,
    /// How long a client may take to send a request's body, from the end of its headers.
    pub body_timeout: Duration,
    /// How long a request may take from the end of its headers to its answer.
    pub request_timeout: Duration,
    /// How many requests run at once; the next ones wait (within `request_timeout`).
    pub max_concurrent: usize,
    /// How many of those may be requests presenting no credential (capped at `max_concurrent`).
    pub max_anonymous: usize,
    /// Matched route paths (`/resources/files/{id}`) that take the upload class.
    pub upload_routes: HashSet<String>,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            body_limit: 2 * 1024 * 1024,
            upload_limit: 1024 * 1024 * 1024,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(60),
            max_concurrent: 1024,
            max_anonymous: 64,
            upload_routes: HashSet::new(),
        }
    }
}

/// Routes that read no body and answer from memory: they take a general slot only, never one
/// of the anonymous share (a health check must not queue behind anonymous uploads).
pub const PROBE_ROUTES: [&str; 3] = ["/healthz", "/readyz", "/metrics"];

/// What [`guard`] needs: the limits, the permits of the concurrency cap and those of its
/// anonymous share.
#[derive(Debug, Clone)]
pub struct Guard {
    limits: Arc<HttpLimits>,
    permits: Arc<Semaphore>,
    anonymous: Arc<Semaphore>,
}

/// The slots one request holds while it runs (released when dropped).
struct Slots {
    _anonymous: Option<OwnedSemaphorePermit>,
    _general: Option<OwnedSemaphorePermit>,
}

impl Guard {
    /// A guard enforcing `limits`.
    pub fn new(limits: HttpLimits) -> Guard {
        let total = limits.max_concurrent.max(1);
        let permits = Arc::new(Semaphore::new(total));
        let anonymous = Arc::new(Semaphore::new(limits.max_anonymous.clamp(1, total)));
        Guard {
            limits: Arc::new(limits),
            permits,
            anonymous,
        }
    }

    /// Whether `request` takes one of the anonymous share: it presents no credential and is not
    /// a probe.
    fn is_anonymous(request: &Request) -> bool {
        let probe = request
            .extensions()
            .get::<MatchedPath>()
            .is_some_and(|p| PROBE_ROUTES.contains(&p.as_str()));
        !probe && !credentials::presented(request.headers(), request.uri())
    }

    /// Waits for a request's slots: one of the anonymous share first when it is `anonymous`,
    /// then a general one.
    async fn slots(&self, anonymous: bool) -> Slots {
        let anonymous = if anonymous {
            if self.anonymous.available_permits() == 0 {
                metrics::counter!("palimpsest_http_anonymous_waits_total").increment(1);
            }
            permit(&self.anonymous).await
        } else {
            None
        };
        Slots {
            _anonymous: anonymous,
            _general: permit(&self.permits).await,
        }
    }

    /// The body limit of the route `request` matched.
    fn body_limit(&self, request: &Request) -> u64 {
        let upload = request
            .extensions()
            .get::<MatchedPath>()
            .is_some_and(|p| self.limits.upload_routes.contains(p.as_str()));
        if upload {
            self.limits.upload_limit
        } else {
            self.limits.body_limit
        }
    }
}

/// A permit of `semaphore`, waiting for one (the guard's semaphores are never closed).
async fn permit(semaphore: &Arc<Semaphore>) -> Option<OwnedSemaphorePermit> {
    match semaphore.clone().acquire_owned().await {
        Ok(permit) => Some(permit),
        Err(e) => {
            tracing::error!(error = %e, "request slots closed; running without a slot");
            None
        }
    }
}

/// Why a body read was cut short (kept in an atomic the body and the middleware share).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum BodyRefusal {
    /// More bytes arrived than the route's limit.
    #[error("the request body is larger than the limit")]
    TooLarge = 1,
    /// The body did not arrive before its deadline.
    #[error("the request body did not arrive in time")]
    TooSlow = 2,
}

/// The refusal a body recorded, if any.
#[derive(Debug, Default)]
struct Verdict(AtomicU8);

impl Verdict {
    fn set(&self, refusal: BodyRefusal) {
        self.0.store(refusal as u8, Ordering::Release);
    }

    fn get(&self) -> Option<BodyRefusal> {
        match self.0.load(Ordering::Acquire) {
            1 => Some(BodyRefusal::TooLarge),
            2 => Some(BodyRefusal::TooSlow),
            _ => None,
        }
    }
}

/// A request body held to a byte limit and a deadline.
struct GuardedBody {
    inner: Body,
    limit: u64,
    read: u64,
    deadline: Pin<Box<Sleep>>,
    verdict: Arc<Verdict>,
}

impl GuardedBody {
    fn refuse(&self, refusal: BodyRefusal) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        self.verdict.set(refusal);
        Poll::Ready(Some(Err(axum::Error::new(refusal))))
    }
}

impl http_body::Body for GuardedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.read = this.read.saturating_add(data.len() as u64);
                    if this.read > this.limit {
                        return this.refuse(BodyRefusal::TooLarge);
                    }
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Pending => {
                if this.deadline.as_mut().poll(cx).is_ready() {
                    return this.refuse(BodyRefusal::TooSlow);
                }
                Poll::Pending
            }
            done => done,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

/// The declared `Content-Length`, if any and readable.
fn declared_length(headers: &HeaderMap) -> Option<u64> {
    headers
        .get(header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn too_large(limit: u64) -> Response {
    let mut response = ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the request body is larger than {limit} bytes"),
    )
    .into_response();
    // The unread body is not drained: the connection closes after this answer.
    response.headers_mut().insert(
        header::CONNECTION,
        header::HeaderValue::from_static("close"),
    );
    response
}

/// The 503 of a request that did not complete within `timeout`, its wait for a slot included.
fn timed_out(timeout: Duration) -> Response {
    metrics::counter!("palimpsest_http_refused_total", "why" => "request_timeout").increment(1);
    tracing::warn!(?timeout, "request timed out");
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        format!("the request did not complete within {timeout:?}"),
    )
    .into_response()
}

/// The middleware enforcing [`HttpLimits`] on one request (see the module docs).
pub async fn guard(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let limit = guard.body_limit(&request);
    if declared_length(request.headers()).is_some_and(|n| n > limit) {
        metrics::counter!("palimpsest_http_refused_total", "why" => "body_too_large").increment(1);
        return too_large(limit);
    }
    let verdict = Arc::new(Verdict::default());
    let deadline = Box::pin(tokio::time::sleep(guard.limits.body_timeout));
    let request = request.map(|inner| {
        Body::new(GuardedBody {
            inner,
            limit,
            read: 0,
            deadline,
            verdict: verdict.clone(),
        })
    });
    let timeout = guard.limits.request_timeout;
    let anonymous = Guard::is_anonymous(&request);
    let run = async {
        let _slots = guard.slots(anonymous).await;
        next.run(request).await
    };
    let Ok(response) = tokio::time::timeout(timeout, run).await else {
        return timed_out(timeout);
    };
    match verdict.get() {
        None => response,
        Some(BodyRefusal::TooLarge) => {
            metrics::counter!("palimpsest_http_refused_total", "why" => "body_too_large")
                .increment(1);
            too_large(limit)
        }
        Some(BodyRefusal::TooSlow) => {
            metrics::counter!("palimpsest_http_refused_total", "why" => "body_timeout")
                .increment(1);
            let mut response = ApiError::new(
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "the request body did not arrive within {:?}",
                    guard.limits.body_timeout
                ),
            )
            .into_response();
            response.headers_mut().insert(
                header::CONNECTION,
                header::HeaderValue::from_static("close"),
            );
            response
        }
    }
}

/// Largest error body [`json_errors`] reads to carry it as the message.
const MAX_ERROR_TEXT: usize = 16 * 1024;

/// Whether a response says its body is JSON.
fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.starts_with("application/json") || v.contains("+json")
        })
}

/// Turns every 4xx/5xx answer whose body is not JSON into `{"error": message}`, the message
/// being the text the framework gave (or the status' reason when it gave none); the status and
/// other headers (`Allow` of a 405) are kept.
pub async fn json_errors(request: Request, next: Next) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) || is_json(response.headers()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = match axum::body::to_bytes(body, MAX_ERROR_TEXT).await {
        Ok(bytes) => String::from_utf8_lossy(&bytes).trim().to_owned(),
        Err(e) => {
            tracing::warn!(error = %e, "unreadable error body replaced by its status");
            String::new()
        }
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_owned()
    } else {
        text
    };
    let body = serde_json::json!({ "error": message }).to_string();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(body))
}

/// Refuses, with 400, a request whose path or query holds U+0000 (written `%00`: a raw NUL cannot
/// stand in a request line). Ids and query parameters end up in Postgres `text`, which cannot hold
/// it. Contexts whose API answers in its own envelope check their parameters themselves.
pub async fn refuse_nul(request: Request, next: Next) -> Response {
    let uri = request.uri();
    let in_path = uri.path().contains("%00");
    if in_path || uri.query().is_some_and(|q| q.contains("%00")) {
        let part = if in_path { "path" } else { "query" };
        return ApiError::bad_request(format!(
            "the request {part} must not contain the NUL character (%00)"
        ))
        .into_response();
    }
    next.run(request).await
}

/// A 405 naming the methods `allow`ed, for the `HEAD` of a `GET` route that may write (axum
/// answers `HEAD` with the `GET` handler unless a route says otherwise).
pub fn method_not_allowed(allow: &'static str) -> Response {
    let mut response = ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        format!("method not allowed; allowed: {allow}"),
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::ALLOW, header::HeaderValue::from_static(allow));
    response
}

/// The 404 of a path no route matches, as JSON.
pub async fn no_route() -> ApiError {
    ApiError::not_found("no such route")
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::post;

    fn app(limits: HttpLimits) -> Router {
        Router::new()
            .route("/echo", post(|body: Bytes| async move { body }))
            .route("/upload", post(|body: Bytes| async move { body }))
            .fallback(no_route)
            .layer(axum::middleware::from_fn_with_state(
                Guard::new(limits),
                guard,
            ))
            .layer(axum::middleware::from_fn(json_errors))
    }

    fn small() -> HttpLimits {
        HttpLimits {
            body_limit: 8,
            upload_limit: 32,
            upload_routes: ["/upload".to_owned()].into(),
            ..HttpLimits::default()
        }
    }

    async fn send(app: Router, request: Request) -> (StatusCode, serde_json::Value) {
        let response = tower_service_call(app, request).await;
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .expect("body");
        let json = serde_json::from_slice(&bytes).unwrap_or(serde_json::Value::Null);
        (status, json)
    }

    async fn tower_service_call(app: Router, request: Request) -> Response {
        use tower_service::Service;
        let mut app = app;
        match app.call(request).await {
            Ok(r) => r,
            Err(e) => match e {},
        }
    }

    fn post_to(path: &str, body: &'static str, declared: Option<&str>) -> Request {
        let mut builder = axum::http::Request::builder().method("POST").uri(path);
        if let Some(n) = declared {
            builder = builder.header(header::CONTENT_LENGTH, n);
        }
        builder.body(Body::from(body)).expect("request")
    }

    #[tokio::test]
    async fn a_declared_length_over_the_limit_is_413_json() {
        let (status, json) = send(app(small()), post_to("/echo", "", Some("1000000000"))).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(json["error"].as_str().expect("error").contains("8 bytes"));
    }

    #[tokio::test]
    async fn an_undeclared_body_over_the_limit_is_413_json() {
        let (status, json) = send(app(small()), post_to("/echo", "0123456789", None)).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(json["error"].is_string());
    }

    #[tokio::test]
    async fn upload_routes_take_the_larger_class() {
        let (status, _) = send(app(small()), post_to("/upload", "0123456789", None)).await;
        assert_eq!(status, StatusCode::OK);
    }

    #[tokio::test]
    async fn framework_errors_are_json() {
        let get = axum::http::Request::builder()
            .uri("/echo")
            .body(Body::empty())
            .expect("request");
        let (status, json) = send(app(small()), get).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(json["error"], "Method Not Allowed");
        let missing = axum::http::Request::builder()
            .uri("/nowhere")
            .body(Body::empty())
            .expect("request");
        let (status, json) = send(app(small()), missing).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(json["error"], "no such route");
    }

    #[tokio::test]
    async fn a_full_anonymous_share_leaves_the_other_slots_to_credentials() {
        let limits = HttpLimits {
            max_concurrent: 4,
            max_anonymous: 1,
            ..HttpLimits::default()
        };
        let app = Router::new()
            .route(
                "/hold",
                post(|| async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    "late"
                }),
            )
            .route("/echo", post(|body: Bytes| async move { body }))
            .layer(axum::middleware::from_fn_with_state(
                Guard::new(limits),
                guard,
            ));
        let holder = tokio::spawn(tower_service_call(app.clone(), post_to("/hold", "", None)));
        tokio::time::sleep(Duration::from_millis(50)).await;
        let waited = tokio::time::timeout(
            Duration::from_millis(300),
            send(app.clone(), post_to("/echo", "a", None)),
        )
        .await;
        assert!(
            waited.is_err(),
            "an anonymous request waits: the share is full"
        );
        let mut with_key = post_to("/echo", "a", None);
        with_key
            .headers_mut()
            .insert(header::AUTHORIZATION, "Bearer k".parse().expect("header"));
        let (status, _) = send(app, with_key).await;
        assert_eq!(status, StatusCode::OK, "a credential takes a general slot");
        holder.abort();
    }

    #[tokio::test]
    async fn a_request_over_its_time_is_503_json() {
        let limits = HttpLimits {
            request_timeout: Duration::from_millis(50),
            ..HttpLimits::default()
        };
        let slow = Router::new()
            .route(
                "/slow",
                post(|| async {
                    tokio::time::sleep(Duration::from_secs(5)).await;
                    "late"
                }),
            )
            .layer(axum::middleware::from_fn_with_state(
                Guard::new(limits),
                guard,
            ));
        let (status, json) = send(slow, post_to("/slow", "", None)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(json["error"].is_string());
    }
}
