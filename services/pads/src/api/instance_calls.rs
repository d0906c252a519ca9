//! Instance functions: `listAllPads`, `getStats`, and the functions about connected editing
//! clients (`padUsersCount`, `padUsers`, `sendClientsMessage`). Palimpsest has no live editor
//! connections (clients submit changesets over HTTP), so no user is ever connected: the counts
//! are truly zero and a message reaches nobody.

use super::Ctx;
use super::envelope::{Data, Failure};
use super::pad_calls::{existing_pad, pad_param};
use serde_json::json;

/// `padUsersCount(padID)` → `{padUsersCount: 0}` (no connected editors).
pub async fn pad_users_count(_c: Ctx<'_>) -> Result<Data, Failure> {
    Data::of(&json!({ "padUsersCount": 0 }))
}

/// `padUsers(padID)` → `{padUsers: []}` (no connected editors).
pub async fn pad_users(_c: Ctx<'_>) -> Result<Data, Failure> {
    Data::of(&json!({ "padUsers": [] }))
}

/// `sendClientsMessage(padID, msg)`: the pad must exist; there is no client to send to.
pub async fn send_clients_message(c: Ctx<'_>) -> Result<Data, Failure> {
    let id = pad_param(&c.p, "padID")?;
    existing_pad(&c.reader, &id).await?;
    Ok(Data::null())
}

/// `listAllPads()` → `{padIDs}`, sorted.
pub async fn list_all_pads(c: Ctx<'_>) -> Result<Data, Failure> {
    let ids = c.reader.all_pad_ids().await.map_err(Failure::internal)?;
    Data::of(&json!({ "padIDs": ids }))
}

/// `getStats()` → `{totalPads, totalSessions, totalActivePads}` (sessions and active pads
/// count live editor connections, of which there are none).
pub async fn get_stats(c: Ctx<'_>) -> Result<Data, Failure> {
    let ids = c.reader.all_pad_ids().await.map_err(Failure::internal)?;
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
