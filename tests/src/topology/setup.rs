//! Bringing the whole topology up on loopback, and down again whatever happened.
//!
//! Four private Postgres servers (the log's primary and its `pg_basebackup` streaming replica,
//! the read models' primary and its replica), a three-node NATS cluster with the stream at R3,
//! two relays, three `project` processes sharing the partitions of `stream_heads` (one of them
//! fed by JetStream), two `serve` processes answering every context, HAProxy in front of them.
//! Every process gets the same environment ([`Env`]), as a deployment gives every host the same
//! flags.

use super::haproxy::HaProxy;
use super::readback::Serve;
use crate::chaos::load::Target;
use crate::chaos::processes::{Env, Proc};
use crate::postgres::connect;
use palimpsest_testkit::{NatsCluster, PgCluster, free_port};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The log's database in its cluster.
const LOG_DATABASE: &str = "palimpsest";

/// The read models' database in theirs.
const READ_DATABASE: &str = "reads";

/// Every part of the topology. Dropping it kills every process and removes every directory and
/// database it made (the Postgres clusters are private: their data directories go with them),
/// also when a case panics; [`Topology::keep_files`] keeps the process logs for a look.
pub struct Topology {
    /// The two `serve` processes, named `serve-0` and `serve-1` in HAProxy.
    pub serves: Vec<Proc>,
    /// The three `project` processes; the last is fed by JetStream.
    pub projects: Vec<Proc>,
    /// The two relays.
    pub relays: Vec<Proc>,
    /// The load balancer the load goes through.
    pub haproxy: HaProxy,
    /// The NATS cluster (stream at R3).
    pub nats: NatsCluster,
    /// The environment every process shares.
    pub env: Env,
    /// Where the load writes (HAProxy) and as whom.
    pub target: Target,
    /// How many partitions `stream_heads` is split into.
    pub partitions: u32,
    log_replica: PgCluster,
    read_replica: PgCluster,
    log: PgCluster,
    reads: PgCluster,
    files: Files,
}

/// The topology's folder (secrets, process logs, HAProxy's config), removed on drop unless kept.
struct Files {
    dir: PathBuf,
    keep: bool,
}

impl Drop for Files {
    fn drop(&mut self) {
        if self.keep {
            eprintln!("topology files kept in {}", self.dir.display());
        } else if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            eprintln!("remove {}: {e}", self.dir.display());
        }
    }
}

impl Topology {
    /// Starts everything, `stream_heads` split into `partitions`, and waits until HAProxy
    /// answers.
    pub async fn start(partitions: u32) -> Topology {
        let started = Instant::now();
        let (log, reads) = tokio::join!(PgCluster::start(), PgCluster::start());
        let (log_replica, read_replica) =
            tokio::join!(log.streaming_replica(), reads.streaming_replica());
        let nats = NatsCluster::start(3).await;
        let dir = std::env::temp_dir().join(format!(
            "palimpsest-topology-{}",
            uuid::Uuid::new_v4().simple()
        ));
        let files = Files {
            dir: dir.clone(),
            keep: false,
        };
        let env = Env {
            database_url: log.url(LOG_DATABASE),
            nats_url: nats.urls(),
            replicas: 3,
            data_dir: dir.clone(),
            extra: vec![
                (
                    "PALIMPSEST_READ_DATABASE_URLS".into(),
                    format!("all={}", reads.url(READ_DATABASE)),
                ),
                (
                    "PALIMPSEST_READ_REPLICA_URLS".into(),
                    format!("all={}", read_replica.url(READ_DATABASE)),
                ),
                (
                    "PALIMPSEST_PARTITIONS".into(),
                    format!("{}={partitions}", super::metrics::PARTITIONED),
                ),
            ],
        };
        let resources_key = env.configure().unwrap_or_else(|e| panic!("data dir: {e}"));
        // One at a time: the first creates both databases and runs the migrations.
        let mut relays = Vec::new();
        for _ in 0..2 {
            relays.push(Proc::start("relay", free_port(), &env).await);
        }
        let mut fed_by_nats = env.clone();
        fed_by_nats
            .extra
            .push(("PALIMPSEST_PROJECTOR_SOURCE".into(), "nats".into()));
        let mut projects = Vec::new();
        for i in 0..3 {
            let env = if i == 2 { &fed_by_nats } else { &env };
            projects.push(Proc::start("project", free_port(), env).await);
        }
        let mut serves = Vec::new();
        for _ in 0..2 {
            serves.push(Proc::start("serve", free_port(), &env).await);
        }
        let backends: Vec<(String, u16)> = serves
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("serve-{i}"), s.port))
            .collect();
        let haproxy = HaProxy::start(&dir, free_port(), &backends).await;
        let secret = |file: &str| {
            std::fs::read_to_string(dir.join(file))
                .map(|text| text.trim().to_owned())
                .unwrap_or_else(|e| panic!("{file}: {e}"))
        };
        let target = Target {
            base: haproxy.url(),
            admin_token: secret("admin-token"),
            pads_api_key: secret("APIKEY.txt"),
            resources_key,
        };
        println!(
            "topology up in {} ms: log {} (+ replica), reads {} (+ replica), NATS {}, HAProxy {}",
            started.elapsed().as_millis(),
            log.url(LOG_DATABASE),
            reads.url(READ_DATABASE),
            nats.urls(),
            haproxy.url()
        );
        Topology {
            serves,
            projects,
            relays,
            haproxy,
            nats,
            env,
            target,
            partitions,
            log_replica,
            read_replica,
            log,
            reads,
            files,
        }
    }

    /// The serves as the read-your-writes reader reaches them: directly, by port.
    pub fn serves_direct(&self) -> Vec<Serve> {
        self.serves
            .iter()
            .enumerate()
            .map(|(i, s)| Serve {
                name: format!("serve-{i}"),
                base: format!("http://127.0.0.1:{}", s.port),
            })
            .collect()
    }

    /// Keeps the topology's folder (process logs, HAProxy's config) when it is dropped.
    pub fn keep_files(&mut self) {
        self.files.keep = true;
    }

    /// The topology's folder.
    pub fn dir(&self) -> &std::path::Path {
        &self.files.dir
    }

    /// Transactions the read models' replica has committed in the read database (queries
    /// count): whether the serves read there at all.
    pub async fn read_replica_transactions(&self) -> i64 {
        let replica = connect(&self.read_replica.url(READ_DATABASE)).await;
        replica
            .query_one(
                "SELECT xact_commit FROM pg_stat_database WHERE datname = $1",
                &[&READ_DATABASE],
            )
            .await
            .map_or(-1, |r| r.get(0))
    }

    /// Waits (up to `within`) until the log's streaming replica has replayed the primary's
    /// head; `Err` says where each stood.
    pub async fn log_replica_caught_up(&self, within: Duration) -> Result<(), String> {
        replica_caught_up(
            &self.log.url(LOG_DATABASE),
            &self.log_replica.url(LOG_DATABASE),
            "SELECT position FROM log.head WHERE id = 1",
            within,
        )
        .await
    }

    /// Waits (up to `within`) until the read models' replica has replayed every checkpoint of
    /// the read models' primary.
    pub async fn read_replica_caught_up(&self, within: Duration) -> Result<(), String> {
        let checkpoints = "SELECT pg_current_wal_lsn()::text";
        let primary = connect(&self.reads.url(READ_DATABASE)).await;
        let lsn: String = primary
            .query_one(checkpoints, &[])
            .await
            .map_err(|e| format!("read primary: {e}"))?
            .get(0);
        let replica = connect(&self.read_replica.url(READ_DATABASE)).await;
        let started = Instant::now();
        let mut at = String::new();
        while started.elapsed() < within {
            let row = replica
                .query_one(
                    "SELECT pg_last_wal_replay_lsn() >= $1::text::pg_lsn, \
                     pg_last_wal_replay_lsn()::text",
                    &[&lsn],
                )
                .await
                .map_err(|e| format!("read replica: {e}"))?;
            if row.get::<_, Option<bool>>(0) == Some(true) {
                return Ok(());
            }
            at = row.get::<_, Option<String>>(1).unwrap_or_default();
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        Err(format!(
            "the read replica replayed up to {at}, the primary was at {lsn}"
        ))
    }
}

/// Waits until `query` (one bigint) answers on the replica what it answered on the primary.
async fn replica_caught_up(
    primary: &str,
    replica: &str,
    query: &str,
    within: Duration,
) -> Result<(), String> {
    let want: i64 = connect(primary)
        .await
        .query_one(query, &[])
        .await
        .map_err(|e| format!("log primary: {e}"))?
        .get(0);
    let replica = connect(replica).await;
    let started = Instant::now();
    let mut at = -1;
    while started.elapsed() < within {
        if let Ok(row) = replica.query_one(query, &[]).await {
            at = row.get(0);
            if at >= want {
                return Ok(());
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Err(format!(
        "the log's replica stood at {at}, the primary at {want}"
    ))
}
