//! Waiting for a read model to reach a position: read-your-writes for HTTP handlers.

use crate::PROJECTION_CHANNEL;
use deadpool_postgres::Pool;
use palimpsest_log::{LogError, notify};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The positions every projection has reached, followed through the runners' notifications.
/// A write handler waits here for its own append before answering, so the client's next read
/// sees it; reads themselves never wait.
#[derive(Clone)]
pub struct ProjectionWatch {
    positions: Arc<watch::Sender<HashMap<String, i64>>>,
    pool: Pool,
}

impl ProjectionWatch {
    /// Starts following the runners' notifications.
    pub fn start(database_url: &str, pool: Pool) -> Result<ProjectionWatch, LogError> {
        let (sender, _) = watch::channel(HashMap::new());
        let positions = Arc::new(sender);
        let mut notes = notify::listen(database_url, &[PROJECTION_CHANNEL])?;
        let follower = Arc::downgrade(&positions);
        tokio::spawn(async move {
            while let Some(note) = notes.recv().await {
                let Some(positions) = follower.upgrade() else {
                    return;
                };
                if let Some((name, pos)) = note.payload.rsplit_once(':')
                    && let Ok(pos) = pos.parse::<i64>()
                {
                    advance(&positions, name, pos);
                }
            }
        });
        Ok(ProjectionWatch { positions, pool })
    }

    /// Waits until projection `name` has applied `position`, at most `timeout`. Returns whether
    /// it did (a projection that is not running makes the caller answer without the guarantee).
    pub async fn wait_for(&self, name: &str, position: i64, timeout: Duration) -> bool {
        let mut rx = self.positions.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        let mut asked_db = false;
        let mut polled = false;
        loop {
            let seen = rx.borrow_and_update().get(name).copied();
            if seen.unwrap_or(0) >= position {
                return true;
            }
            // Once a notification of `name` has been seen, later ones will wake us: the
            // database is asked only before the first (it may have come before we started) and
            // on the slow poll (one may be lost while the listening connection reconnects).
            // Asking on every wait made each write cost a query under load.
            if !asked_db && (seen.is_none() || polled) {
                // A notification may have come before we subscribed: ask the checkpoint once.
                asked_db = true;
                if let Some(p) = self.read_checkpoint(name).await {
                    advance(&self.positions, name, p);
                    continue;
                }
            }
            let poll = tokio::time::sleep(Duration::from_millis(250));
            tokio::select! {
                changed = rx.changed() => if changed.is_err() { return false },
                _ = poll => (asked_db, polled) = (false, true),
                _ = tokio::time::sleep_until(deadline) => return false,
            }
        }
    }

    async fn read_checkpoint(&self, name: &str) -> Option<i64> {
        if !name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return None;
        }
        let client = self.pool.get().await.ok()?;
        let row = client
            .query_opt(
                &format!("SELECT position FROM {name}.projection_checkpoint WHERE name = $1"),
                &[&name],
            )
            .await
            .ok()??;
        Some(row.get(0))
    }
}

fn advance(positions: &watch::Sender<HashMap<String, i64>>, name: &str, position: i64) {
    positions.send_if_modified(|map| {
        let entry = map.entry(name.to_owned()).or_insert(0);
        if position > *entry {
            *entry = position;
            true
        } else {
            false
        }
    });
}
