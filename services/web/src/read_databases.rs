//! Read models on a Postgres of their own (`--read-database-url CONTEXT=URL`).
//!
//! By default every read model lives in the log's database, and one server carries the appends,
//! the projectors and every query. An operator may move any read model (a context's, or the
//! platform's `stream_heads`) to another database: its projector then writes rows and
//! checkpoint there (`palimpsest_projections::ReadDatabase`), its context's queries read there,
//! and its context's writes wait for the checkpoint there (the watch follows that database's
//! notifications), so read-your-writes holds as before. Read models given the same URL share
//! one pool and one watch.

use deadpool_postgres::Pool;
use palimpsest_log::{EventStore, LogError};
use palimpsest_projections::{ProjectionWatch, ReadDatabase};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Connections a read database's pool holds for queries, besides one per projector writing
/// there (a live projector keeps its connection while it waits for the log to move).
const QUERY_CONNECTIONS: usize = 16;

/// One read database of this process: what its queries and projectors use, and the watch its
/// writes wait on.
#[derive(Clone)]
pub struct ReadConnection {
    /// Connections to it.
    pub pool: Pool,
    /// Follows the checkpoints of the read models in it.
    pub watch: ProjectionWatch,
}

/// Which read models live apart from the log, and where. Empty: all in the log's database.
#[derive(Clone, Default)]
pub struct ReadDatabases {
    by_model: Arc<BTreeMap<String, ReadConnection>>,
    distinct: Arc<Vec<ReadConnection>>,
}

impl ReadDatabases {
    /// Connects to the databases `urls` names (read model → URL): one pool and one watch per
    /// distinct URL.
    pub fn connect(urls: &BTreeMap<String, String>) -> Result<ReadDatabases, LogError> {
        let mut by_url: BTreeMap<&str, ReadConnection> = BTreeMap::new();
        let mut by_model = BTreeMap::new();
        for (model, url) in urls {
            let connection = match by_url.get(url.as_str()) {
                Some(connection) => connection.clone(),
                None => {
                    let models = urls.values().filter(|u| *u == url).count();
                    let pool = palimpsest_log::store::pool(url, QUERY_CONNECTIONS + models)?;
                    let watch = ProjectionWatch::start(url, pool.clone())?;
                    let connection = ReadConnection { pool, watch };
                    by_url.insert(url, connection.clone());
                    connection
                }
            };
            by_model.insert(model.clone(), connection);
        }
        Ok(ReadDatabases {
            by_model: Arc::new(by_model),
            distinct: Arc::new(by_url.into_values().collect()),
        })
    }

    /// The database of read model `model`, when it is not the log's.
    pub fn of(&self, model: &str) -> Option<&ReadConnection> {
        self.by_model.get(model)
    }

    /// Where read model `model`'s projector writes: its own database, else the log's.
    pub fn for_projector(&self, model: &str, store: &EventStore) -> ReadDatabase {
        match self.of(model) {
            Some(connection) => ReadDatabase::apart(connection.pool.clone()),
            None => ReadDatabase::of_log(store),
        }
    }

    /// Every read database apart from the log's, each once (readiness looks for stalls in each).
    pub fn pools(&self) -> impl Iterator<Item = &Pool> {
        self.distinct.iter().map(|c| &c.pool)
    }
}
