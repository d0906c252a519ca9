//! This process's share of a partitioned read model's partitions.
//!
//! A lease is one connection to the read database, out of the pool for good, holding session
//! advisory locks: a *member* lock (one of [`MEMBER_SLOTS`] slots), by which every process counts
//! the processes offering to run the read model's partitions, and the lock of each partition it
//! runs. Every [`REBALANCE`] it counts the members and takes free partitions up to its fair
//! share, ⌈N ÷ members⌉, or lets go of those above it (a new process gets its share as the
//! others give theirs back). When a process dies, Postgres ends its session and its locks with
//! it: the others see the member gone and the partitions free at their next count. The
//! partition's own checkpoint, read under its transaction lock in every batch, keeps two
//! processes that briefly both think they hold it from applying an event twice.

use crate::partition::partition_name;
use crate::{ProjectionError, ReadDatabase};
use deadpool_postgres::{ClientWrapper, Object};
use std::collections::BTreeSet;
use std::time::Duration;

/// How often a process counts the members and takes or gives back partitions: a dead
/// process's partitions are taken over within about this (plus the time Postgres takes to see
/// its connection closed).
pub const REBALANCE: Duration = Duration::from_millis(500);

/// How many processes may offer to run one read model's partitions.
pub const MEMBER_SLOTS: i32 = 64;

/// The lock key's text of the members of read model `name`.
fn members_key(name: &str) -> String {
    format!("palimpsest.partition-members:{name}")
}

/// The lock key's text of the partitions of read model `name`.
fn partitions_key(name: &str) -> String {
    format!("palimpsest.partitions:{name}")
}

/// The granted session locks of one key text (`$1`) in this database: the two-key form puts
/// the text's hash in `classid` and the slot or partition in `objid`.
macro_rules! granted_locks {
    () => {
        "FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 \
         AND classid = (hashtext($1)::bigint & 4294967295)::oid \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
    };
}

/// How many locks of one key text are held.
const COUNT_SQL: &str = concat!("SELECT count(*) ", granted_locks!());

/// How many locks of one key text each session holds, largest first.
const SHARES_SQL: &str = concat!(
    "SELECT count(*) ",
    granted_locks!(),
    " GROUP BY pid ORDER BY 1 DESC"
);

/// The partitions of one read model this process runs, and the connection holding their locks.
pub struct Lease {
    name: &'static str,
    count: u32,
    client: Option<ClientWrapper>,
    held: BTreeSet<u32>,
}

impl Lease {
    /// A lease on none of the `count` partitions of read model `name` yet.
    pub fn new(name: &'static str, count: u32) -> Lease {
        Lease {
            name,
            count,
            client: None,
            held: BTreeSet::new(),
        }
    }

    /// The partitions this process holds now.
    pub fn held(&self) -> &BTreeSet<u32> {
        &self.held
    }

    /// Joins (a member slot on a connection of its own, when it has none or lost it), counts
    /// the members, and takes free partitions up to the fair share or lets go of those above
    /// it. A lost connection lost every lock with it: the lease holds nothing until it joins
    /// again.
    pub async fn rebalance(&mut self, read: &ReadDatabase) -> Result<(), ProjectionError> {
        if self.client.as_ref().is_some_and(|c| c.is_closed()) {
            tracing::warn!(
                projection = self.name,
                "the partitions' lock connection was lost; joining again"
            );
            self.client = None;
            self.held.clear();
        }
        if self.client.is_none() {
            self.client = Some(self.join(read).await?);
        }
        let result = self.share_out().await;
        if result.is_err() {
            // The locks' state is unknown: start again from nothing on a new connection.
            self.client = None;
            self.held.clear();
        }
        metrics::gauge!("palimpsest_projection_partitions_held", "projection" => self.name)
            .set(self.held.len() as f64);
        result
    }

    /// A connection of its own holding a member slot.
    async fn join(&self, read: &ReadDatabase) -> Result<ClientWrapper, ProjectionError> {
        let client = Object::take(read.pool().get().await?);
        let key = members_key(self.name);
        for slot in 0..MEMBER_SLOTS {
            let taken: bool = client
                .query_one(
                    "SELECT pg_try_advisory_lock(hashtext($1), $2)",
                    &[&key, &slot],
                )
                .await?
                .get(0);
            if taken {
                tracing::info!(projection = self.name, slot, "offering to run partitions");
                return Ok(client);
            }
        }
        Err(ProjectionError::Invalid(format!(
            "more than {MEMBER_SLOTS} processes offer to run the partitions of {}",
            self.name
        )))
    }

    /// Takes or gives back partitions towards ⌈N ÷ members⌉.
    async fn share_out(&mut self) -> Result<(), ProjectionError> {
        let Some(client) = &self.client else {
            return Ok(());
        };
        let members: i64 = client
            .query_one(COUNT_SQL, &[&members_key(self.name)])
            .await?
            .get(0);
        let members = u32::try_from(members.max(1)).unwrap_or(u32::MAX);
        let share = self.count.div_ceil(members) as usize;
        let key = partitions_key(self.name);
        while self.held.len() > share {
            let Some(&last) = self.held.iter().next_back() else {
                break;
            };
            let index = i32::try_from(last).unwrap_or(i32::MAX);
            client
                .query_one(
                    "SELECT pg_advisory_unlock(hashtext($1), $2)",
                    &[&key, &index],
                )
                .await?;
            self.held.remove(&last);
            tracing::info!(
                projection = self.name,
                partition = %partition_name(self.name, last, self.count),
                members,
                "gave a partition back"
            );
        }
        for partition in 0..self.count {
            if self.held.len() >= share {
                break;
            }
            if self.held.contains(&partition) {
                continue;
            }
            let index = i32::try_from(partition).unwrap_or(i32::MAX);
            let taken: bool = client
                .query_one(
                    "SELECT pg_try_advisory_lock(hashtext($1), $2)",
                    &[&key, &index],
                )
                .await?
                .get(0);
            if taken {
                self.held.insert(partition);
                tracing::info!(
                    projection = self.name,
                    partition = %partition_name(self.name, partition, self.count),
                    members,
                    "took a partition"
                );
            }
        }
        Ok(())
    }
}

/// How many partitions of read model `name` each process holds now (one number per process,
/// largest first), as the read database's `pg_locks` shows them: what an operator or a test
/// asks (N in all once a takeover is done; no share above ⌈N ÷ processes⌉ once rebalanced).
pub async fn shares(
    client: &impl deadpool_postgres::GenericClient,
    name: &str,
) -> Result<Vec<i64>, ProjectionError> {
    let rows = client.query(SHARES_SQL, &[&partitions_key(name)]).await?;
    Ok(rows.iter().map(|r| r.get(0)).collect())
}
