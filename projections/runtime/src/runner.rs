//! Running a projection live: catch up from the log, then follow it.

use crate::held::HELD_WAIT;
use crate::partition;
use crate::passed_over::PassedOver;
use crate::stall::{self, Stall};
use crate::{
    PROJECTION_CHANNEL, Projection, ProjectionError, ProjectionWatch, ReadDatabase, checkpoint,
    rebuild_in,
};
use deadpool_postgres::GenericClient;
use palimpsest_events::RecordedEvent;
use palimpsest_log::EventStore;
use palimpsest_log::rows::{COLUMNS, to_events};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_postgres::types::ToSql;
use tokio_util::sync::CancellationToken;

/// Most events one live batch applies.
pub(crate) const BATCH: i64 = 500;

/// Makes sure the projection's schema, tables and checkpoint exist at the projection's version,
/// in the log's own database ([`ensure_in`]).
pub async fn ensure(
    store: &EventStore,
    projection: &dyn Projection,
) -> Result<(), ProjectionError> {
    ensure_in(store, &ReadDatabase::of_log(store), projection).await
}

/// Makes sure the projection's schema, tables and checkpoint exist in `read` at the
/// projection's version, fed by this log; a read model left by an older version is rebuilt
/// from the log and swapped in. It is applied by one runner: one left split into partitions is
/// rebuilt too ([`crate::partition`]).
pub async fn ensure_in(
    store: &EventStore,
    read: &ReadDatabase,
    projection: &dyn Projection,
) -> Result<(), ProjectionError> {
    ensure_shaped(store, read, projection, None).await
}

/// [`ensure_in`] for a read model applied by one runner (`partitions` `None`) or split into
/// that many partitions, each with its checkpoint row: a read model of an older version, or
/// split otherwise, is rebuilt first.
pub(crate) async fn ensure_shaped(
    store: &EventStore,
    read: &ReadDatabase,
    projection: &dyn Projection,
    partitions: Option<u32>,
) -> Result<(), ProjectionError> {
    let name = projection.name();
    let stale = {
        let mut client = read.pool().get().await?;
        let tx = client.transaction().await?;
        checkpoint::lock(&tx, name).await?;
        let exists: bool = tx
            .query_one(
                "SELECT to_regclass($1) IS NOT NULL",
                &[&format!("{name}.projection_checkpoint")],
            )
            .await?
            .get(0);
        if !exists {
            tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS {name}"))
                .await?;
            projection.create_tables(&tx, name).await?;
            checkpoint::create(&tx, name, name, projection.version()).await?;
            checkpoint::claim(&tx, name, name, store.log_id()).await?;
            if let Some(count) = partitions {
                partition::add_checkpoints(&tx, name, count).await?;
            }
            tx.commit().await?;
            false
        } else {
            checkpoint::upgrade(&tx, name).await?;
            checkpoint::claim(&tx, name, name, store.log_id()).await?;
            let (_, version) = checkpoint::read(&tx, name, name).await?;
            let split = partition::existing_checkpoints(&tx, name).await?;
            let stale = version != projection.version()
                || !partition::split_as_wanted(name, &split, partitions);
            if let (false, Some(count)) = (stale, partitions) {
                partition::add_checkpoints(&tx, name, count).await?;
            }
            tx.commit().await?;
            stale
        }
    };
    if stale {
        tracing::info!(
            projection = name,
            partitions,
            "read model is of an older version or split otherwise; rebuilding"
        );
        rebuild_in(store, read, projection, |_, _| {}).await?;
        if let Some(count) = partitions {
            let mut client = read.pool().get().await?;
            let tx = client.transaction().await?;
            checkpoint::lock(&tx, name).await?;
            partition::add_checkpoints(&tx, name, count).await?;
            tx.commit().await?;
        }
    }
    Ok(())
}

/// Applies the next batch of events after the checkpoint, in one transaction with the checkpoint.
/// Returns how many events were applied (0 when caught up).
///
/// `BEGIN`; the projection's lock pipelined with the read of the events after the checkpoint;
/// the projection's writes pipelined with the checkpoint and the notification (all in the one
/// transaction, so their order inside it does not matter: they commit together or not at all,
/// and the notification is only delivered at the commit); `COMMIT`. Four round trips a batch;
/// the live runner begins its transaction before it waits for the log to move, so the three
/// after it are what a write reading its own writes waits for.
pub async fn apply_next_batch(
    store: &EventStore,
    projection: &dyn Projection,
    limit: i64,
) -> Result<usize, ProjectionError> {
    let read = ReadDatabase::of_log(store);
    Ok(
        apply_when_ready(store, &read, projection, limit, async { true })
            .await?
            .map_or(0, |batch| batch.events),
    )
}

/// A batch a projector committed.
pub(crate) struct Committed {
    /// How many events it applied.
    pub(crate) events: usize,
    /// The checkpoint it committed: the position of its last event.
    pub(crate) position: i64,
}

/// [`apply_next_batch`] in a transaction begun before `ready` (the wait for new events) ends:
/// the `BEGIN` is off the path of the writes waiting for this projection. An idle transaction
/// holds no lock and no snapshot until its first statement. `None` when caught up, or when
/// `ready` says not to go on (shutting down).
async fn apply_when_ready(
    store: &EventStore,
    read: &ReadDatabase,
    projection: &dyn Projection,
    limit: i64,
    ready: impl std::future::Future<Output = bool>,
) -> Result<Option<Committed>, ProjectionError> {
    let mut client = read.pool().get().await?;
    let tx = client.transaction().await?;
    if !ready.await {
        return Ok(None);
    }
    apply_in(store, read, tx, projection, limit).await
}

/// The batch's work in `tx`, begun: lock, read, write, commit.
#[tracing::instrument(skip_all, fields(projection = projection.name()))]
async fn apply_in(
    store: &EventStore,
    read: &ReadDatabase,
    tx: deadpool_postgres::Transaction<'_>,
    projection: &dyn Projection,
    limit: i64,
) -> Result<Option<Committed>, ProjectionError> {
    let events = read_locked(store, read, &tx, OPENING, projection.name(), limit).await?;
    commit_and_record(store, tx, projection, &events, false).await
}

/// What a live batch's transaction sends first: it commits without waiting for its own flush
/// (see [`read_locked`]).
pub(crate) const OPENING: &str = "SET LOCAL synchronous_commit = off";

/// Applies `events` in `tx`, which holds the lock and read the checkpoint just before them,
/// commits once they are on disk ([`on_disk`]; `appended_here`: this process appended them),
/// and shows the batch in the metrics. `None` (the transaction rolled back) when there are none.
pub(crate) async fn commit_and_record(
    store: &EventStore,
    tx: deadpool_postgres::Transaction<'_>,
    projection: &dyn Projection,
    events: &[RecordedEvent],
    appended_here: bool,
) -> Result<Option<Committed>, ProjectionError> {
    let Some(last) = events.last() else {
        return Ok(None);
    };
    let (last_position, last_time) = (last.position, last.recorded_at);
    let durable = on_disk(store, last_position, appended_here);
    commit_batch(tx, projection, events, durable).await?;
    let lag = store.head().current() - last_position;
    record_batch(
        projection.name(),
        events.len(),
        last_position,
        last_time,
        lag,
    );
    Ok(Some(Committed {
        events: events.len(),
        position: last_position,
    }))
}

/// Applies `events` in `tx` (which holds the projection's lock and read its checkpoint), moves
/// the checkpoint to the last of them, announces it, and commits once `durable` (the wait for
/// the events to be on disk in the log) has answered: the rows, the checkpoint and the
/// notification commit together or not at all.
pub(crate) async fn commit_batch(
    tx: deadpool_postgres::Transaction<'_>,
    projection: &dyn Projection,
    events: &[RecordedEvent],
    durable: impl std::future::Future<Output = Result<(), ProjectionError>>,
) -> Result<(), ProjectionError> {
    let name = projection.name();
    let Some(last) = events.last() else {
        return Ok(());
    };
    let last_position = last.position;
    let write = tx
        .prepare_cached(&format!(
            "UPDATE {name}.projection_checkpoint SET position = $2, updated_at = now(), \
             stalled = NULL WHERE name = $1"
        ))
        .await?;
    let notify = tx.prepare_cached("SELECT pg_notify($1, $2)").await?;
    let note = format!("{name}:{last_position}");
    let write_params: [&(dyn ToSql + Sync); 2] = [&name, &last_position];
    let notify_params: [&(dyn ToSql + Sync); 2] = [&PROJECTION_CHANNEL, &note];
    tokio::try_join!(
        projection.apply_batch(&tx, name, events),
        async {
            tx.execute(&write, &write_params)
                .await
                .map_err(ProjectionError::from)
        },
        async {
            tx.execute(&notify, &notify_params)
                .await
                .map_err(ProjectionError::from)
        },
        durable,
    )?;
    tx.commit().await?;
    Ok(())
}

/// Sends `opening` (what the transaction needs first: at least the asynchronous commit mode),
/// takes projection `name`'s lock and reads up to `limit` events after its checkpoint: in one
/// round trip in the log's own database; apart, the checkpoint in that round trip and the
/// events after it from the log in a second. The batch commits without waiting for its own
/// flush: its checkpoint commits with its rows, so a crash loses both together and they are
/// applied again from the log, and [`on_disk`] keeps any row from being seen before its event
/// is durable.
pub(crate) async fn read_locked<C: GenericClient>(
    store: &EventStore,
    read: &ReadDatabase,
    tx: &C,
    opening: &str,
    name: &str,
    limit: i64,
) -> Result<Vec<RecordedEvent>, ProjectionError> {
    if read.is_apart() {
        let position = checkpoint_locked(tx, opening, name).await?;
        return Ok(store.read_all(position, limit).await?);
    }
    let lock = tx.prepare_cached(LOCK_SQL).await?;
    let read = tx.prepare_cached(&read_sql(name)).await?;
    let lock_params: [&(dyn ToSql + Sync); 1] = [&name];
    let read_params: [&(dyn ToSql + Sync); 2] = [&name, &limit];
    let (_, _, rows) = tokio::try_join!(
        tx.batch_execute(opening),
        tx.execute(&lock, &lock_params),
        tx.query(&read, &read_params)
    )?;
    Ok(to_events(&rows)?)
}

/// Sends `opening`, takes projection `name`'s lock and reads its checkpoint, in one round trip.
pub(crate) async fn checkpoint_locked<C: GenericClient>(
    tx: &C,
    opening: &str,
    name: &str,
) -> Result<i64, ProjectionError> {
    let lock = tx.prepare_cached(LOCK_SQL).await?;
    let read = tx
        .prepare_cached(&format!(
            "SELECT position FROM {name}.projection_checkpoint WHERE name = $1"
        ))
        .await?;
    let params: [&(dyn ToSql + Sync); 1] = [&name];
    let (_, _, row) = tokio::try_join!(
        tx.batch_execute(opening),
        tx.execute(&lock, &params),
        tx.query_one(&read, &params)
    )?;
    Ok(row.get(0))
}

/// Takes a projection's transaction lock (`$1`: its name): one writer of its schema at a time.
pub(crate) const LOCK_SQL: &str =
    "SELECT pg_advisory_xact_lock(hashtext('palimpsest.projection:' || $1))";

/// Reads the events after the checkpoint of projection `name` (`$1`: its name, `$2`: how many).
pub(crate) fn read_sql(name: &str) -> String {
    format!(
        "SELECT {COLUMNS} FROM log.events WHERE position > \
         (SELECT position FROM {name}.projection_checkpoint WHERE name = $1) \
         ORDER BY position LIMIT $2"
    )
}

/// Shows a committed batch in the projection's metrics (labelled with the read model's name, or
/// a partition's): its position, its lag (`lag` events still to apply after it), its events.
pub(crate) fn record_batch(
    name: impl Into<metrics::SharedString>,
    events: usize,
    last_position: i64,
    last_time: chrono::DateTime<chrono::Utc>,
    lag: i64,
) {
    let name: metrics::SharedString = name.into();
    let lag = lag.max(0);
    metrics::gauge!("palimpsest_projection_position", "projection" => name.clone())
        .set(last_position as f64);
    metrics::gauge!("palimpsest_projection_lag_events", "projection" => name.clone())
        .set(lag as f64);
    let age = (chrono::Utc::now() - last_time).num_milliseconds().max(0) as f64 / 1000.0;
    metrics::gauge!("palimpsest_projection_lag_seconds", "projection" => name.clone())
        .set(if lag > 0 { age } else { 0.0 });
    metrics::counter!("palimpsest_projection_events_total", "projection" => name)
        .increment(events as u64);
}

/// Returns once the events up to `position` are on disk, so that rows made of them never become
/// visible before the events themselves are durable (a crash could take back an event whose
/// batch deferred its flush, and a projection commits asynchronously). At once when this
/// process's log knows it (its appender flushed them). Otherwise by one flush of its own, except
/// for events this process appended (`appended_here`, known when they were taken from memory):
/// their durability commit is under way, and the runner waits for it (within
/// [`DURABLE_WAIT`], then flushes) instead of adding an fsync to it.
pub(crate) async fn on_disk(
    store: &EventStore,
    position: i64,
    appended_here: bool,
) -> Result<(), ProjectionError> {
    if store.durable().current() >= position
        || (appended_here && store.durable().reached(position, DURABLE_WAIT).await)
    {
        return Ok(());
    }
    store.wait_durable().await?;
    Ok(())
}

/// How long a runner waits for its process's appender to make its own events durable before it
/// flushes them itself: longer than a durability commit takes under load, and only for events
/// of this process (another process's events have no durability commit here to wait for).
const DURABLE_WAIT: Duration = Duration::from_millis(20);

/// The longest wait between tries while the database is away: a projector resumes within this
/// of Postgres accepting connections again.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_millis(250);

/// How often a stopped projector tries its event again (a fixed database may take it).
pub(crate) const STALL_RETRY: Duration = Duration::from_secs(5);

/// Starts a task that ensures the projection, catches it up and follows the log until
/// `shutdown`. A failure of the database is retried with a short backoff (the failed batch left
/// no trace); an event the projection cannot apply stops it there, loudly ([`crate::stall`]).
///
/// `watch`, this process's [`ProjectionWatch`], is told of each batch as soon as it commits:
/// the writes of this process waiting for it answer without the hop through Postgres'
/// `NOTIFY` (which still tells every other process).
pub fn spawn_runner(
    store: EventStore,
    projection: Arc<dyn Projection>,
    watch: Option<ProjectionWatch>,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    let read = ReadDatabase::of_log(&store);
    spawn_runner_in(store, read, projection, watch, shutdown)
}

/// [`spawn_runner`] writing into `read`; `watch` follows that database.
pub fn spawn_runner_in(
    store: EventStore,
    read: ReadDatabase,
    projection: Arc<dyn Projection>,
    watch: Option<ProjectionWatch>,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        if !ensure_until_ready(&store, &read, projection.as_ref(), &shutdown).await {
            return;
        }
        let name = projection.name();
        let mut passed = PassedOver::new(name, projection.context(), store.clone(), watch.clone());
        let mut runner = Runner {
            store: store.clone(),
            read,
            projection,
            watch,
            checkpoint: None,
            narrowing: 0,
            stalled: None,
            backoff: Duration::from_millis(50),
            last_batch: None,
        };
        let mut head = store.head().subscribe();
        let mut next = Next::Now;
        while !shutdown.is_cancelled() {
            // Waiting for the log to move happens inside the next batch's transaction (its
            // `BEGIN` already answered); waiting out a failure happens outside any.
            let after_head = matches!(next, Next::AfterHead);
            if let Next::After(wait) = next {
                tokio::select! {
                    _ = tokio::time::sleep(wait) => {}
                    _ = shutdown.cancelled() => return,
                }
            }
            // Other contexts' events are passed over while waiting (`passed_over.rs`). A runner
            // holding its next batch's lock while it waits (`held.rs`) holds it idle no longer
            // than `HELD_WAIT`.
            let (checkpoint, may_pass) = (runner.checkpoint, !runner.one_by_one());
            let held_until = runner
                .holds_lock_while_waiting()
                .then(|| tokio::time::Instant::now() + HELD_WAIT);
            let passing = &mut passed;
            let ready = async {
                if !after_head {
                    return true;
                }
                loop {
                    let idle = tokio::time::Instant::now() + passing.idle_wait(IDLE);
                    let until = held_until.map_or(idle, |held| held.min(idle));
                    tokio::select! {
                        _ = head.changed() => {}
                        _ = tokio::time::sleep_until(until) => return true,
                        _ = shutdown.cancelled() => return false,
                    }
                    if !(may_pass && passing.pass(checkpoint)) {
                        return true;
                    }
                }
            };
            next = runner.step(ready, held_until.is_some()).await;
            passed.committed(runner.checkpoint);
        }
    })
}

/// How long an idle runner waits for the log to move before it looks again anyway.
const IDLE: Duration = Duration::from_secs(1);

/// Ensures the projection ([`ensure_in`]), trying again after a failure (soon when the
/// database was away, seldom when a rebuild stopped on an event); false when `shutdown` came
/// first.
pub(crate) async fn ensure_until_ready(
    store: &EventStore,
    read: &ReadDatabase,
    projection: &dyn Projection,
    shutdown: &CancellationToken,
) -> bool {
    let mut backoff = Duration::from_millis(50);
    while let Err(e) = ensure_in(store, read, projection).await {
        tracing::error!(projection = projection.name(), error = %e, "cannot set up read model");
        // A rebuild that stops on an event will stop there again: try it seldom.
        let wait = if e.is_transient() {
            backoff = (backoff * 2).min(MAX_BACKOFF);
            backoff
        } else {
            STALL_RETRY
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = shutdown.cancelled() => return false,
        }
    }
    true
}

/// When the runner tries again.
enum Next {
    Now,
    AfterHead,
    After(Duration),
}

/// A live projector between batches.
struct Runner {
    store: EventStore,
    /// Where its rows and checkpoint are.
    read: ReadDatabase,
    projection: Arc<dyn Projection>,
    /// This process's waiters, told of each commit.
    watch: Option<ProjectionWatch>,
    /// Where this runner last left the checkpoint: a planned batch takes the events after it
    /// from memory ([`crate::planned`]).
    checkpoint: Option<i64>,
    /// Events still to apply one at a time, looking for the one that failed a batch.
    narrowing: usize,
    /// The event it is stopped on, if any.
    stalled: Option<Stall>,
    backoff: Duration,
    /// When it last committed a batch of events.
    last_batch: Option<std::time::Instant>,
}

impl Runner {
    /// Whether it applies one event at a time (looking for the one that failed a batch, or
    /// stopped on it).
    fn one_by_one(&self) -> bool {
        self.narrowing > 0 || self.stalled.is_some()
    }

    /// Whether its next batch takes the lock before it waits ([`crate::held`]): a runner
    /// that applies its events batch by batch (not planned, not looking for a failing one)
    /// and committed one within [`HELD_WAIT`].
    fn holds_lock_while_waiting(&self) -> bool {
        self.projection.plan().is_none()
            && !self.one_by_one()
            && self.last_batch.is_some_and(|t| t.elapsed() < HELD_WAIT)
    }

    /// Applies the next batch once `ready` (see [`apply_when_ready`]; `held`: with the lock
    /// taken before the wait, [`crate::held`]); when to try again.
    async fn step(&mut self, ready: impl std::future::Future<Output = bool>, held: bool) -> Next {
        let name = self.projection.name();
        let one_by_one = self.one_by_one();
        let limit = if one_by_one { 1 } else { BATCH };
        let applied = match self.projection.plan() {
            Some(plan) => {
                if !ready.await {
                    return Next::AfterHead;
                }
                // One at a time, the failing event is read from the log, not taken from memory.
                let checkpoint = self.checkpoint.filter(|_| !one_by_one);
                crate::planned::apply(&self.store, &self.read, name, plan, checkpoint, limit).await
            }
            None if held => {
                let projection = self.projection.as_ref();
                crate::held::apply_when_ready(&self.store, &self.read, projection, limit, ready)
                    .await
            }
            None => {
                let projection = self.projection.as_ref();
                apply_when_ready(&self.store, &self.read, projection, limit, ready).await
            }
        };
        match applied {
            Ok(None) => {
                self.narrowing = 0;
                metrics::gauge!("palimpsest_projection_lag_events", "projection" => name).set(0.0);
                metrics::gauge!("palimpsest_projection_lag_seconds", "projection" => name).set(0.0);
                Next::AfterHead
            }
            Ok(Some(batch)) => {
                self.checkpoint = Some(batch.position);
                self.last_batch = Some(std::time::Instant::now());
                if let Some(watch) = &self.watch {
                    watch.applied(name, batch.position);
                }
                self.backoff = Duration::from_millis(50);
                self.narrowing = self.narrowing.saturating_sub(batch.events);
                stall::resumed(name, self.stalled.take());
                Next::Now
            }
            Err(ProjectionError::CheckpointMoved) => {
                tracing::debug!(
                    projection = name,
                    "checkpoint moved elsewhere; reading the log"
                );
                self.checkpoint = None;
                Next::Now
            }
            Err(e) if e.is_transient() => {
                metrics::counter!("palimpsest_projection_errors_total", "projection" => name)
                    .increment(1);
                tracing::warn!(projection = name, error = %e, "database unavailable; retrying");
                self.backoff = (self.backoff * 2).min(MAX_BACKOFF);
                Next::After(self.backoff)
            }
            Err(e) if !one_by_one => {
                metrics::counter!("palimpsest_projection_errors_total", "projection" => name)
                    .increment(1);
                tracing::warn!(
                    projection = name,
                    error = %e,
                    "batch failed; applying its events one at a time to find the one that fails"
                );
                self.narrowing = BATCH as usize;
                Next::Now
            }
            Err(e) => {
                self.stop_on_next_event(&e).await;
                Next::After(STALL_RETRY)
            }
        }
    }

    /// Records, announces and logs the stall on the event after the checkpoint (once per event
    /// and error), and keeps the lag visible.
    async fn stop_on_next_event(&mut self, error: &ProjectionError) {
        let name = self.projection.name();
        let event = match self.next_event().await {
            Ok(Some(event)) => event,
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(projection = name, error = %e, "cannot read the failing event");
                return;
            }
        };
        let stall = Stall::at(name, &event, error);
        let lag = self.store.head().current() - event.position + 1;
        stall::announce(&self.read, &stall, lag, self.stalled.as_ref()).await;
        self.stalled = Some(stall);
    }

    /// The event just after the projection's checkpoint.
    async fn next_event(&self) -> Result<Option<RecordedEvent>, ProjectionError> {
        let name = self.projection.name();
        let client = self.read.pool().get().await?;
        let position: i64 = client
            .query_one(
                &format!("SELECT position FROM {name}.projection_checkpoint WHERE name = $1"),
                &[&name],
            )
            .await?
            .get(0);
        drop(client);
        let events = self.store.read_all(position, 1).await?;
        Ok(events.into_iter().next())
    }
}
