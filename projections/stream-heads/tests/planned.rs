//! A planned projection ([`Planner`]) run live: its batches go out in one round trip, with the
//! events of its own process taken from memory, and its checkpoint guard keeps two processes
//! running it from applying an event twice or passing one over.

use palimpsest_events::{ExpectedVersion, NewEvent, RecordedEvent, StreamName};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_projections::statement::Statement;
use palimpsest_projections::{
    Planner, Projection, ProjectionError, ProjectionWatch, rebuild, spawn_runner,
};
use palimpsest_testkit::TestDb;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Every event's position, once: a second application breaks the primary key (the runner
/// stops on it), a skipped one leaves a hole.
struct Positions;

#[async_trait::async_trait]
impl Projection for Positions {
    fn name(&self) -> &'static str {
        "positions"
    }

    async fn create_tables(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        schema: &str,
    ) -> Result<(), ProjectionError> {
        tx.batch_execute(&format!(
            "CREATE TABLE {schema}.seen (position bigint PRIMARY KEY, stream_key text NOT NULL)"
        ))
        .await?;
        Ok(())
    }

    fn planner(&self) -> Option<&dyn Planner> {
        Some(self)
    }
}

impl Planner for Positions {
    fn plan(
        &self,
        schema: &str,
        events: &[RecordedEvent],
        out: &mut Vec<Statement>,
    ) -> Result<(), ProjectionError> {
        for event in events {
            out.push(Statement::dml(
                format!("INSERT INTO {schema}.seen (position, stream_key) VALUES ($1, $2)"),
                vec![Box::new(event.position), Box::new(event.stream.key.clone())],
            ));
        }
        Ok(())
    }
}

async fn append(store: &EventStore, key: &str) -> i64 {
    let stream = StreamName::new("test", "thing", key).expect("stream");
    let event = NewEvent::new("Happened", 1, json!({ "key": key }));
    store
        .append(AppendRequest::new().stream(stream, ExpectedVersion::Any, vec![event]))
        .await
        .expect("append")
        .last_position
}

async fn seen(store: &EventStore, schema: &str) -> Vec<(i64, String)> {
    let client = store.pool().get().await.expect("client");
    client
        .query(
            &format!("SELECT position, stream_key FROM {schema}.seen ORDER BY position"),
            &[],
        )
        .await
        .expect("seen")
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

async fn stalled(store: &EventStore) -> Option<serde_json::Value> {
    let client = store.pool().get().await.expect("client");
    client
        .query_one("SELECT stalled FROM positions.projection_checkpoint", &[])
        .await
        .expect("checkpoint")
        .get(0)
}

#[tokio::test]
async fn a_live_planned_projection_applies_every_event_once_and_equals_its_rebuild() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let watch = ProjectionWatch::start(db.url(), store.pool().clone()).expect("watch");
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(
        store.clone(),
        Arc::new(Positions),
        Some(watch.clone()),
        shutdown.clone(),
    );
    let mut last = 0;
    for round in 0..30 {
        let writes = (0..5).map(|i| append(&store, if i % 2 == 0 { "even" } else { "odd" }));
        last = futures::future::join_all(writes)
            .await
            .into_iter()
            .max()
            .unwrap_or(last);
        if round % 10 == 0 {
            assert!(
                watch
                    .wait_for("positions", last, Duration::from_secs(10))
                    .await
            );
        }
    }
    assert!(
        watch
            .wait_for("positions", last, Duration::from_secs(10))
            .await
    );
    let live = seen(&store, "positions").await;
    let positions: Vec<i64> = live.iter().map(|(p, _)| *p).collect();
    assert_eq!(
        positions,
        (1..=last).collect::<Vec<_>>(),
        "every event once"
    );
    assert_eq!(stalled(&store).await, None);
    rebuild(&store, &Positions, |_, _| {})
        .await
        .expect("rebuild");
    assert_eq!(seen(&store, "positions").await, live, "rebuild equals live");
    shutdown.cancel();
    runner.await.expect("runner");
    db.drop().await;
}

/// Two processes run the projection and both append: each runner takes its own process's
/// events from memory while the other moves the checkpoint under it, so its guard keeps failing
/// it back to the log. Every event is applied exactly once, and neither runner stops.
#[tokio::test]
async fn two_processes_running_a_planned_projection_apply_every_event_once() {
    let db = TestDb::create().await;
    let here = EventStore::connect(db.url()).await.expect("connect");
    let there = EventStore::connect(db.url()).await.expect("connect");
    let watch = ProjectionWatch::start(db.url(), here.pool().clone()).expect("watch");
    let shutdown = CancellationToken::new();
    let runners = [&here, &there]
        .map(|store| spawn_runner(store.clone(), Arc::new(Positions), None, shutdown.clone()));
    let mut last = 0;
    for round in 0..40 {
        let (mine, theirs) = (format!("here{}", round % 3), format!("there{}", round % 3));
        let (a, b) = tokio::join!(append(&here, &mine), append(&there, &theirs));
        last = last.max(a).max(b);
        if round % 8 == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    assert!(
        watch
            .wait_for("positions", last, Duration::from_secs(20))
            .await
    );
    let positions: Vec<i64> = seen(&here, "positions")
        .await
        .iter()
        .map(|(p, _)| *p)
        .collect();
    assert_eq!(
        positions,
        (1..=last).collect::<Vec<_>>(),
        "every event once"
    );
    assert_eq!(stalled(&here).await, None, "neither runner stopped");
    shutdown.cancel();
    for runner in runners {
        runner.await.expect("runner");
    }
    db.drop().await;
}
