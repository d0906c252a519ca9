//! The log's head position, followed live.

use crate::{LOG_CHANNEL, LogError, notify};
use deadpool_postgres::Pool;
use std::time::Duration;
use tokio::sync::watch;

/// The highest committed global position, as a watch: readers of the log (relay, projectors)
/// wait on it instead of polling. It moves on local commits at once and on other processes'
/// commits through Postgres NOTIFY, and is re-read every second in case a notification was lost.
#[derive(Clone)]
pub struct HeadWatch {
    sender: watch::Sender<i64>,
}

impl HeadWatch {
    /// Reads the current head and starts following it.
    pub(crate) async fn start(database_url: &str, pool: Pool) -> Result<HeadWatch, LogError> {
        let current: i64 = pool
            .get()
            .await?
            .query_one("SELECT position FROM log.head WHERE id = 1", &[])
            .await?
            .get(0);
        let (sender, _) = watch::channel(current);
        let watch = HeadWatch { sender };
        let mut notes = notify::listen(database_url, &[LOG_CHANNEL])?;
        let follower = watch.clone();
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    note = notes.recv() => match note {
                        Some(n) => {
                            if let Ok(p) = n.payload.parse::<i64>() {
                                follower.advance(p);
                            }
                        }
                        None => return,
                    },
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {
                        if let Ok(client) = pool.get().await
                            && let Ok(row) = client.query_one("SELECT position FROM log.head WHERE id = 1", &[]).await
                        {
                            follower.advance(row.get(0));
                        }
                    }
                }
            }
        });
        Ok(watch)
    }

    /// Moves the head forward (never back).
    pub(crate) fn advance(&self, position: i64) {
        forward(&self.sender, position);
    }

    /// The last head position seen.
    pub fn current(&self) -> i64 {
        *self.sender.borrow()
    }

    /// A receiver that changes whenever the head moves.
    pub fn subscribe(&self) -> watch::Receiver<i64> {
        self.sender.subscribe()
    }
}

/// Moves a watched position to `position` when that is further: log positions only grow, so a
/// late or repeated report never moves one back.
pub(crate) fn forward(sender: &watch::Sender<i64>, position: i64) {
    sender.send_if_modified(|p| {
        if position > *p {
            *p = position;
            true
        } else {
            false
        }
    });
}
