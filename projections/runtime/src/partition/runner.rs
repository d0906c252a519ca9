//! The live runner of a partitioned read model: the partitions this process holds, each
//! applied after its own checkpoint.
//!
//! A partition's batch: `BEGIN`; in one round trip the asynchronous commit mode, the read
//! model's lock *shared* (partitions run side by side; a rebuild's swap, which takes it
//! exclusively, waits for them), the partition's own lock and its checkpoint; the events after
//! the checkpoint read from the log; the partition's own events applied, the checkpoint moved
//! past them all and announced; `COMMIT` once they are on disk. A run of other partitions'
//! events alone is passed over without a commit (this process's waiters are told at once); the
//! checkpoint is committed past them with the partition's next event, or once the oldest has
//! waited [`COMMIT_AFTER`] or [`COMMIT_AT`] were passed over, as a one-context read model does
//! with other contexts' events ([`crate::passed_over`]).

use super::lease::{Lease, REBALANCE};
use super::{ensure_partitions, partition_name, partition_of};
use crate::passed_over::{COMMIT_AFTER, COMMIT_AT};
use crate::runner::{BATCH, LOCK_SQL, MAX_BACKOFF, STALL_RETRY, on_disk, record_batch};
use crate::stall::{self, Stall};
use crate::{PROJECTION_CHANNEL, Projection, ProjectionError, ProjectionWatch, ReadDatabase};
use palimpsest_events::RecordedEvent;
use palimpsest_log::EventStore;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_postgres::types::ToSql;
use tokio_util::sync::CancellationToken;

/// Takes the read model's lock shared (`$1`: its name): partitions apply side by side, and a
/// rebuild's swap, which takes it exclusively, waits for their batches.
const SHARED_LOCK_SQL: &str =
    "SELECT pg_advisory_xact_lock_shared(hashtext('palimpsest.projection:' || $1))";

/// What every partition of the read model in this process shares.
struct Shared {
    store: EventStore,
    read: ReadDatabase,
    projection: Arc<dyn Projection>,
    count: u32,
    watch: Option<ProjectionWatch>,
}

/// Starts a task that runs, until `shutdown`, the partitions of `projection` (split into
/// `count`) this process's [`Lease`] holds: the read model is made sure of first
/// ([`ensure_partitions`]); the lease is rebalanced every [`REBALANCE`]; each partition held is
/// followed by a task of its own (one partition waiting on a lock or a slow batch holds up no
/// other), stopped when the lease lets it go. `watch` is told of each partition's progress.
pub fn spawn_partitioned_runner(
    store: EventStore,
    read: ReadDatabase,
    projection: Arc<dyn Projection>,
    count: u32,
    watch: Option<ProjectionWatch>,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let shared = Arc::new(Shared {
            store,
            read,
            projection,
            count,
            watch,
        });
        if !shared.ensure_until_ready(&shutdown).await {
            return;
        }
        let name = shared.projection.name();
        let mut lease = Lease::new(name, count);
        let mut running: BTreeMap<u32, CancellationToken> = BTreeMap::new();
        let mut tick = tokio::time::interval(REBALANCE);
        loop {
            tokio::select! {
                _ = tick.tick() => {}
                _ = shutdown.cancelled() => break,
            }
            if let Err(e) = lease.rebalance(&shared.read).await {
                tracing::warn!(projection = name, error = %e, "cannot share out partitions");
            }
            running.retain(|index, stop| {
                let held = lease.held().contains(index);
                if !held {
                    stop.cancel();
                }
                held
            });
            for &index in lease.held() {
                running.entry(index).or_insert_with(|| {
                    let stop = shutdown.child_token();
                    tokio::spawn(follow(shared.clone(), index, stop.clone()));
                    stop
                });
            }
        }
    })
}

/// Applies partition `index` as the log moves, until `stop`.
async fn follow(shared: Arc<Shared>, index: u32, stop: CancellationToken) {
    let mut partition = Partition::new(shared.projection.name(), index, shared.count);
    let mut head = shared.store.head().subscribe();
    while !stop.is_cancelled() {
        if partition.step(&shared).await {
            continue;
        }
        let idle = if partition.passed.is_some() {
            COMMIT_AFTER
        } else {
            IDLE
        };
        let idle = partition.resting_until.map_or(idle, |until| {
            until.saturating_duration_since(Instant::now()).min(idle)
        });
        tokio::select! {
            _ = head.changed() => {}
            _ = tokio::time::sleep(idle) => {}
            _ = stop.cancelled() => {}
        }
    }
}

/// How long an idle partition waits for the log to move before it looks again anyway.
const IDLE: Duration = Duration::from_secs(1);

impl Shared {
    /// Makes sure of the read model's partitions, trying again after a failure; false when
    /// `shutdown` came first.
    async fn ensure_until_ready(&self, shutdown: &CancellationToken) -> bool {
        let projection = self.projection.as_ref();
        loop {
            match ensure_partitions(&self.store, &self.read, projection, self.count).await {
                Ok(()) => return true,
                Err(e) => tracing::error!(
                    projection = projection.name(),
                    error = %e,
                    "cannot set up the partitioned read model"
                ),
            }
            tokio::select! {
                _ = tokio::time::sleep(MAX_BACKOFF) => {}
                _ = shutdown.cancelled() => return false,
            }
        }
    }
}

/// Where one partition this process holds stands.
struct Partition {
    index: u32,
    /// Its checkpoint row's name.
    name: String,
    /// Where this process last committed its checkpoint.
    committed: Option<i64>,
    /// Other partitions' events passed over past `committed`, not committed yet: up to where,
    /// since when, how many.
    passed: Option<(i64, Instant)>,
    /// Own events still to apply one at a time, looking for the one that failed a batch.
    narrowing: usize,
    stalled: Option<Stall>,
    /// Not tried again before then (the database away, or stopped on an event).
    resting_until: Option<Instant>,
    backoff: Duration,
}

/// What a partition's next batch is: the events after where it stands, and which are its own.
struct Batch {
    /// The committed checkpoint it starts from.
    checkpoint: i64,
    /// Where the batch ends: the last event read, or the one event tried alone.
    to: i64,
    /// The partition's own events up to `to`.
    own: Vec<RecordedEvent>,
}

impl Partition {
    fn new(name: &str, index: u32, count: u32) -> Partition {
        Partition {
            index,
            name: partition_name(name, index, count),
            committed: None,
            passed: None,
            narrowing: 0,
            stalled: None,
            resting_until: None,
            backoff: Duration::from_millis(50),
        }
    }

    /// Applies (or passes over) what follows the partition's checkpoint; whether it moved.
    #[tracing::instrument(skip_all, fields(partition = %self.name))]
    async fn step(&mut self, shared: &Shared) -> bool {
        if self.resting_until.is_some_and(|t| Instant::now() < t) {
            return false;
        }
        self.resting_until = None;
        match self.try_step(shared).await {
            Ok(moved) => {
                if moved {
                    self.backoff = Duration::from_millis(50);
                }
                moved
            }
            Err(e) => {
                self.failed(shared, e).await;
                false
            }
        }
    }

    async fn try_step(&mut self, shared: &Shared) -> Result<bool, ProjectionError> {
        let schema = shared.projection.name();
        let mut client = shared.read.pool().get().await?;
        let tx = client.transaction().await?;
        let Some(checkpoint) = self.locked_checkpoint(&tx, schema).await? else {
            // A rebuild swapped in a read model without this partition's row.
            drop(tx);
            ensure_partitions(
                &shared.store,
                &shared.read,
                shared.projection.as_ref(),
                shared.count,
            )
            .await?;
            return Ok(true);
        };
        let Some(batch) = self.next_batch(shared, checkpoint).await? else {
            return Ok(false);
        };
        if batch.own.is_empty() && !self.due(batch.checkpoint, batch.to) {
            self.passed = Some((batch.to, self.passed.map_or_else(Instant::now, |p| p.1)));
            self.tell(shared, batch.to);
            return Ok(true);
        }
        let to = batch.to;
        let notify = tx.prepare_cached("SELECT pg_notify($1, $2)").await?;
        let write = tx
            .prepare_cached(&format!(
                "UPDATE {schema}.projection_checkpoint SET position = $2, updated_at = now(), \
                 stalled = NULL WHERE name = $1"
            ))
            .await?;
        let note = format!("{}:{to}", self.name);
        let write_params: [&(dyn ToSql + Sync); 2] = [&self.name, &to];
        let notify_params: [&(dyn ToSql + Sync); 2] = [&PROJECTION_CHANNEL, &note];
        let apply = async {
            if batch.own.is_empty() {
                return Ok(());
            }
            shared.projection.apply_batch(&tx, schema, &batch.own).await
        };
        tokio::try_join!(
            apply,
            async { Ok(tx.execute(&write, &write_params).await?) },
            async { Ok(tx.execute(&notify, &notify_params).await?) },
            on_disk(&shared.store, to, false),
        )?;
        tx.commit().await?;
        self.committed = Some(to);
        self.passed = None;
        self.narrowing = self.narrowing.saturating_sub(batch.own.len());
        stall::resumed(&self.name, self.stalled.take());
        self.tell(shared, to);
        // A commit past other partitions' events alone is as fresh as now.
        let at = batch
            .own
            .last()
            .map_or_else(chrono::Utc::now, |e| e.recorded_at);
        let lag = shared.store.head().current() - to;
        record_batch(self.name.clone(), batch.own.len(), to, at, lag);
        Ok(true)
    }

    /// Sends the commit mode and takes the read model's lock shared and the partition's own,
    /// and reads its checkpoint: one round trip. `None` when the partition has no row.
    async fn locked_checkpoint(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        schema: &str,
    ) -> Result<Option<i64>, ProjectionError> {
        let shared_lock = tx.prepare_cached(SHARED_LOCK_SQL).await?;
        let lock = tx.prepare_cached(LOCK_SQL).await?;
        let read = tx
            .prepare_cached(&format!(
                "SELECT position FROM {schema}.projection_checkpoint WHERE name = $1"
            ))
            .await?;
        let schema_params: [&(dyn ToSql + Sync); 1] = [&schema];
        let partition_params: [&(dyn ToSql + Sync); 1] = [&self.name];
        let (_, _, _, row) = tokio::try_join!(
            tx.batch_execute("SET LOCAL synchronous_commit = off"),
            tx.execute(&shared_lock, &schema_params),
            tx.execute(&lock, &partition_params),
            tx.query_opt(&read, &partition_params),
        )?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The events after where the partition stands (its checkpoint, or past what it passed
    /// over when nobody moved the checkpoint since), and its own among them; `None` when there
    /// is nothing to apply, pass over or commit.
    async fn next_batch(
        &mut self,
        shared: &Shared,
        checkpoint: i64,
    ) -> Result<Option<Batch>, ProjectionError> {
        if self.committed != Some(checkpoint) {
            // Another process moved it (or this one just took the partition).
            self.passed = None;
            self.committed = Some(checkpoint);
        }
        let from = self.passed.map_or(checkpoint, |p| p.0);
        let events = shared.store.read_all(from, BATCH).await?;
        let Some(last) = events.last() else {
            return Ok(self
                .passed
                .filter(|_| self.due(checkpoint, from))
                .map(|_| Batch {
                    checkpoint,
                    to: from,
                    own: Vec::new(),
                }));
        };
        let mut to = last.position;
        let mut own: Vec<RecordedEvent> = events
            .iter()
            .filter(|e| partition_of(&e.stream, shared.count) == self.index)
            .cloned()
            .collect();
        if self.narrowing > 0 || self.stalled.is_some() {
            own.truncate(1);
            if let Some(first) = own.first() {
                to = first.position;
            }
        }
        Ok(Some(Batch {
            checkpoint,
            to,
            own,
        }))
    }

    /// Whether the checkpoint must be committed past other partitions' events now.
    fn due(&self, checkpoint: i64, to: i64) -> bool {
        to - checkpoint >= COMMIT_AT || self.passed.is_some_and(|p| p.1.elapsed() >= COMMIT_AFTER)
    }

    /// Tells this process's waiters where the partition stands.
    fn tell(&self, shared: &Shared, position: i64) {
        if let Some(watch) = &shared.watch {
            watch.applied(&self.name, position);
        }
    }

    /// After a failed batch: rest and retry when the database was away; apply one event at a
    /// time to find the failing one; stop on it, loudly, once found.
    async fn failed(&mut self, shared: &Shared, error: ProjectionError) {
        let label = self.name.clone();
        metrics::counter!("palimpsest_projection_errors_total", "projection" => label).increment(1);
        if error.is_transient() {
            tracing::warn!(partition = %self.name, error = %error, "database unavailable; retrying");
            self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
            self.resting_until = Some(Instant::now() + self.backoff);
            return;
        }
        if self.narrowing == 0 && self.stalled.is_none() {
            tracing::warn!(
                partition = %self.name,
                error = %error,
                "batch failed; applying its events one at a time to find the one that fails"
            );
            self.narrowing = BATCH as usize;
            return;
        }
        self.resting_until = Some(Instant::now() + STALL_RETRY);
        match self.first_own_event(shared).await {
            Ok(Some(event)) => {
                let stall = Stall::at(&self.name, &event, &error);
                let lag = shared.store.head().current() - event.position + 1;
                stall::announce(&shared.read, &stall, lag, self.stalled.as_ref()).await;
                self.stalled = Some(stall);
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(partition = %self.name, error = %e, "cannot read the failing event")
            }
        }
    }

    /// The partition's first event after its committed checkpoint (within a batch's reach).
    async fn first_own_event(
        &self,
        shared: &Shared,
    ) -> Result<Option<RecordedEvent>, ProjectionError> {
        let schema = shared.projection.name();
        let client = shared.read.pool().get().await?;
        let checkpoint: i64 = client
            .query_one(
                &format!("SELECT position FROM {schema}.projection_checkpoint WHERE name = $1"),
                &[&self.name],
            )
            .await?
            .get(0);
        drop(client);
        let events = shared.store.read_all(checkpoint, BATCH).await?;
        Ok(events
            .into_iter()
            .find(|e| partition_of(&e.stream, shared.count) == self.index))
    }
}
