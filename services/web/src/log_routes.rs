//! `/v1/log`: the log's signed Merkle tree as anyone may check it (decision 0024): the public
//! key, signed heads, inclusion and consistency proofs (RFC 9162), and the appender's batch
//! signatures. Like a Certificate Transparency log these routes are public: they reveal
//! hashes and sizes, never content. A parameter they do not know, or a size beyond the tree,
//! is a 400 naming it.

use crate::admin::query;
use crate::{ApiError, AppState};
use axum::extract::State;
use axum::http::Uri;
use axum::routing::get;
use axum::{Json, Router};
use palimpsest_events::tree_head::{BatchSignature, LogKey, SignedTreeHead};
use palimpsest_log::tree::maker::{batches, origin};
use palimpsest_log::tree::proof::{self, ConsistencyProof, InclusionProof, ProofError};
use serde::Deserialize;

/// The public routes of the log's tree.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/log/key", get(key))
        .route("/v1/log/head", get(head))
        .route("/v1/log/proof/inclusion", get(inclusion))
        .route("/v1/log/proof/consistency", get(consistency))
        .route("/v1/log/batches", get(batch_signatures))
        .with_state(state)
}

/// Most batch signatures one answer carries.
const MAX_BATCHES: usize = 1000;

async fn key(State(state): State<AppState>, uri: Uri) -> Result<Json<LogKey>, ApiError> {
    query::<Nothing>(&uri)?;
    let client = state.store.pool().get().await.map_err(log_error)?;
    let unsigned_until = origin(&client).await.map_err(log_error)?;
    Ok(Json(LogKey {
        log_id: state.store.log_id(),
        algorithm: "ed25519".into(),
        public_key: state.signer.public_key(),
        unsigned_until,
    }))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Nothing {}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeadQuery {
    tree_size: Option<u64>,
}

/// The latest signed head, or the one kept for `tree_size`; 404 when there is none (yet).
async fn head(State(state): State<AppState>, uri: Uri) -> Result<Json<SignedTreeHead>, ApiError> {
    let q: HeadQuery = query(&uri)?;
    let client = state.store.pool().get().await.map_err(log_error)?;
    let head = proof::head(&client, state.store.log_id(), q.tree_size)
        .await
        .map_err(log_error)?;
    head.map(Json).ok_or_else(|| match q.tree_size {
        Some(size) => ApiError::not_found(format!("no head was signed at tree_size {size}")),
        None => ApiError::not_found("no head has been signed yet"),
    })
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct InclusionQuery {
    position: u64,
    tree_size: u64,
}

async fn inclusion(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Json<InclusionProof>, ApiError> {
    let q: InclusionQuery = query(&uri)?;
    let client = state.store.pool().get().await.map_err(log_error)?;
    let proof = proof::inclusion(&client, q.position, q.tree_size).await;
    proof.map(Json).map_err(proof_error)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConsistencyQuery {
    from: u64,
    to: u64,
}

async fn consistency(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Json<ConsistencyProof>, ApiError> {
    let q: ConsistencyQuery = query(&uri)?;
    let client = state.store.pool().get().await.map_err(log_error)?;
    let proof = proof::consistency(&client, q.from, q.to).await;
    proof.map(Json).map_err(proof_error)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BatchesQuery {
    from: u64,
    to: u64,
}

/// The batch signatures touching positions `from..=to`, at most [`MAX_BATCHES`].
async fn batch_signatures(
    State(state): State<AppState>,
    uri: Uri,
) -> Result<Json<Vec<BatchSignature>>, ApiError> {
    let q: BatchesQuery = query(&uri)?;
    if q.from == 0 || q.from > q.to {
        return Err(ApiError::bad_request(
            "from must be at least 1 and at most to",
        ));
    }
    let client = state.store.pool().get().await.map_err(log_error)?;
    let mut found = batches(&client, q.from - 1, q.to)
        .await
        .map_err(log_error)?;
    found.truncate(MAX_BATCHES);
    Ok(Json(found))
}

fn proof_error(e: ProofError) -> ApiError {
    match e {
        ProofError::OutOfRange(message) => ApiError::bad_request(message),
        ProofError::Log(e) => log_error(e),
    }
}

fn log_error(e: impl Into<palimpsest_log::LogError>) -> ApiError {
    crate::PlatformError::from(e.into()).into()
}
