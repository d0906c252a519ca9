//! Automatic zombie retention: a deleted SYNC document stays a zombie (and a `del` row stays)
//! so that synchronised clients learn of the deletion, "un certain temps" (the spec), then is
//! purged. With a retention set, every server purges, at a fixed period, the zombies and `del`
//! rows of every organisation that became purgeable more than the retention ago — the same
//! purge as the admin's `purgeOrgs {z}`, so it is idempotent and two servers doing it at once
//! only repeat each other's work.

use crate::caller::RETENTION;
use crate::command::call;
use crate::context::Records;
use crate::purge;
use palimpsest_web::command::CommandRequest;
use std::time::Duration;

/// Starts the retention loop when the settings give a retention, as a background task of the
/// app: it stops (between purges) when the app stops.
pub fn spawn(records: &Records) {
    let Some(retention) = records.settings.zombie_retention_ms else {
        return;
    };
    let records = records.clone();
    let every = Duration::from_millis(records.settings.retention_every_ms);
    let background = records.app.background.clone();
    background.spawn("records zombie retention", move |stop| async move {
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                _ = tokio::time::sleep(every) => purge_expired(&records, retention).await,
            }
        }
    });
}

/// Purges what became purgeable before `now - retention`; a failure is logged and tried again
/// at the next period.
pub async fn purge_expired(records: &Records, retention: i64) {
    let z = records.now().saturating_sub(retention);
    // A purge of the server's own, under no Idempotency-Key: each period's is a new one.
    let request = CommandRequest::none();
    let purged = call(records, &RETENTION, &request, |steps| async move {
        purge::every_org_before(records, &RETENTION, &steps, z).await
    })
    .await;
    match purged {
        Ok(purged) => tracing::debug!(%purged, z, "records: expired zombies purged"),
        Err(e) => tracing::warn!(
            code = e.code,
            message = e.message,
            "records: zombie retention purge failed; trying again next period"
        ),
    }
}
