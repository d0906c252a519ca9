//! The pool a context's queries take their connections from: its read database, or a streaming
//! replica of it that has replayed what the request must see.
//!
//! A replica (`--read-replica-url NAME=URL`) takes queries off the read database, but it
//! replays the read database's WAL some time after each commit. The primary's checkpoint having
//! moved says nothing of the replica, so a request that must see a position
//! ([`crate::consistency`]: the position its client names, or its own append) reads the read
//! model's checkpoint *on the replica connection itself* and waits, bounded, until the replica
//! has replayed it; that same connection then serves the request's query, and a standby never
//! goes back in time. A replica that does not get there in time (or does not answer) leaves
//! the request to the primary: no client reads older data than it wrote. Outside a request
//! (background tasks, the write side's own checks) every connection is the primary's.

use deadpool_postgres::{Object, Pool, PoolError};
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// The longest pause between two reads of a replica's checkpoint while waiting for it.
const LONGEST_PAUSE: Duration = Duration::from_millis(20);

/// Connections for queries of one read model: the primary's, or a caught-up replica's.
/// Dereferences to the primary's pool (what the write side and background tasks use).
#[derive(Clone)]
pub struct ReadPool {
    primary: Pool,
    replica: Option<Arc<Replica>>,
}

/// A streaming replica of a read database, for the queries of one read model.
pub struct Replica {
    /// Connections to the replica.
    pub pool: Pool,
    /// The read model whose checkpoint tells how far the replica has replayed.
    pub projection: String,
    /// How long a request waits for the replica before it reads the primary.
    pub wait: Duration,
    /// Whether the replica's checkpoint is checked at all. Turned off only by a test, to show
    /// that a replica read without the check returns older data than the client wrote.
    pub checked: bool,
}

impl ReadPool {
    /// Queries go to `primary` only.
    pub fn primary(primary: Pool) -> ReadPool {
        ReadPool {
            primary,
            replica: None,
        }
    }

    /// Queries made inside a request go to `replica` once it has replayed what the request
    /// must see, else to `primary`.
    pub fn with_replica(primary: Pool, replica: Replica) -> ReadPool {
        ReadPool {
            primary,
            replica: Some(Arc::new(replica)),
        }
    }

    /// The read database itself (never a replica): what the write side reads when it must see
    /// the read model exactly where the primary's checkpoint stands (decision 0022).
    pub fn read_database(&self) -> &Pool {
        &self.primary
    }

    /// A connection for a query: inside a request, the replica's once it has replayed the
    /// position the request must see; otherwise, or when it does not in time, the primary's.
    pub async fn get(&self) -> Result<Object, PoolError> {
        if let Some(replica) = &self.replica
            && let Some(position) = crate::consistency::needed()
            && let Some(connection) = replica.caught_up(position).await
        {
            return Ok(connection);
        }
        self.primary.get().await
    }
}

impl Deref for ReadPool {
    type Target = Pool;

    fn deref(&self) -> &Pool {
        &self.primary
    }
}

impl Replica {
    /// A replica connection whose read model has replayed `position` (waiting at most
    /// [`Replica::wait`]), or `None`: the caller reads the primary.
    async fn caught_up(&self, position: i64) -> Option<Object> {
        let projection = self.projection.as_str();
        let connection = match self.pool.get().await {
            Ok(connection) => connection,
            Err(e) => {
                tracing::warn!(projection, error = %e, "replica unavailable; reading the primary");
                return None;
            }
        };
        if !self.checked || position <= 0 {
            return Some(connection);
        }
        // A read model split into partitions stands where its slowest partition does; its own
        // row stays where the split began (decision 0031).
        let sql = format!(
            "SELECT coalesce((SELECT min(position) FROM {projection}.projection_checkpoint \
             WHERE name LIKE $1 || '/%'), (SELECT position FROM {projection}.projection_checkpoint \
             WHERE name = $1))"
        );
        let deadline = Instant::now() + self.wait;
        let mut pause = Duration::from_millis(1);
        loop {
            let replayed: i64 = match connection.query_one(&sql, &[&projection]).await {
                Ok(row) => row.get(0),
                Err(e) => {
                    tracing::warn!(projection, error = %e, "replica checkpoint unreadable; reading the primary");
                    return None;
                }
            };
            if replayed >= position {
                return Some(connection);
            }
            if Instant::now() + pause > deadline {
                metrics::counter!("palimpsest_replica_behind_total", "projection" => projection.to_owned())
                    .increment(1);
                return None;
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(LONGEST_PAUSE);
        }
    }
}
