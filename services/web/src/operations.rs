//! `GET /v1/operations`: what an operator watches of the pipeline, as one JSON answer: the log's
//! head and what of it is on disk, the relay's state when this process runs it and where every
//! relay stands in each JetStream stream (kept in the log's database by the relays themselves,
//! so any process shows it), and every read model's checkpoint (each partition's too) with its
//! lag and the event it is stopped on.
//! The console polls it for its live charts; `/metrics` says the same to Prometheus.

use crate::admin::{Nothing, query};
use crate::{ApiError, AppState};
use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, Uri};
use palimpsest_projections::{ProjectionError, checkpoint};
use serde_json::{Value, json};

/// The answer; see the module doc.
pub(crate) async fn operations(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Json<Value>, ApiError> {
    let Nothing {} = query(&uri)?;
    let head = state.store.head_position().await?;
    let relay_positions = {
        let client = state
            .store
            .pool()
            .get()
            .await
            .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
        palimpsest_log::relay::position::positions(&client).await?
    };
    let relays: Vec<Value> = relay_positions
        .into_iter()
        .map(|r| {
            json!({"stream": r.stream, "position": r.position, "behind": (head - r.position).max(0),
                   "updated_at": r.updated_at})
        })
        .collect();
    let mut read_models = Vec::new();
    let pools = std::iter::once(state.store.pool()).chain(state.read_databases.pools());
    for pool in pools {
        let client = pool
            .get()
            .await
            .map_err(|e| ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.to_string()))?;
        let found = checkpoint::all(&client).await.map_err(unavailable)?;
        read_models.extend(found.into_iter().map(|c| {
            json!({
                "name": c.name,
                "position": c.position,
                "lag": (head - c.position).max(0),
                "updated_at": c.updated_at,
                "stalled": c.stalled,
            })
        }));
    }
    Ok(Json(json!({
        "log_id": state.store.log_id(),
        "head": head,
        "durable": state.store.durable().current(),
        "relay": state.relay.as_ref().map(|r| r.state()),
        "relay_positions": relays,
        "read_models": read_models,
    })))
}

/// A read model's database failing: 503 when it is away, else a 500 logged with its detail.
fn unavailable(e: ProjectionError) -> ApiError {
    if e.is_transient() {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "a read database is unavailable",
        )
    } else {
        ApiError::internal(e)
    }
}
