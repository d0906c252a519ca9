//! Read models on a Postgres of their own (`--read-database-url NAME=URL`), and streaming
//! replicas of it for their queries (`--read-replica-url NAME=URL`).
//!
//! By default every read model lives in the log's database, and one server carries the appends,
//! the projectors and every query. An operator may move any read model (a context's, or the
//! platform's `stream_heads`) to another database: its projector then writes rows and
//! checkpoint there (`palimpsest_projections::ReadDatabase`), its context's queries read there,
//! and its context's writes wait for the checkpoint there (the watch follows that database's
//! notifications), so read-your-writes holds as before. Read models given the same URL share
//! one pool and one watch. A read model given a replica reads through it what its requests may
//! read there ([`crate::read_pool`]).

use crate::PlatformSettings;
use crate::read_pool::{ReadPool, Replica};
use deadpool_postgres::Pool;
use palimpsest_log::{EventStore, LogError};
use palimpsest_projections::{ProjectionWatch, ReadDatabase};
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Connections a read database's pool holds for queries, besides one per projector writing
/// there (a live projector keeps its connection while it waits for the log to move).
const QUERY_CONNECTIONS: usize = 16;

/// Where one read model lives, when not (only) in the log's database: what its queries and
/// projector use, and the watch its writes wait on.
#[derive(Clone)]
pub struct ReadConnection {
    /// Connections to its read database (the log's, when only a replica was given).
    pub pool: Pool,
    /// Whether that database is apart from the log's.
    pub apart: bool,
    /// Follows the checkpoints of the read models in it.
    pub watch: ProjectionWatch,
    /// A streaming replica of it, and how its queries use it.
    replica: Option<ReplicaSettings>,
}

/// A replica's pool and the policy its queries follow.
#[derive(Clone)]
struct ReplicaSettings {
    pool: Pool,
    wait: std::time::Duration,
    checked: bool,
}

impl ReadConnection {
    /// The connections read model `name`'s queries take: the replica's when it has caught up
    /// with what the request must see, the read database's otherwise.
    pub fn queries(&self, name: &str) -> ReadPool {
        match &self.replica {
            None => ReadPool::primary(self.pool.clone()),
            Some(replica) => ReadPool::with_replica(
                self.pool.clone(),
                Replica {
                    pool: replica.pool.clone(),
                    projection: name.to_owned(),
                    wait: replica.wait,
                    checked: replica.checked,
                },
            ),
        }
    }
}

/// Which read models live apart from the log or read through a replica, and where. Empty: all
/// in the log's database.
#[derive(Clone, Default)]
pub struct ReadDatabases {
    by_model: Arc<BTreeMap<String, ReadConnection>>,
    apart: Arc<Vec<Pool>>,
}

impl ReadDatabases {
    /// Connects to the databases and replicas `platform` names (read model → URL): one pool
    /// and one watch per distinct database, one pool per distinct replica. A read model given
    /// only a replica keeps `log_read` and `log_watch` (the log's database) as its primary.
    pub fn connect(
        platform: &PlatformSettings,
        log_read: &Pool,
        log_watch: &ProjectionWatch,
    ) -> Result<ReadDatabases, LogError> {
        let urls = &platform.read_databases;
        let mut databases: BTreeMap<&str, (Pool, ProjectionWatch)> = BTreeMap::new();
        for url in urls.values() {
            if let Entry::Vacant(slot) = databases.entry(url) {
                let models = urls.values().filter(|u| *u == url).count();
                let pool = palimpsest_log::store::pool(url, QUERY_CONNECTIONS + models)?;
                let watch = ProjectionWatch::start(url, pool.clone())?
                    .with_partitions(platform.partition_counts());
                slot.insert((pool, watch));
            }
        }
        let mut replicas: BTreeMap<&str, Pool> = BTreeMap::new();
        for url in platform.read_replicas.values() {
            if let Entry::Vacant(slot) = replicas.entry(url) {
                slot.insert(palimpsest_log::store::pool(url, QUERY_CONNECTIONS)?);
            }
        }
        let models: BTreeSet<&String> = urls.keys().chain(platform.read_replicas.keys()).collect();
        let mut by_model = BTreeMap::new();
        for model in models {
            let (pool, watch, apart) = match urls.get(model) {
                Some(url) => {
                    let (pool, watch) = &databases[url.as_str()];
                    (pool.clone(), watch.clone(), true)
                }
                None => (log_read.clone(), log_watch.clone(), false),
            };
            let replica = platform
                .read_replicas
                .get(model)
                .map(|url| ReplicaSettings {
                    pool: replicas[url.as_str()].clone(),
                    wait: platform.replica_wait,
                    checked: !platform.replica_unchecked,
                });
            let connection = ReadConnection {
                pool,
                apart,
                watch,
                replica,
            };
            by_model.insert(model.clone(), connection);
        }
        Ok(ReadDatabases {
            by_model: Arc::new(by_model),
            apart: Arc::new(databases.into_values().map(|(pool, _)| pool).collect()),
        })
    }

    /// Where read model `model` lives, when not only in the log's database.
    pub fn of(&self, model: &str) -> Option<&ReadConnection> {
        self.by_model.get(model)
    }

    /// Where read model `model`'s projector writes: its own database, else the log's.
    pub fn for_projector(&self, model: &str, store: &EventStore) -> ReadDatabase {
        match self.of(model) {
            Some(connection) if connection.apart => ReadDatabase::apart(connection.pool.clone()),
            _ => ReadDatabase::of_log(store),
        }
    }

    /// Every read database apart from the log's, each once (readiness looks for stalls in each).
    pub fn pools(&self) -> impl Iterator<Item = &Pool> {
        self.apart.iter()
    }
}
