//! Instance functions: `listAllPads`, `getStats`, and the functions about connected editing
//! clients (`padUsersCount`, `padUsers`, `sendClientsMessage`). Palimpsest has no live editor
//! connections (clients submit changesets over HTTP), so no user is ever connected: the counts
//! are truly zero and a message reaches nobody.

use super::ApiCall;
use super::envelope::{Data, EnvelopeError};
use super::pad_calls::{existing_pad, pad_param};
use serde_json::json;

/// `padUsersCount(padID)` → `{padUsersCount: 0}` (no connected editors).
pub async fn pad_users_count(_c: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    Data::of(&json!({ "padUsersCount": 0 }))
}

/// `padUsers(padID)` → `{padUsers: []}` (no connected editors).
pub async fn pad_users(_c: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    Data::of(&json!({ "padUsers": [] }))
}

/// `sendClientsMessage(padID, msg)`: the pad must exist; there is no client to send to.
pub async fn send_clients_message(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = pad_param(&call.params, "padID")?;
    existing_pad(&call.reader, &id).await?;
    Ok(Data::null())
}

/// `listAllPads()` → `{padIDs}`, sorted.
pub async fn list_all_pads(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let ids = call
        .reader
        .all_pad_ids()
        .await
        .map_err(EnvelopeError::internal)?;
    Data::of(&json!({ "padIDs": ids }))
}

/// `getStats()` → `{totalPads, totalSessions, totalActivePads}` (sessions and active pads
/// count live editor connections, of which there are none).
pub async fn get_stats(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let ids = call
        .reader
        .all_pad_ids()
        .await
        .map_err(EnvelopeError::internal)?;
    /// Etherpad's property order.
    #[derive(serde::Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Stats {
        total_pads: usize,
        total_sessions: usize,
        total_active_pads: usize,
    }
    Data::of(&Stats {
        total_pads: ids.len(),
        total_sessions: 0,
        total_active_pads: 0,
    })
}
