//! Rebuilding a read model from position 0 into a fresh schema, then swapping it in.
//!
//! The live read model keeps serving while the new one is built in `<name>_rebuild`. When the
//! rebuild has caught up, it takes the projection's lock (the live runner waits), applies the
//! last events, renames the live schema away, renames the new one in and drops the old one, in
//! one transaction: readers see the old tables or the new ones, never a mix. All of it happens
//! in the projection's read database ([`ReadDatabase`]); the events come from the log.

use crate::{Projection, ProjectionError, ReadDatabase, Stall, checkpoint};
use futures::StreamExt;
use palimpsest_events::RecordedEvent;
use palimpsest_log::EventStore;
use palimpsest_log::store::read_all_with;
use std::time::Instant;
use tokio::task::JoinHandle;

/// Events per transaction while replaying. Measured on a log of 1.6M events with 5000: the
/// per-transaction statements (`BEGIN`, checkpoint, `COMMIT`) took more time than the
/// projection's own writes.
const REPLAY_BATCH: i64 = 20_000;
/// Ranges of the log read at once while replaying.
const READERS: usize = 3;

/// What a rebuild did.
#[derive(Debug, Clone, PartialEq)]
pub struct RebuildReport {
    /// Events replayed.
    pub events: u64,
    /// The log position the new read model stands at.
    pub position: i64,
    /// Wall time in seconds.
    pub seconds: f64,
    /// Of it, seconds the applier waited for the next range of the log to be read and decoded.
    pub reading_wait: f64,
    /// Seconds in the projection's `apply_batch` (its statements, before the swap).
    pub applying: f64,
    /// Seconds writing checkpoints and committing the replay's transactions.
    pub committing: f64,
}

/// Rebuilds `projection` from the whole log and swaps it in, in the log's own database
/// ([`rebuild_in`]).
pub async fn rebuild(
    store: &EventStore,
    projection: &dyn Projection,
    progress: impl FnMut(i64, i64),
) -> Result<RebuildReport, ProjectionError> {
    rebuild_in(store, &ReadDatabase::of_log(store), projection, progress).await
}

/// Rebuilds `projection` from the whole log into `read` and swaps it in; `progress(done,
/// total)` is called after every batch.
#[tracing::instrument(skip_all, fields(projection = projection.name()))]
pub async fn rebuild_in(
    store: &EventStore,
    read: &ReadDatabase,
    projection: &dyn Projection,
    progress: impl FnMut(i64, i64),
) -> Result<RebuildReport, ProjectionError> {
    let started = Instant::now();
    let fresh = format!("{}_rebuild", projection.name());
    let mut client = read.pool().get().await?;
    create_fresh(&mut client, projection, &fresh, store.log_id()).await?;
    let head = store.head_position().await?;
    let (reader, incoming) = read_ranges(store, head);
    let mut replayed = replay(store, &mut client, projection, &fresh, incoming, progress).await?;
    reader.abort();
    let swap = Swap {
        store,
        read,
        projection,
        fresh: &fresh,
    };
    swap.catch_up_and_swap(&mut client, &mut replayed).await?;
    Ok(RebuildReport {
        events: replayed.events,
        position: replayed.position,
        seconds: started.elapsed().as_secs_f64(),
        reading_wait: replayed.reading_wait,
        applying: replayed.applying,
        committing: replayed.committing,
    })
}

/// How far the replay has come, and where its time went (see [`RebuildReport`]).
#[derive(Default)]
struct Replayed {
    position: i64,
    events: u64,
    reading_wait: f64,
    applying: f64,
    committing: f64,
}

/// One range of the log, read and decoded (or why not).
type Range = Result<Vec<RecordedEvent>, palimpsest_log::LogError>;

/// Creates the empty schema `fresh` the rebuild fills: the projection's tables and a checkpoint
/// fed by the log `log_id`.
async fn create_fresh(
    client: &mut deadpool_postgres::Object,
    projection: &dyn Projection,
    fresh: &str,
    log_id: uuid::Uuid,
) -> Result<(), ProjectionError> {
    let tx = client.transaction().await?;
    tx.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {fresh} CASCADE; CREATE SCHEMA {fresh}"
    ))
    .await?;
    projection.create_tables(&tx, fresh).await?;
    checkpoint::create(&tx, fresh, projection.name(), projection.version()).await?;
    checkpoint::claim(&tx, fresh, projection.name(), log_id).await?;
    tx.commit().await?;
    Ok(())
}

/// Positions are gapless, so the log up to `head` splits into ranges that several
/// connections read (and decode) at once, delivered in order while batches are applied.
fn read_ranges(
    store: &EventStore,
    head: i64,
) -> (JoinHandle<()>, tokio::sync::mpsc::Receiver<Range>) {
    let reader_store = store.clone();
    let (batches, incoming) = tokio::sync::mpsc::channel(READERS);
    let reader = tokio::spawn(async move {
        // Each range is read and decoded by a task of its own, so decoding runs on several
        // threads while the batches before it are applied.
        let ranges = (0..head).step_by(REPLAY_BATCH as usize).map(move |after| {
            let store = reader_store.clone();
            let read =
                tokio::spawn(
                    async move { store.read_all(after, REPLAY_BATCH.min(head - after)).await },
                );
            async move {
                read.await
                    .map_err(|e| palimpsest_log::LogError::Corrupt(e.to_string()))?
            }
        });
        let mut reads = futures::stream::iter(ranges).buffered(READERS);
        while let Some(batch) = reads.next().await {
            if batches.send(batch).await.is_err() {
                return;
            }
        }
    });
    (reader, incoming)
}

/// Applies the ranges read, one transaction each, into `fresh`, while the live read model
/// keeps serving.
async fn replay(
    store: &EventStore,
    client: &mut deadpool_postgres::Object,
    projection: &dyn Projection,
    fresh: &str,
    mut incoming: tokio::sync::mpsc::Receiver<Range>,
    mut progress: impl FnMut(i64, i64),
) -> Result<Replayed, ProjectionError> {
    let name = projection.name();
    let mut replayed = Replayed::default();
    loop {
        let waiting = Instant::now();
        let Some(batch) = incoming.recv().await else {
            break;
        };
        replayed.reading_wait += waiting.elapsed().as_secs_f64();
        let batch = batch?;
        let Some(last) = batch.last().map(|e| e.position) else {
            break;
        };
        let started_batch = Instant::now();
        let tx = client.transaction().await?;
        let applied = Instant::now();
        if let Err(e) = projection.apply_batch(&tx, fresh, &batch).await {
            drop(tx);
            return Err(name_the_event(client, projection, fresh, &batch, e).await);
        }
        let apply_time = applied.elapsed().as_secs_f64();
        replayed.applying += apply_time;
        // Nothing here is visible before the swap, whose synchronous commit flushes the WAL
        // past every batch: these need not wait for their own fsync (set with the checkpoint,
        // in one round trip).
        tokio::try_join!(checkpoint::write(&tx, fresh, name, last), async {
            tx.batch_execute("SET LOCAL synchronous_commit = off")
                .await
                .map_err(ProjectionError::from)
        },)?;
        tx.commit().await?;
        replayed.committing += started_batch.elapsed().as_secs_f64() - apply_time;
        replayed.position = last;
        replayed.events += batch.len() as u64;
        // Freeing 20,000 decoded events takes as long as applying them (measured: 0.93 s of a
        // 2.04 s replay, outside every other line of the budget); a blocking thread frees them
        // while the next batch is applied.
        tokio::task::spawn_blocking(move || drop(batch));
        progress(
            replayed.position,
            store.head().current().max(replayed.position),
        );
    }
    Ok(replayed)
}

/// The end of a rebuild: what it swaps, where, fed by which log.
struct Swap<'a> {
    store: &'a EventStore,
    read: &'a ReadDatabase,
    projection: &'a dyn Projection,
    fresh: &'a str,
}

impl Swap<'_> {
    /// Under the projection's lock (the live runner waits): applies the events appended since
    /// the replay, then swaps `fresh` in for the live schema, in one transaction. Apart from the
    /// log, the swap's commit flushes only the read database: it waits for the events to be on
    /// the log's disk first.
    async fn catch_up_and_swap(
        &self,
        client: &mut deadpool_postgres::Object,
        replayed: &mut Replayed,
    ) -> Result<(), ProjectionError> {
        let (projection, fresh) = (self.projection, self.fresh);
        let name = projection.name();
        let tx = client.transaction().await?;
        checkpoint::lock(&tx, name).await?;
        loop {
            let batch = if self.read.is_apart() {
                self.store.read_all(replayed.position, REPLAY_BATCH).await?
            } else {
                read_all_with(&tx, replayed.position, REPLAY_BATCH).await?
            };
            let Some(last) = batch.last().map(|e| e.position) else {
                break;
            };
            if let Err(e) = projection.apply_batch(&tx, fresh, &batch).await {
                drop(tx);
                return Err(name_the_event(client, projection, fresh, &batch, e).await);
            }
            replayed.position = last;
            replayed.events += batch.len() as u64;
        }
        if self.read.is_apart() {
            crate::runner::on_disk(self.store, replayed.position, false).await?;
        }
        swap_in(tx, name, fresh, replayed.position).await
    }
}

/// Writes the fresh schema's checkpoint and renames it in for the live one; commits.
async fn swap_in(
    tx: deadpool_postgres::Transaction<'_>,
    name: &str,
    fresh: &str,
    position: i64,
) -> Result<(), ProjectionError> {
    checkpoint::write(&tx, fresh, name, position).await?;
    tx.batch_execute(&format!(
        "DROP SCHEMA IF EXISTS {name}_retired CASCADE;
         CREATE SCHEMA IF NOT EXISTS {name};
         ALTER SCHEMA {name} RENAME TO {name}_retired;
         ALTER SCHEMA {fresh} RENAME TO {name};
         DROP SCHEMA {name}_retired CASCADE;"
    ))
    .await?;
    tx.commit().await?;
    Ok(())
}

/// After `batch` failed with `error`: applies its events one at a time in a transaction that is
/// rolled back, to report the event the projection cannot apply. A transient `error` (the
/// database went away) is returned as it is.
async fn name_the_event(
    client: &mut deadpool_postgres::Object,
    projection: &dyn Projection,
    schema: &str,
    batch: &[RecordedEvent],
    error: ProjectionError,
) -> ProjectionError {
    if error.is_transient() {
        return error;
    }
    let Ok(tx) = client.transaction().await else {
        return error;
    };
    for event in batch {
        if let Err(e) = projection.apply(&tx, schema, event).await {
            let stall = Stall::at(projection.name(), event, &e);
            tracing::error!(%stall, "rebuild stopped");
            return ProjectionError::Stopped(Box::new(stall));
        }
    }
    error
}
