//! Where the relay stands, kept in `log.relay_positions` (migration 0008) so that any process can
//! show it against the log's head: a `serve` without the relay, the console's operations page.
//! Written at most every [`EVERY`] while the relay publishes, and once more when it catches up;
//! only ever moved forward (two relays on one stream both write it).

use crate::{EventStore, LogError};
use chrono::{DateTime, Utc};
use deadpool_postgres::GenericClient;
use std::time::{Duration, Instant};

/// The longest the kept position trails what the relay has published while it keeps publishing.
pub const EVERY: Duration = Duration::from_millis(250);

/// A relay's position as kept.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct RelayPosition {
    /// The JetStream stream.
    pub stream: String,
    /// The last position JetStream acknowledged.
    pub position: i64,
    /// When it was written.
    pub updated_at: DateTime<Utc>,
}

/// What a relay last wrote, to write again only when it moved and [`EVERY`] passed.
#[derive(Debug, Default)]
pub(crate) struct PositionKeeper {
    written: Option<(i64, Instant)>,
}

impl PositionKeeper {
    /// Writes `position` for `stream` when it moved since the last write and `caught_up` (the
    /// relay is about to wait) or [`EVERY`] has passed. A failure is logged, not returned: the
    /// kept position is for operators, and publishing goes on without it.
    pub(crate) async fn keep(
        &mut self,
        store: &EventStore,
        stream: &str,
        position: i64,
        caught_up: bool,
    ) {
        let due = match self.written {
            None => true,
            Some((written, at)) => written != position && (caught_up || at.elapsed() >= EVERY),
        };
        if !due {
            return;
        }
        match write(store, stream, position).await {
            Ok(()) => self.written = Some((position, Instant::now())),
            Err(e) => {
                tracing::warn!(stream, position, error = %e, "cannot keep the relay's position")
            }
        }
    }
}

async fn write(store: &EventStore, stream: &str, position: i64) -> Result<(), LogError> {
    let client = store.pool().get().await?;
    client
        .execute(
            "INSERT INTO log.relay_positions (stream, position) VALUES ($1, $2) \
             ON CONFLICT (stream) DO UPDATE SET \
             position = GREATEST(log.relay_positions.position, excluded.position), \
             updated_at = now()",
            &[&stream, &position],
        )
        .await?;
    Ok(())
}

/// Every kept relay position, by stream.
pub async fn positions(client: &impl GenericClient) -> Result<Vec<RelayPosition>, LogError> {
    let rows = client
        .query(
            "SELECT stream, position, updated_at FROM log.relay_positions ORDER BY stream",
            &[],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|r| RelayPosition {
            stream: r.get(0),
            position: r.get(1),
            updated_at: r.get(2),
        })
        .collect())
}
