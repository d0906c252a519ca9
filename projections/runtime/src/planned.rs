//! A live batch of a planned projection ([`Planner`]): one round trip; of a
//! [`ReadingPlanner`]: its reads, then one round trip.
//!
//! A projection whose writes depend on its events alone (or on its events and rows it reads
//! first) hands the runtime its statements, so the runtime can send the whole batch at once,
//! the `COMMIT` behind it: `BEGIN` and the
//! asynchronous commit mode, the projection's lock, the checkpoint moved on, the writes, the
//! notification, and — once the events are on disk — `COMMIT`. Should any of them fail, Postgres
//! turns the `COMMIT` into a rollback.
//!
//! The events come from memory when they can: the runner knows where it left its checkpoint,
//! and this process's log keeps the events it appended last ([`RecentEvents`]). The checkpoint
//! update is then the guard: it moves the checkpoint only from where this runner left it, and
//! fails (a `NOT NULL` violation, the transaction with it) when another process's runner moved
//! it meanwhile; the runner then reads the log. Otherwise (first batch, events another process
//! appended or let go, one event at a time after a failure) the events are read under the lock
//! first: two round trips.
//!
//! A reading planner's reads go before all that, on the batch's connection: outside any
//! transaction when the events came from memory (the guard then refuses the batch if another
//! runner committed since the rows were read), inside the locked one when they were read.
//!
//! [`RecentEvents`]: palimpsest_log::recent::RecentEvents
//! [`Planner`]: crate::Planner
//! [`ReadingPlanner`]: crate::ReadingPlanner

use crate::runner::{Committed, LOCK_SQL, on_disk, read_locked, record_batch};
use crate::statement::{self, Statement};
use crate::{PROJECTION_CHANNEL, Plan, ProjectionError, ReadDatabase, Reads};
use deadpool_postgres::Client;
use palimpsest_events::RecordedEvent;
use palimpsest_log::EventStore;
use std::task::Poll;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;

/// Opens the batch's transaction: it commits without waiting for its own flush, since its
/// checkpoint commits with its rows and [`on_disk`] keeps any row from being seen before its
/// event is durable.
const BEGIN_SQL: &str = "BEGIN; SET LOCAL synchronous_commit = off";

/// Applies the batch after `checkpoint` (where this runner last committed, if it knows), or
/// nothing when the log's head is not past it. `None` when caught up.
#[tracing::instrument(skip_all, fields(projection = name))]
pub(crate) async fn apply(
    store: &EventStore,
    read: &ReadDatabase,
    name: &'static str,
    plan: Plan<'_>,
    checkpoint: Option<i64>,
    limit: i64,
) -> Result<Option<Committed>, ProjectionError> {
    if checkpoint.is_some_and(|c| store.head().current() <= c) {
        return Ok(None);
    }
    let client = read.pool().get().await?;
    let kept = checkpoint.and_then(|c| {
        let slices = store
            .recent()
            .after(c, usize::try_from(limit).unwrap_or(1))?;
        Some((c, slices))
    });
    let result = match kept {
        Some((from, slices)) => {
            let events: Vec<&[RecordedEvent]> = slices.iter().map(|s| &**s).collect();
            write(store, &client, name, plan, &events, from, Locked::No).await
        }
        None => read_and_write(store, read, &client, name, plan, limit).await,
    };
    if !matches!(result, Ok(Some(_))) {
        end(client).await;
    }
    result
}

/// Whether the batch's transaction is open, with the projection's lock, when its writes go;
/// which also says where its events came from.
#[derive(Clone, Copy, PartialEq)]
enum Locked {
    /// Not begun: `BEGIN`, the commit mode and the lock lead the pipeline. The events were
    /// taken from memory: this process appended them.
    No,
    /// Begun and locked: the events were read from the log under the lock.
    Yes,
}

/// Reads the events after the checkpoint under the lock (one round trip), then writes them.
async fn read_and_write(
    store: &EventStore,
    read: &ReadDatabase,
    client: &Client,
    name: &'static str,
    plan: Plan<'_>,
    limit: i64,
) -> Result<Option<Committed>, ProjectionError> {
    let events = read_locked(store, read, client, BEGIN_SQL, name, limit).await?;
    let Some(first) = events.first() else {
        return Ok(None);
    };
    let from = first.position - 1;
    write(store, client, name, plan, &[&events], from, Locked::Yes).await
}

/// Plans `events` (the positions after `from`, in order) and sends their writes with the
/// checkpoint and the notification, then `COMMIT` once they are on disk.
async fn write(
    store: &EventStore,
    client: &Client,
    name: &'static str,
    plan: Plan<'_>,
    events: &[&[RecordedEvent]],
    from: i64,
    locked: Locked,
) -> Result<Option<Committed>, ProjectionError> {
    let Some(last) = events.iter().rev().find_map(|e| e.last()) else {
        return Ok(None);
    };
    let (to, last_time) = (last.position, last.recorded_at);
    let count = events.iter().map(|e| e.len()).sum();
    let statements = planned(client, name, plan, events).await?;
    let batch = Batch {
        client,
        name,
        from,
        to,
        locked,
    };
    match statement::only_dml(statements) {
        Ok(dml) => batch.pipelined(store, &dml).await?,
        Err(with_ddl) => batch.in_steps(store, with_ddl).await?,
    }
    record_batch(name, count, to, last_time, store.head().current() - to);
    Ok(Some(Committed {
        events: count,
        position: to,
    }))
}

/// The statements that apply `events` (runs of consecutive positions), planned by `plan`; a
/// reading planner reads on `client` and is given the runs as one.
async fn planned(
    client: &Client,
    name: &'static str,
    plan: Plan<'_>,
    events: &[&[RecordedEvent]],
) -> Result<Vec<Statement>, ProjectionError> {
    let mut statements = Vec::new();
    match plan {
        Plan::FromEvents(planner) => {
            for run in events {
                planner.plan(name, run, &mut statements)?;
            }
        }
        Plan::AfterReads(_) => {
            let joined;
            let all: &[RecordedEvent] = match events {
                [one] => one,
                runs => {
                    joined = runs.concat();
                    &joined
                }
            };
            let reads = Reads::of_client(client);
            plan.plan(reads, name, all, &mut statements).await?;
        }
    }
    Ok(statements)
}

/// One batch's transaction on its connection: the events after `from` up to `to`.
struct Batch<'a> {
    client: &'a Client,
    name: &'static str,
    from: i64,
    to: i64,
    locked: Locked,
}

impl Batch<'_> {
    /// Every statement sent at once, `COMMIT` queued behind them once the events are on disk.
    async fn pipelined(
        &self,
        store: &EventStore,
        dml: &[statement::Dml],
    ) -> Result<(), ProjectionError> {
        let client = self.client;
        let prepared = statement::prepare(client, dml).await?;
        let (lock, guard, notify) = self.prepare().await?;
        let note = format!("{}:{}", self.name, self.to);
        let name = self.name;
        let lock_params: [&(dyn ToSql + Sync); 1] = [&name];
        let guard_params: [&(dyn ToSql + Sync); 3] = [&name, &self.from, &self.to];
        let notify_params: [&(dyn ToSql + Sync); 2] = [&PROJECTION_CHANNEL, &note];
        let opening = self.locked == Locked::No;
        // Each future sends its one statement when first polled, in this order. All are
        // awaited, and the first failure in statement order is the cause (those after it only
        // say the transaction was aborted).
        let mut sent = Box::pin(async {
            let (begun, locked, guarded, written, notified) = tokio::join!(
                async {
                    if opening {
                        client.batch_execute(BEGIN_SQL).await?;
                    }
                    Ok::<_, ProjectionError>(())
                },
                async {
                    if opening {
                        client.execute(&lock, &lock_params).await?;
                    }
                    Ok(())
                },
                async { moved(client.execute(&guard, &guard_params).await) },
                statement::send(client, &prepared, dml),
                async { Ok(client.execute(&notify, &notify_params).await.map(drop)?) },
            );
            begun.and(locked).and(guarded).and(written).and(notified)
        });
        let commit = async {
            on_disk(store, self.to, self.locked == Locked::No).await?;
            client.batch_execute("COMMIT").await?;
            Ok::<_, ProjectionError>(())
        };
        // Polled once, the batch's statements are all queued before the `COMMIT` can be.
        match futures::poll!(&mut sent) {
            Poll::Ready(result) => {
                result?;
                commit.await
            }
            Poll::Pending => tokio::try_join!(sent, commit).map(drop),
        }
    }

    /// A batch with DDL (which cannot be prepared before the tables it makes): the lock and
    /// the checkpoint, then the statements in order, then `COMMIT`.
    async fn in_steps(
        &self,
        store: &EventStore,
        statements: Vec<Statement>,
    ) -> Result<(), ProjectionError> {
        let client = self.client;
        let (lock, guard, notify) = self.prepare().await?;
        let name = self.name;
        if self.locked == Locked::No {
            client.batch_execute(BEGIN_SQL).await?;
            client.execute(&lock, &[&name]).await?;
        }
        moved(client.execute(&guard, &[&name, &self.from, &self.to]).await)?;
        statement::run(client, statements).await?;
        let note = format!("{}:{}", self.name, self.to);
        client
            .execute(&notify, &[&PROJECTION_CHANNEL, &note])
            .await?;
        on_disk(store, self.to, self.locked == Locked::No).await?;
        client.batch_execute("COMMIT").await?;
        Ok(())
    }

    /// The lock, the guarded checkpoint update and the notification, prepared (once per
    /// connection).
    async fn prepare(
        &self,
    ) -> Result<
        (
            tokio_postgres::Statement,
            tokio_postgres::Statement,
            tokio_postgres::Statement,
        ),
        ProjectionError,
    > {
        let client = self.client;
        Ok((
            client.prepare_cached(LOCK_SQL).await?,
            client
                .prepare_cached(&format!(
                    "UPDATE {}.projection_checkpoint SET position = \
                     CASE WHEN position = $2::bigint THEN $3::bigint END, \
                     updated_at = now(), stalled = NULL WHERE name = $1",
                    self.name
                ))
                .await?,
            client.prepare_cached("SELECT pg_notify($1, $2)").await?,
        ))
    }
}

/// The guard's answer: a `NOT NULL` violation is the checkpoint found elsewhere than `from`.
fn moved(result: Result<u64, tokio_postgres::Error>) -> Result<(), ProjectionError> {
    match result {
        Ok(_) => Ok(()),
        Err(e) if e.code() == Some(&SqlState::NOT_NULL_VIOLATION) => {
            Err(ProjectionError::CheckpointMoved)
        }
        Err(e) => Err(e.into()),
    }
}

/// Leaves no transaction open on a pooled connection: rolled back, or dropped from the pool
/// when even that fails.
async fn end(client: Client) {
    if let Err(e) = client.batch_execute("ROLLBACK").await {
        tracing::warn!(error = %e, "cannot end a projector's transaction; dropping its connection");
        drop(deadpool_postgres::Object::take(client));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Planner, Projection};
    use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
    use palimpsest_log::AppendRequest;
    use palimpsest_testkit::TestDb;

    /// Counts the events it is given: an event applied twice counts twice.
    struct Tally;

    /// Tally's plan.
    const TALLY: Plan<'static> = Plan::FromEvents(&Tally);

    #[async_trait::async_trait]
    impl Projection for Tally {
        fn name(&self) -> &'static str {
            "tally"
        }

        async fn create_tables(
            &self,
            tx: &deadpool_postgres::Transaction<'_>,
            schema: &str,
        ) -> Result<(), ProjectionError> {
            tx.batch_execute(&format!(
                "CREATE TABLE {schema}.tally (applied bigint NOT NULL); \
                 INSERT INTO {schema}.tally VALUES (0)"
            ))
            .await?;
            Ok(())
        }

        fn planner(&self) -> Option<&dyn Planner> {
            Some(self)
        }
    }

    impl Planner for Tally {
        fn plan(
            &self,
            schema: &str,
            events: &[RecordedEvent],
            out: &mut Vec<Statement>,
        ) -> Result<(), ProjectionError> {
            let n = i64::try_from(events.len()).unwrap_or(i64::MAX);
            out.push(Statement::dml(
                format!("UPDATE {schema}.tally SET applied = applied + $1"),
                vec![Box::new(n)],
            ));
            Ok(())
        }
    }

    async fn append(store: &EventStore, n: usize) {
        let stream = StreamName::new("test", "thing", "t").expect("stream");
        let events = (0..n)
            .map(|_| NewEvent::new("Happened", 1, serde_json::json!({})))
            .collect();
        store
            .append(AppendRequest::new().stream(stream, ExpectedVersion::Any, events))
            .await
            .expect("append");
    }

    /// The count `column` of read model `name` keeps (in its table of the same name), and its
    /// checkpoint.
    async fn counted(store: &EventStore, name: &str, column: &str) -> (i64, i64) {
        let client = store.pool().get().await.expect("client");
        let row = client
            .query_one(
                &format!(
                    "SELECT (SELECT {column} FROM {name}.{name}), \
                     (SELECT position FROM {name}.projection_checkpoint)"
                ),
                &[],
            )
            .await
            .expect("count");
        (row.get(0), row.get(1))
    }

    async fn tally(store: &EventStore) -> (i64, i64) {
        counted(store, "tally", "applied").await
    }

    /// Given a runner that left the checkpoint at 2, and another process's runner that then
    /// applied 3 and 4: when the first applies 3 to 5 from memory with what it remembers, its
    /// guard refuses the batch whole; read from the log, only 5 is left to apply.
    #[tokio::test]
    async fn a_batch_planned_from_a_checkpoint_that_moved_writes_nothing() {
        let db = TestDb::create().await;
        let store = EventStore::connect(db.url()).await.expect("connect");
        let log = ReadDatabase::of_log(&store);
        crate::ensure(&store, &Tally).await.expect("ensure");
        append(&store, 2).await;
        let first = apply(&store, &log, "tally", TALLY, None, 500).await;
        assert_eq!(first.expect("read path").map(|b| b.position), Some(2));
        append(&store, 2).await;
        let elsewhere = crate::runner::apply_next_batch(&store, &Tally, 500).await;
        assert_eq!(elsewhere.expect("other runner"), 2);
        append(&store, 1).await;
        let stale = apply(&store, &log, "tally", TALLY, Some(2), 500).await;
        assert!(matches!(stale, Err(ProjectionError::CheckpointMoved)));
        assert_eq!(
            tally(&store).await,
            (4, 4),
            "the refused batch wrote nothing"
        );
        let read = apply(&store, &log, "tally", TALLY, None, 500).await;
        assert_eq!(read.expect("read path").map(|b| b.events), Some(1));
        let kept = apply(&store, &log, "tally", TALLY, Some(5), 500).await;
        assert!(kept.expect("caught up").is_none());
        append(&store, 3).await;
        let from_memory = apply(&store, &log, "tally", TALLY, Some(5), 500).await;
        assert_eq!(from_memory.expect("memory").map(|b| b.position), Some(8));
        assert_eq!(tally(&store).await, (8, 8), "every event applied once");
        db.drop().await;
    }

    /// Events this process appended are applied from memory: with `log.events` locked by
    /// another transaction, a read of the log would wait for it, and the batch does not.
    #[tokio::test]
    async fn a_batch_of_this_process_s_events_does_not_read_the_log() {
        let db = TestDb::create().await;
        let store = EventStore::connect(db.url()).await.expect("connect");
        let log = ReadDatabase::of_log(&store);
        crate::ensure(&store, &Tally).await.expect("ensure");
        append(&store, 2).await;
        let first = apply(&store, &log, "tally", TALLY, None, 500).await;
        assert_eq!(first.expect("read path").map(|b| b.position), Some(2));
        append(&store, 3).await;
        let mut other = store.pool().get().await.expect("client");
        let holder = other.transaction().await.expect("begin");
        holder
            .batch_execute("LOCK TABLE log.events IN ACCESS EXCLUSIVE MODE")
            .await
            .expect("lock");
        let applied = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            apply(&store, &log, "tally", TALLY, Some(2), 500),
        )
        .await
        .expect("the batch did not wait for the locked log");
        assert_eq!(applied.expect("memory").map(|b| b.position), Some(5));
        holder.rollback().await.expect("unlock");
        assert_eq!(tally(&store).await, (5, 5));
        db.drop().await;
    }

    /// Keeps a count of the events applied in one row, read before it is written: a batch
    /// planned from a row that another runner changed since, or from a row read before the same
    /// batch's earlier events were counted, counts wrongly.
    struct Running;

    #[async_trait::async_trait]
    impl Projection for Running {
        fn name(&self) -> &'static str {
            "running"
        }

        async fn create_tables(
            &self,
            tx: &deadpool_postgres::Transaction<'_>,
            schema: &str,
        ) -> Result<(), ProjectionError> {
            tx.batch_execute(&format!(
                "CREATE TABLE {schema}.running (total bigint NOT NULL); \
                 INSERT INTO {schema}.running VALUES (0)"
            ))
            .await?;
            Ok(())
        }

        fn reading_planner(&self) -> Option<&dyn crate::ReadingPlanner> {
            Some(self)
        }
    }

    #[async_trait::async_trait]
    impl crate::ReadingPlanner for Running {
        async fn plan(
            &self,
            reads: Reads<'_>,
            schema: &str,
            events: &[RecordedEvent],
            out: &mut Vec<Statement>,
        ) -> Result<(), ProjectionError> {
            let row = reads
                .query_opt(&format!("SELECT total FROM {schema}.running"), &[])
                .await?
                .ok_or_else(|| ProjectionError::Invalid("no running row".into()))?;
            let total: i64 = row.get(0);
            let n = i64::try_from(events.len()).unwrap_or(i64::MAX);
            out.push(Statement::dml(
                format!("UPDATE {schema}.running SET total = $1"),
                vec![Box::new(total + n)],
            ));
            Ok(())
        }
    }

    const RUNNING: Plan<'static> = Plan::AfterReads(&Running);

    async fn running(store: &EventStore) -> (i64, i64) {
        counted(store, "running", "total").await
    }

    /// Given a reading planner's runner that left the checkpoint at 2 and another process's
    /// runner that then applied 3 and 4: the first's batch of 3 to 5 from memory, planned
    /// from the row as it now stands, is refused whole; read under the lock, only 5 is counted.
    /// Two appends then taken from memory at once are planned as one batch (each read of the
    /// row would otherwise miss the other's count); and a rebuild counts what the live runs
    /// counted.
    #[tokio::test]
    async fn a_reading_planner_plans_from_the_rows_its_runner_left_and_nothing_else() {
        let db = TestDb::create().await;
        let store = EventStore::connect(db.url()).await.expect("connect");
        let log = ReadDatabase::of_log(&store);
        crate::ensure(&store, &Running).await.expect("ensure");
        append(&store, 2).await;
        let first = apply(&store, &log, "running", RUNNING, None, 500).await;
        assert_eq!(first.expect("read path").map(|b| b.position), Some(2));
        append(&store, 2).await;
        let elsewhere = crate::runner::apply_next_batch(&store, &Running, 500).await;
        assert_eq!(elsewhere.expect("other runner"), 2);
        assert_eq!(running(&store).await, (4, 4));
        append(&store, 1).await;
        let stale = apply(&store, &log, "running", RUNNING, Some(2), 500).await;
        assert!(matches!(stale, Err(ProjectionError::CheckpointMoved)));
        assert_eq!(
            running(&store).await,
            (4, 4),
            "the refused batch wrote nothing"
        );
        let read = apply(&store, &log, "running", RUNNING, None, 500).await;
        assert_eq!(read.expect("read path").map(|b| b.events), Some(1));
        append(&store, 1).await;
        append(&store, 2).await;
        let from_memory = apply(&store, &log, "running", RUNNING, Some(5), 500).await;
        assert_eq!(from_memory.expect("memory").map(|b| b.events), Some(3));
        assert_eq!(running(&store).await, (8, 8), "every event counted once");
        crate::rebuild(&store, &Running, |_, _| {})
            .await
            .expect("rebuild");
        assert_eq!(
            running(&store).await,
            (8, 8),
            "the rebuild counts what the runs did"
        );
        db.drop().await;
    }
}
