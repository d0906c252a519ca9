//! A projector that cannot apply an event stops there, loudly (issue 8, defect 2): the stall is
//! recorded and announced, waiting writers fail at once, a rebuild names the event, nothing is
//! skipped, and a fixed projector resumes from that event.

use palimpsest_events::{ExpectedVersion, NewEvent, RecordedEvent, StreamName};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_projections::partition::{partition_name, partition_of};
use palimpsest_projections::{
    Projection, ProjectionError, ProjectionWatch, ReadDatabase, WaitError, rebuild,
    spawn_partitioned_runner, spawn_runner, stall,
};
use palimpsest_stream_heads::StreamHeads;
use palimpsest_testkit::TestDb;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

async fn append(store: &EventStore, key: &str, event_type: &str) -> i64 {
    let stream = StreamName::new("test", "thing", key).expect("stream");
    store
        .append(AppendRequest::new().stream(
            stream,
            ExpectedVersion::Any,
            vec![NewEvent::new(event_type, 1, json!({}))],
        ))
        .await
        .expect("append")
        .last_position
}

/// `stream_heads`, built with a bug: it cannot apply `Poison` events (until fixed).
struct Buggy {
    fixed: bool,
}

#[async_trait::async_trait]
impl Projection for Buggy {
    fn name(&self) -> &'static str {
        "stream_heads"
    }
    fn partitionable(&self) -> bool {
        true
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
        event: &RecordedEvent,
    ) -> Result<(), ProjectionError> {
        if event.event_type == "Poison" && !self.fixed {
            return Err(ProjectionError::Invalid("cannot apply Poison".into()));
        }
        StreamHeads.apply(tx, schema, event).await
    }
}

async fn checkpoint(store: &EventStore) -> i64 {
    let client = store.pool().get().await.expect("client");
    client
        .query_one(
            "SELECT position FROM stream_heads.projection_checkpoint",
            &[],
        )
        .await
        .expect("checkpoint")
        .get(0)
}

#[tokio::test]
async fn a_poison_event_stops_the_projector_loudly_and_a_fixed_one_resumes_from_it() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    for i in 0..3 {
        append(&store, &format!("k{i}"), "Happened").await;
    }
    let poison = append(&store, "bad", "Poison").await;
    let last = append(&store, "k9", "Happened").await;
    let watch = ProjectionWatch::start(db.url(), store.pool().clone()).expect("watch");
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(
        store.clone(),
        Arc::new(Buggy { fixed: false }),
        None,
        shutdown.clone(),
    );

    // A writer waiting for the last event is told at once that the projection is stopped.
    let waited = Instant::now();
    let stall = match watch
        .wait_until_applied("stream_heads", last, Duration::from_secs(10))
        .await
    {
        Err(WaitError::Stalled(stall)) => stall,
        other => panic!("expected a stall, got {other:?}"),
    };
    assert!(
        waited.elapsed() < Duration::from_secs(3),
        "{:?}",
        waited.elapsed()
    );
    assert_eq!(stall.position, poison);
    assert_eq!(stall.event_type, "Poison");
    assert_eq!(stall.stream, "test/thing/bad");
    assert!(stall.error.contains("cannot apply Poison"), "{stall:?}");
    // Everything before it is applied, nothing after it: it skipped nothing.
    assert_eq!(checkpoint(&store).await, poison - 1);
    let client = store.pool().get().await.expect("client");
    let recorded = stall::all(&client).await.expect("stalls");
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].position, poison);
    // A wait for a position before the stall still succeeds.
    assert!(
        watch
            .wait_for("stream_heads", poison - 1, Duration::from_secs(1))
            .await
    );

    // A rebuild names the event too, and leaves the live read model as it was.
    match rebuild(&store, &Buggy { fixed: false }, |_, _| {}).await {
        Err(ProjectionError::Stopped(stopped)) => {
            assert_eq!(stopped.position, poison);
            assert_eq!(stopped.event_type, "Poison");
        }
        other => panic!("expected the rebuild to name the event, got {other:?}"),
    }
    assert_eq!(checkpoint(&store).await, poison - 1);

    // The fixed binary resumes from the event it stopped on.
    shutdown.cancel();
    runner.await.expect("runner");
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(
        store.clone(),
        Arc::new(Buggy { fixed: true }),
        None,
        shutdown.clone(),
    );
    // (Until it has applied that event, waiters are still told it is stopped.)
    let deadline = Instant::now() + Duration::from_secs(10);
    while let Err(e) = watch
        .wait_until_applied("stream_heads", last, Duration::from_secs(1))
        .await
    {
        assert!(Instant::now() < deadline, "did not resume: {e}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(checkpoint(&store).await, last);
    assert!(stall::all(&client).await.expect("stalls").is_empty());
    assert_eq!(watch.stall("stream_heads"), None);
    shutdown.cancel();
    runner.await.expect("runner");
    drop(client);
    db.drop().await;
}

#[tokio::test]
async fn a_poison_event_stops_its_partition_loudly_and_the_others_go_on() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let count = 2;
    let stream = |key: &str| StreamName::new("test", "thing", key).expect("stream");
    let bad_partition = partition_of(&stream("bad"), count);
    let good = (0..)
        .map(|i| format!("good-{i}"))
        .find(|k| partition_of(&stream(k), count) != bad_partition)
        .expect("a stream in the other partition");
    let watch = ProjectionWatch::start(db.url(), store.pool().clone())
        .expect("watch")
        .with_partitions([("stream_heads".to_owned(), count)].into());
    let shutdown = CancellationToken::new();
    spawn_partitioned_runner(
        store.clone(),
        ReadDatabase::of_log(&store),
        Arc::new(Buggy { fixed: false }),
        count,
        Some(watch.clone()),
        shutdown.clone(),
    );
    let poison = append(&store, "bad", "Poison").await;
    let after_poison = append(&store, "bad", "Happened").await;
    let good_at = append(&store, &good, "Happened").await;
    let timeout = Duration::from_secs(15);
    watch
        .wait_until_written("stream_heads", &[stream(&good)], good_at, timeout)
        .await
        .expect("the other partition goes on");
    let stopped = watch
        .wait_until_written("stream_heads", &[stream("bad")], after_poison, timeout)
        .await;
    let Err(WaitError::Stalled(stall)) = stopped else {
        panic!("a write behind the poison fails at once: {stopped:?}");
    };
    assert_eq!(stall.position, poison);
    assert_eq!(
        stall.projection,
        partition_name("stream_heads", bad_partition, count)
    );
    let client = store.pool().get().await.expect("client");
    let recorded = stall::all(&client).await.expect("stalls");
    assert_eq!(
        recorded,
        vec![stall.clone()],
        "recorded beside the partition's checkpoint"
    );
    let partition_checkpoint: i64 = client
        .query_one(
            "SELECT position FROM stream_heads.projection_checkpoint WHERE name = $1",
            &[&stall.projection],
        )
        .await
        .expect("checkpoint")
        .get(0);
    assert!(
        partition_checkpoint < poison,
        "nothing skipped: {partition_checkpoint}"
    );
    shutdown.cancel();
    db.drop().await;
}
