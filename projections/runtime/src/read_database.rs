//! Where a projection's rows and checkpoint live: the log's own database (the default), or a
//! Postgres of their own (`--read-database-url`), so that queries and projectors stop sharing
//! one server with the appends.
//!
//! The guarantees are the same in both places. A batch's rows and its checkpoint commit in one
//! transaction of the read database, under the projection's lock taken there. The events come
//! from the log: in the log's own database in the statement that reads the checkpoint (one
//! round trip); apart, read on from the checkpoint through the log's pool (positions are gapless
//! and commit in order, so a read on from a position never skips one). Either way no row
//! becomes visible before its event is on disk in the log ([`crate::runner::on_disk`]).
//!
//! A read database records which log feeds each read model (column `log_id` of its
//! checkpoint): a read model built from another log is refused, not extended
//! ([`crate::checkpoint::claim`]).

use deadpool_postgres::Pool;
use palimpsest_log::EventStore;

/// The database a projection writes its rows and checkpoint into.
#[derive(Clone)]
pub struct ReadDatabase {
    pool: Pool,
    apart: bool,
}

impl ReadDatabase {
    /// The log's own database: rows, checkpoint and events in one server.
    pub fn of_log(store: &EventStore) -> ReadDatabase {
        ReadDatabase {
            pool: store.pool().clone(),
            apart: false,
        }
    }

    /// A database apart from the log's, reached through `pool`.
    pub fn apart(pool: Pool) -> ReadDatabase {
        ReadDatabase { pool, apart: true }
    }

    /// Connections to the read database.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Whether the read database is apart from the log's (the events are then read through the
    /// log's own pool, not joined to the checkpoint).
    pub fn is_apart(&self) -> bool {
        self.apart
    }
}
