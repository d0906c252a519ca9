//! A read model of one context ([`Projection::context`]) passes over other contexts' events:
//! its runner tells this process's waiters at once, opens no transaction for them, commits its
//! checkpoint past them a little later, and still applies each of its own events exactly once.

use deadpool_postgres::Transaction;
use palimpsest_events::{ExpectedVersion, NewEvent, RecordedEvent, StreamName};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_projections::{Projection, ProjectionError, ProjectionWatch, rebuild, spawn_runner};
use palimpsest_testkit::TestDb;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Each event of context `mine` by its position; every batch it is given, as the contexts of
/// its events (kept in memory, so the test sees which transactions the runner opened).
#[derive(Default)]
struct Mine {
    batches: Mutex<Vec<Vec<String>>>,
}

#[async_trait::async_trait]
impl Projection for Mine {
    fn name(&self) -> &'static str {
        "mine"
    }

    fn context(&self) -> Option<&'static str> {
        Some("mine")
    }

    async fn create_tables(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
    ) -> Result<(), ProjectionError> {
        tx.batch_execute(&format!(
            "CREATE TABLE {schema}.seen (position bigint PRIMARY KEY)"
        ))
        .await?;
        Ok(())
    }

    async fn apply(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
        event: &RecordedEvent,
    ) -> Result<(), ProjectionError> {
        if event.stream.context != "mine" {
            return Ok(());
        }
        tx.execute(
            &format!("INSERT INTO {schema}.seen (position) VALUES ($1)"),
            &[&event.position],
        )
        .await?;
        Ok(())
    }

    async fn apply_batch(
        &self,
        tx: &Transaction<'_>,
        schema: &str,
        events: &[RecordedEvent],
    ) -> Result<(), ProjectionError> {
        if let Ok(mut batches) = self.batches.lock() {
            batches.push(events.iter().map(|e| e.stream.context.clone()).collect());
        }
        for event in events {
            self.apply(tx, schema, event).await?;
        }
        Ok(())
    }
}

async fn append(store: &EventStore, context: &str) -> i64 {
    let stream = StreamName::new(context, "thing", "a").expect("stream");
    let event = NewEvent::new("Happened", 1, json!({}));
    store
        .append(AppendRequest::new().stream(stream, ExpectedVersion::Any, vec![event]))
        .await
        .expect("append")
        .last_position
}

async fn rows(store: &EventStore, schema: &str) -> Vec<i64> {
    let client = store.pool().get().await.expect("client");
    let rows = client
        .query(
            &format!("SELECT position FROM {schema}.seen ORDER BY position"),
            &[],
        )
        .await
        .expect("seen");
    rows.iter().map(|r| r.get(0)).collect()
}

async fn checkpoint(store: &EventStore) -> i64 {
    let client = store.pool().get().await.expect("client");
    client
        .query_one("SELECT position FROM mine.projection_checkpoint", &[])
        .await
        .expect("checkpoint")
        .get(0)
}

#[tokio::test]
async fn other_contexts_events_are_passed_over_without_a_transaction_then_committed_past() {
    let metrics = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .expect("recorder");
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let watch = ProjectionWatch::start(db.url(), store.pool().clone()).expect("watch");
    let mine = Arc::new(Mine::default());
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(
        store.clone(),
        mine.clone(),
        Some(watch.clone()),
        shutdown.clone(),
    );
    let wait = |position| watch.wait_for("mine", position, Duration::from_secs(10));
    let (mut own, mut last) = (Vec::new(), 0);
    let writing = Instant::now();
    for round in 0..20 {
        if round % 4 == 0 {
            last = append(&store, "mine").await;
            own.push(last);
            assert!(wait(last).await, "its own event is applied");
        }
        last = append(&store, "other").await;
        assert!(wait(last).await, "another context's event is passed over");
    }
    let wrote_for = writing.elapsed();

    let passed_over = metrics.render();
    let count = passed_over
        .lines()
        .find(|l| l.starts_with("palimpsest_projection_passed_over_total{projection=\"mine\"}"))
        .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .unwrap_or(0.0);
    assert!(count >= 1.0, "the runner passed over events: {passed_over}");
    let started = Instant::now();
    while checkpoint(&store).await < last {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the checkpoint is committed past the passed-over events"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let batches = mine.batches.lock().expect("batches").clone();
    let foreign_only = batches
        .iter()
        .filter(|b| b.iter().all(|c| c != "mine"))
        .count();
    // Each of the 20 foreign events was waited for on its own: without passing over, each is
    // a transaction of its own. Passing over leaves only the commits past them, one per 100 ms
    // at most: fewer than 20 unless the writes took 2 s (a machine that slow cannot tell).
    if wrote_for < Duration::from_secs(2) {
        assert!(
            foreign_only < 20,
            "{foreign_only} transactions held only other contexts' events: {batches:?}"
        );
    } else {
        println!("writes took {wrote_for:?}: the transaction count is not checked");
    }
    assert_eq!(rows(&store, "mine").await, own, "each own event once");

    shutdown.cancel();
    runner.await.expect("runner");
    rebuild(&store, mine.as_ref(), |_, _| {})
        .await
        .expect("rebuild");
    assert_eq!(rows(&store, "mine").await, own, "rebuild equals live");
    db.drop().await;
}
