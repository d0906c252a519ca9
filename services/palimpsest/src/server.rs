//! The HTTP server: health, metrics, the admin API and each context under its prefix.

use crate::contexts::Context;
use axum::Router;
use axum::extract::MatchedPath;
use axum::http::Request;
use palimpsest_web::{AppState, admin, command, health};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// The whole application's routes.
pub fn app(state: AppState, contexts: &[Context]) -> Router {
    let mut router = Router::new()
        .merge(health::router(state.clone()))
        .merge(admin::router(state.clone()));
    for c in contexts {
        let routes = (c.router)(state.clone())
            .layer(axum::middleware::from_fn(command::fingerprint_requests));
        // `nest` answers `/ctx` but not `/ctx/`, which CouchDB clients ask for the server root.
        let root = Router::new()
            .fallback_service(routes.clone())
            .layer(axum::middleware::map_request(to_context_root));
        router = router
            .nest(&format!("/{}", c.name), routes)
            .route_service(&format!("/{}/", c.name), root.into_service());
    }
    router.layer(axum::middleware::from_fn(observe))
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
pub fn health_only(state: AppState) -> Router {
    health::router(state).layer(axum::middleware::from_fn(observe))
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

/// Serves `app` on `listener` until `shutdown`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
}
