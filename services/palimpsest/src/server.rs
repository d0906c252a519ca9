//! The HTTP server: health, metrics, the admin API and each context under its prefix, behind
//! the platform's limits (`palimpsest_web::limits`), on connections that time out a client
//! slow to send its headers.

use crate::contexts::Context;
use axum::Router;
use axum::extract::{ConnectInfo, MatchedPath};
use axum::http::Request;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use palimpsest_web::limits::{self, Guard, HttpLimits};
use palimpsest_web::{AppState, admin, command, consistency, health, log_routes};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// How long a stopping server lets open connections finish their requests.
const DRAIN: Duration = Duration::from_secs(10);

/// The whole application's routes.
pub fn app(
    state: AppState,
    contexts: &[Context],
    limits: HttpLimits,
    subject_prefix: &str,
) -> Router {
    let mut router = Router::new()
        .merge(health::router(state.clone()))
        .merge(admin::router(state.clone()).layer(axum::middleware::from_fn(limits::refuse_nul)))
        .merge(log_routes::router(state.clone()))
        .merge(palimpsest_web::schemas::router(subject_prefix))
        .merge(palimpsest_web::v1_openapi::router())
        .merge(
            palimpsest_web::console::router(state.clone())
                .layer(axum::middleware::from_fn(limits::refuse_nul)),
        )
        .merge(
            crate::stream_state::router(state.clone())
                .layer(axum::middleware::from_fn(limits::refuse_nul)),
        );
    for c in contexts {
        let routes = (c.router)(state.for_read_model(c.name))
            .layer(axum::middleware::from_fn(command::fingerprint_requests))
            .layer(axum::middleware::from_fn(consistency::track));
        // `nest` answers `/ctx` but not `/ctx/`, which CouchDB clients ask for the server root.
        let root = Router::new()
            .fallback_service(routes.clone())
            .layer(axum::middleware::map_request(to_context_root));
        router = router
            .nest(&format!("/{}", c.name), routes)
            .route_service(&format!("/{}/", c.name), root.into_service());
    }
    guarded(router, limits)
}

/// Rewrites `/ctx/` (with its query) to the context router's own `/`.
async fn to_context_root(mut request: Request<axum::body::Body>) -> Request<axum::body::Body> {
    let path_and_query = match request.uri().query() {
        Some(query) => format!("/?{query}"),
        None => "/".to_owned(),
    };
    match path_and_query.parse() {
        Ok(uri) => *request.uri_mut() = uri,
        Err(e) => tracing::warn!(error = %e, "context root query did not parse"),
    }
    request
}

/// Only `/healthz`, `/readyz` and `/metrics`: what a relay or projector process serves.
pub fn health_only(state: AppState, limits: HttpLimits) -> Router {
    guarded(health::router(state), limits)
}

/// The upload routes of `contexts`, as matched paths (with their prefix).
pub fn upload_routes(contexts: &[Context]) -> Vec<String> {
    contexts
        .iter()
        .flat_map(|c| c.upload_routes.iter().map(|r| format!("/{}{r}", c.name)))
        .collect()
}

/// `router` with a JSON 404 for unknown paths, the limits, JSON error bodies and observation.
fn guarded(router: Router, limits: HttpLimits) -> Router {
    router
        .fallback(limits::no_route)
        .layer(axum::middleware::from_fn_with_state(
            Guard::new(limits),
            limits::guard,
        ))
        .layer(axum::middleware::from_fn(limits::json_errors))
        .layer(axum::middleware::from_fn(observe))
}

/// A span and request metrics around every request.
async fn observe(
    request: Request<axum::body::Body>,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".to_owned());
    let method = request.method().to_string();
    let started = std::time::Instant::now();
    let span = tracing::info_span!("http", %method, %route);
    let response = tracing::Instrument::instrument(next.run(request), span).await;
    let status = response.status().as_u16().to_string();
    metrics::histogram!("palimpsest_http_request_seconds", "method" => method, "route" => route, "status" => status)
        .record(started.elapsed().as_secs_f64());
    response
}

/// Serves `app` on `listener` until `shutdown`, each connection closed when a request's headers
/// take longer than `header_timeout`; on shutdown, open connections get [`DRAIN`] to finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let mut connections = JoinSet::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait a little, keep serving.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.cancelled() => break,
        };
        while connections.try_join_next().is_some() {}
        // The router takes hyper's body as it is (it boxes any body); each request carries
        // the client's address (`ConnectInfo`), which login throttling counts failures by.
        let router = app.clone();
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(ConnectInfo(peer));
            let mut router = router.clone();
            async move { tower_service::Service::call(&mut router, request).await }
        });
        let stop = shutdown.clone();
        connections.spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let connection = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            tokio::pin!(connection);
            let outcome = tokio::select! {
                outcome = connection.as_mut() => outcome,
                _ = stop.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = outcome {
                tracing::debug!(%peer, error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN, async {
        while connections.join_next().await.is_some() {}
    })
    .await
    .is_err()
    {
        tracing::warn!(
            open = connections.len(),
            "connections still open after the drain time; closing them"
        );
        connections.abort_all();
    }
    Ok(())
}
