//! `/healthz`, `/readyz` and `/metrics`, served by every process.

use crate::AppState;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::{Json, Router};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use palimpsest_log::relay::RelayState;
use palimpsest_projections::stall;
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

/// The health routes: liveness, readiness (the log answers, no projection is stopped on an
/// event, the relay is not blocked, the tree maker refuses nothing) and Prometheus metrics.
pub fn router(state: AppState) -> Router {
    metrics_handle();
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics_text))
        .with_state(state)
}

/// Ready when the log answers, no read model is stopped on an event, the relay (if this
/// process runs it) is neither blocked nor stuck (failing for the same reason for longer than
/// `--relay-stuck-after`) and the tree maker (if it runs here) refuses no event. Otherwise 503,
/// naming what stopped, where and why.
async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let head = match state.store.head_position().await {
        Ok(head) => head,
        Err(e) => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "unavailable", "error": e.to_string() })),
            );
        }
    };
    let stalled = match stalls(&state).await {
        Ok(stalled) => stalled,
        Err(e) => {
            return (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({ "status": "unavailable", "error": e.to_string() })),
            );
        }
    };
    let relay = state.relay.as_ref().map(|r| r.state());
    let relay_stuck = state.relay.as_ref().and_then(|r| r.stuck());
    let blocked = matches!(relay, Some(RelayState::Blocked { .. })) || relay_stuck.is_some();
    let tree = state.tree.as_ref().map(|t| t.state());
    let refused = tree.as_ref().is_some_and(|t| t.refused.is_some());
    let ready = stalled.is_empty() && !blocked && !refused;
    let mut body = json!({
        "status": if ready { "ready" } else { "stopped" },
        "log_head": head,
        "log_id": state.store.log_id(),
        "stalled_projections": stalled,
        "relay": relay,
        "tree": tree,
    });
    if let Some(stuck) = relay_stuck {
        body["relay_stuck"] = json!({
            "reason": format!(
                "the relay has not published for {} s, failing each time with: {}",
                stuck.seconds, stuck.error
            ),
            "error": stuck.error,
            "since": stuck.since,
        });
    }
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body))
}

/// The stalls recorded in every read database of the process: the log's and those apart.
async fn stalls(
    state: &AppState,
) -> Result<Vec<stall::Stall>, palimpsest_projections::ProjectionError> {
    let mut stalled = Vec::new();
    for pool in std::iter::once(&*state.read).chain(state.read_databases.pools()) {
        let client = pool.get().await?;
        stalled.extend(stall::all(&client).await?);
    }
    Ok(stalled)
}

async fn metrics_text() -> impl IntoResponse {
    let body = metrics_handle().map(|h| h.render()).unwrap_or_default();
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body)
}
