//! Running a projection live: catch up from the log, then follow it.

use crate::{PROJECTION_CHANNEL, Projection, ProjectionError, checkpoint, rebuild};
use palimpsest_log::EventStore;
use palimpsest_log::rows::{COLUMNS, to_events};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_postgres::types::ToSql;
use tokio_util::sync::CancellationToken;

/// Most events one live batch applies.
const BATCH: i64 = 500;

/// Makes sure the projection's schema, tables and checkpoint exist at the projection's version;
/// a read model left by an older version is rebuilt from the log and swapped in.
pub async fn ensure(
    store: &EventStore,
    projection: &dyn Projection,
) -> Result<(), ProjectionError> {
    let name = projection.name();
    let stale = {
        let mut client = store.pool().get().await?;
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
            tx.commit().await?;
            false
        } else {
            let (_, version) = checkpoint::read(&tx, name, name).await?;
            version != projection.version()
        }
    };
    if stale {
        tracing::info!(
            projection = name,
            "read model is of an older version; rebuilding"
        );
        rebuild(store, projection, |_, _| {}).await?;
    }
    Ok(())
}

/// Applies the next batch of events after the checkpoint, in one transaction with the checkpoint.
/// Returns how many events were applied (0 when caught up).
///
/// `BEGIN`; the projection's lock pipelined with the read of the events after the checkpoint;
/// the projection's writes; the checkpoint pipelined with the notification; `COMMIT`.
#[tracing::instrument(skip_all, fields(projection = projection.name()))]
pub async fn apply_next_batch(
    store: &EventStore,
    projection: &dyn Projection,
    limit: i64,
) -> Result<usize, ProjectionError> {
    let name = projection.name();
    let mut client = store.pool().get().await?;
    let tx = client.transaction().await?;
    let lock = tx
        .prepare_cached("SELECT pg_advisory_xact_lock(hashtext('palimpsest.projection:' || $1))")
        .await?;
    let read = tx
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM log.events WHERE position > \
             (SELECT position FROM {name}.projection_checkpoint WHERE name = $1) \
             ORDER BY position LIMIT $2"
        ))
        .await?;
    let lock_params: [&(dyn ToSql + Sync); 1] = [&name];
    let read_params: [&(dyn ToSql + Sync); 2] = [&name, &limit];
    let (_, rows) = tokio::try_join!(
        tx.execute(&lock, &lock_params),
        tx.query(&read, &read_params)
    )?;
    let events = to_events(&rows)?;
    let Some(last) = events.last() else {
        return Ok(0);
    };
    let (last_position, last_time) = (last.position, last.recorded_at);
    projection.apply_batch(&tx, name, &events).await?;
    let write = tx
        .prepare_cached(&format!(
            "UPDATE {name}.projection_checkpoint SET position = $2, updated_at = now() WHERE name = $1"
        ))
        .await?;
    let notify = tx.prepare_cached("SELECT pg_notify($1, $2)").await?;
    let note = format!("{name}:{last_position}");
    let write_params: [&(dyn ToSql + Sync); 2] = [&name, &last_position];
    let notify_params: [&(dyn ToSql + Sync); 2] = [&PROJECTION_CHANNEL, &note];
    tokio::try_join!(
        tx.execute(&write, &write_params),
        tx.execute(&notify, &notify_params)
    )?;
    tx.commit().await?;
    let lag = (store.head().current() - last_position).max(0);
    metrics::gauge!("palimpsest_projection_position", "projection" => name)
        .set(last_position as f64);
    metrics::gauge!("palimpsest_projection_lag_events", "projection" => name).set(lag as f64);
    let age = (chrono::Utc::now() - last_time).num_milliseconds().max(0) as f64 / 1000.0;
    metrics::gauge!("palimpsest_projection_lag_seconds", "projection" => name).set(if lag > 0 {
        age
    } else {
        0.0
    });
    metrics::counter!("palimpsest_projection_events_total", "projection" => name)
        .increment(events.len() as u64);
    Ok(events.len())
}

/// Starts a task that ensures the projection, catches it up and follows the log until
/// `shutdown`; failures are logged and retried with backoff (the failed batch left no trace).
pub fn spawn_runner(
    store: EventStore,
    projection: Arc<dyn Projection>,
    shutdown: CancellationToken,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let name = projection.name();
        let mut backoff = Duration::from_millis(100);
        while let Err(e) = ensure(&store, projection.as_ref()).await {
            tracing::error!(projection = name, error = %e, "cannot set up read model");
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = shutdown.cancelled() => return,
            }
            backoff = (backoff * 2).min(Duration::from_secs(5));
        }
        let mut head = store.head().subscribe();
        backoff = Duration::from_millis(100);
        while !shutdown.is_cancelled() {
            match apply_next_batch(&store, projection.as_ref(), BATCH).await {
                Ok(0) => {
                    metrics::gauge!("palimpsest_projection_lag_events", "projection" => name)
                        .set(0.0);
                    metrics::gauge!("palimpsest_projection_lag_seconds", "projection" => name)
                        .set(0.0);
                    tokio::select! {
                        _ = head.changed() => {}
                        _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                        _ = shutdown.cancelled() => return,
                    }
                }
                Ok(_) => backoff = Duration::from_millis(100),
                Err(e) => {
                    metrics::counter!("palimpsest_projection_errors_total", "projection" => name)
                        .increment(1);
                    tracing::error!(projection = name, error = %e, "batch failed; retrying");
                    tokio::select! {
                        _ = tokio::time::sleep(backoff) => {}
                        _ = shutdown.cancelled() => return,
                    }
                    backoff = (backoff * 2).min(Duration::from_secs(5));
                }
            }
        }
    })
}
