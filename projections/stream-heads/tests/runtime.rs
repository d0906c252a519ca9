//! The projector runtime proven end to end with the `stream_heads` read model.

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_projections::runner::apply_next_batch;
use palimpsest_projections::{
    Projection, ProjectionError, ProjectionWatch, ensure, rebuild, spawn_runner,
};
use palimpsest_stream_heads::StreamHeads;
use palimpsest_testkit::TestDb;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn stream(key: &str) -> StreamName {
    StreamName::new("test", "thing", key).expect("stream")
}

async fn append(store: &EventStore, key: &str, n: usize) -> i64 {
    let events = (0..n)
        .map(|i| NewEvent::new("Happened", 1, json!({ "i": i })))
        .collect();
    store
        .append(AppendRequest::new().stream(stream(key), ExpectedVersion::Any, events))
        .await
        .expect("append")
        .last_position
}

async fn heads(store: &EventStore) -> Vec<(String, i64, i64, String)> {
    let client = store.pool().get().await.expect("client");
    client
        .query(
            "SELECT stream_key, version, last_position, last_event_at::text FROM stream_heads.stream_heads ORDER BY stream_key",
            &[],
        )
        .await
        .expect("query")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect()
}

#[tokio::test]
async fn follows_the_log_live_and_a_rebuild_equals_the_live_model() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    append(&store, "a", 3).await;
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(store.clone(), Arc::new(StreamHeads), None, shutdown.clone());
    let watch = ProjectionWatch::start(db.url(), store.pool().clone()).expect("watch");
    for i in 0..20 {
        append(&store, &format!("s{}", i % 7), 2).await;
    }
    let last = append(&store, "a", 1).await;
    assert!(
        watch
            .wait_for("stream_heads", last, Duration::from_secs(10))
            .await
    );
    let live = heads(&store).await;
    assert_eq!(live.len(), 8);
    assert_eq!(live[0].0, "a");
    assert_eq!(live[0].1, 4);

    let report = rebuild(&store, &StreamHeads, |_, _| {})
        .await
        .expect("rebuild");
    assert_eq!(report.events as i64, last);
    assert_eq!(
        heads(&store).await,
        live,
        "the rebuilt read model equals the live one"
    );

    // The runner keeps following the swapped-in model.
    let after = append(&store, "b", 1).await;
    assert!(
        watch
            .wait_for("stream_heads", after, Duration::from_secs(10))
            .await
    );
    assert_eq!(heads(&store).await.len(), 9);
    shutdown.cancel();
    runner.await.expect("runner");
    db.drop().await;
}

/// A runner tells its own process's waiters at each commit. Here the watch follows another,
/// empty database: no notification and no checkpoint query can tell it anything, so only the
/// runner can.
#[tokio::test]
async fn a_runner_tells_the_watch_of_its_process_at_each_commit() {
    let db = TestDb::create().await;
    let elsewhere = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let pool = palimpsest_log::store::pool(elsewhere.url(), 2).expect("pool");
    let deaf = ProjectionWatch::start(elsewhere.url(), pool).expect("watch");
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(
        store.clone(),
        Arc::new(StreamHeads),
        Some(deaf.clone()),
        shutdown.clone(),
    );
    let last = append(&store, "a", 3).await;
    assert!(
        deaf.wait_for("stream_heads", last, Duration::from_secs(30))
            .await,
        "the runner's commit reached the watch of its process"
    );
    assert!(
        !deaf
            .wait_for("stream_heads", last + 1, Duration::from_millis(300))
            .await,
        "a position nobody committed is not reached"
    );
    shutdown.cancel();
    runner.await.expect("runner");
    db.drop().await;
    elsewhere.drop().await;
}

/// A runner waits for the log inside its next batch's transaction, begun (so its `BEGIN` is
/// not on the path of the writes waiting for it), and once quiet that transaction holds no lock
/// while it waits: a replay's swap or another process's runner is not held up by an idle one.
#[tokio::test]
async fn an_idle_runner_waits_in_a_begun_transaction_that_holds_no_lock() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(store.clone(), Arc::new(StreamHeads), None, shutdown.clone());
    append(&store, "a", 2).await;
    let client = store.pool().get().await.expect("client");
    // One snapshot answers both: an idle transaction without the lock (the caught-up runner
    // waiting), and none idle with it. Two queries raced a runner between statements of a
    // batch (idle in transaction for a moment, its lock held) and failed on a loaded machine;
    // a runner that held its lock while it waits never shows the first, so this still fails.
    let mut seen = false;
    for _ in 0..200 {
        let (held, idle) = idle_transactions(&client).await;
        if idle > 0 && held == 0 {
            seen = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        seen,
        "the caught-up runner waits in a begun transaction without the projection's lock, \
         and no idle transaction holds an advisory lock"
    );
    drop(client);
    shutdown.cancel();
    runner.await.expect("runner");
    db.drop().await;
}

/// How many idle transactions of this database hold an advisory lock, and how many hold none.
async fn idle_transactions(client: &deadpool_postgres::Object) -> (i64, i64) {
    let row = client
        .query_one(
            "SELECT \
               count(*) FILTER (WHERE EXISTS (SELECT 1 FROM pg_locks l \
                 WHERE l.pid = a.pid AND l.locktype = 'advisory')), \
               count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM pg_locks l \
                 WHERE l.pid = a.pid AND l.locktype = 'advisory')) \
             FROM pg_stat_activity a \
             WHERE a.datname = current_database() AND a.state = 'idle in transaction'",
            &[],
        )
        .await
        .expect("activity");
    (row.get(0), row.get(1))
}

/// A runner that has just applied a batch takes its next batch's lock before it waits (so the
/// round trip that takes it is off the next write's path), lets go of it once quiet (100 ms),
/// and a rebuild swapped in while writes keep it busy waits its turn and equals the live model.
#[tokio::test]
async fn a_busy_runner_takes_its_next_lock_before_it_waits_and_lets_go_when_quiet() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(store.clone(), Arc::new(StreamHeads), None, shutdown.clone());
    let watch = ProjectionWatch::start(db.url(), store.pool().clone()).expect("watch");
    let client = store.pool().get().await.expect("client");
    let mut held = false;
    for i in 0..50 {
        let last = append(&store, &format!("s{}", i % 5), 1).await;
        assert!(
            watch
                .wait_for("stream_heads", last, Duration::from_secs(10))
                .await
        );
        if idle_transactions(&client).await.0 > 0 {
            held = true;
            break;
        }
    }
    assert!(
        held,
        "right after a batch, the runner waits for the next one with its lock taken"
    );
    let mut quiet = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let (with_lock, without) = idle_transactions(&client).await;
        if with_lock == 0 && without > 0 {
            quiet = true;
            break;
        }
    }
    assert!(
        quiet,
        "a quiet runner waits without the lock (it held it at most 100 ms)"
    );

    let writing = CancellationToken::new();
    let writer = tokio::spawn({
        let (store, writing) = (store.clone(), writing.clone());
        async move {
            let mut last = 0;
            while !writing.is_cancelled() {
                last = append(&store, "busy", 1).await;
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            last
        }
    });
    let report = tokio::time::timeout(
        Duration::from_secs(20),
        rebuild(&store, &StreamHeads, |_, _| {}),
    )
    .await
    .expect("a rebuild swaps in beside a busy runner")
    .expect("rebuild");
    assert!(report.events > 0);
    writing.cancel();
    let last = writer.await.expect("writer");
    assert!(
        watch
            .wait_for("stream_heads", last, Duration::from_secs(10))
            .await,
        "the runner follows the swapped-in model"
    );
    let live = heads(&store).await;
    rebuild(&store, &StreamHeads, |_, _| {})
        .await
        .expect("rebuild");
    assert_eq!(heads(&store).await, live, "a rebuild equals the live model");
    drop(client);
    shutdown.cancel();
    runner.await.expect("runner");
    db.drop().await;
}

/// A runner's rows never become visible before the events they are made of are on disk: events
/// another process appended, which this process's log cannot know were flushed, are flushed by
/// the runner before it commits.
#[tokio::test]
async fn a_runner_flushes_events_it_cannot_know_are_on_disk_before_it_commits() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let elsewhere = EventStore::connect(db.url()).await.expect("connect");
    let watch = ProjectionWatch::start(db.url(), store.pool().clone()).expect("watch");
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(
        store.clone(),
        Arc::new(StreamHeads),
        Some(watch.clone()),
        shutdown.clone(),
    );
    let theirs = append(&elsewhere, "theirs", 3).await;
    assert!(
        watch
            .wait_for("stream_heads", theirs, Duration::from_secs(30))
            .await
    );
    assert!(
        store.durable().current() >= theirs,
        "the runner flushed the events before committing rows made of them"
    );
    shutdown.cancel();
    runner.await.expect("runner");
    db.drop().await;
}

/// A projection that fails at a chosen position, like a projector killed mid-batch.
struct FailsAt(i64);

#[async_trait::async_trait]
impl Projection for FailsAt {
    fn name(&self) -> &'static str {
        "stream_heads"
    }
    async fn create_tables(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        schema: &str,
    ) -> Result<(), ProjectionError> {
        StreamHeads.create_tables(tx, schema).await
    }
    async fn apply(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        schema: &str,
        event: &palimpsest_events::RecordedEvent,
    ) -> Result<(), ProjectionError> {
        if event.position == self.0 {
            return Err(ProjectionError::Invalid("killed mid-batch".into()));
        }
        StreamHeads.apply(tx, schema, event).await
    }
}

#[tokio::test]
async fn a_batch_that_dies_midway_applies_nothing_and_the_retry_applies_everything_once() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    for i in 0..10 {
        append(&store, &format!("k{i}"), 1).await;
    }
    ensure(&store, &StreamHeads).await.expect("ensure");
    assert!(apply_next_batch(&store, &FailsAt(6), 100).await.is_err());
    assert!(
        heads(&store).await.is_empty(),
        "rows of the failed batch were rolled back"
    );
    assert_eq!(
        apply_next_batch(&store, &StreamHeads, 100)
            .await
            .expect("retry"),
        10
    );
    assert_eq!(
        apply_next_batch(&store, &StreamHeads, 100)
            .await
            .expect("again"),
        0
    );
    let rows = heads(&store).await;
    assert_eq!(rows.len(), 10);
    assert!(rows.iter().all(|r| r.1 == 1));
    db.drop().await;
}
