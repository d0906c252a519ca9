//! `/healthz`, `/readyz` and `/metrics`, served by every process.

use crate::AppState;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use serde_json::json;
use std::sync::OnceLock;

static METRICS: OnceLock<Option<PrometheusHandle>> = OnceLock::new();

/// Installs the process-wide Prometheus recorder (once; later calls return the same handle).
pub fn metrics_handle() -> Option<&'static PrometheusHandle> {
    METRICS
        .get_or_init(|| match PrometheusBuilder::new().install_recorder() {
            Ok(handle) => Some(handle),
            Err(e) => {
                tracing::warn!(error = %e, "metrics recorder not installed");
                None
            }
        })
        .as_ref()
}

/// The health routes: liveness, readiness (the database answers and the log is readable) and
/// Prometheus metrics.
pub fn router(state: AppState) -> Router {
    metrics_handle();
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(state)
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    match state.store.head_position().await {
        Ok(head) => (
            StatusCode::OK,
            Json(json!({ "status": "ready", "log_head": head })),
        ),
        Err(e) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "unavailable", "error": e.to_string() })),
        ),
    }
}

async fn metrics_text() -> impl IntoResponse {
    let body = metrics_handle().map(|h| h.render()).unwrap_or_default();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}
