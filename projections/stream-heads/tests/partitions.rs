//! `stream_heads` split into partitions of its streams: shared out between processes, taken
//! over when one dies, rebalanced when one joins, every event applied once, a rebuild equal to
//! live; a write waits for its own stream's partition only; changing the split rebuilds.

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_projections::partition::{lease, partition_name, partition_of};
use palimpsest_projections::{
    ProjectionWatch, ReadDatabase, WaitError, ensure_in, ensure_partitions, rebuild,
    spawn_partitioned_runner,
};
use palimpsest_stream_heads::StreamHeads;
use palimpsest_testkit::TestDb;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn stream(key: &str) -> StreamName {
    StreamName::new("pads", "pad", key).expect("stream")
}

async fn append(store: &EventStore, key: &str) -> i64 {
    let event = NewEvent::new("Happened", 1, json!({}));
    store
        .append(AppendRequest::new().stream(stream(key), ExpectedVersion::Any, vec![event]))
        .await
        .expect("append")
        .last_position
}

/// One `project` process's runner of `stream_heads` in `count` partitions.
fn process(store: &EventStore, count: u32) -> CancellationToken {
    let stop = CancellationToken::new();
    let read = ReadDatabase::of_log(store);
    let heads = Arc::new(StreamHeads);
    spawn_partitioned_runner(store.clone(), read, heads, count, None, stop.clone());
    stop
}

/// `(key, version, last_position)` of every stream_heads row.
async fn heads(store: &EventStore) -> Vec<(String, i64, i64)> {
    let client = store.pool().get().await.expect("client");
    let rows = client
        .query(
            "SELECT stream_key, version, last_position FROM stream_heads.stream_heads ORDER BY 1",
            &[],
        )
        .await
        .expect("heads");
    rows.iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

/// What the log says each stream's head is.
async fn expected(store: &EventStore) -> Vec<(String, i64, i64)> {
    let client = store.pool().get().await.expect("client");
    let rows = client
        .query(
            "SELECT stream_key, max(version), max(position) FROM log.events GROUP BY 1 ORDER BY 1",
            &[],
        )
        .await
        .expect("log");
    rows.iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

async fn shares(store: &EventStore) -> Vec<i64> {
    let client = store.pool().get().await.expect("client");
    lease::shares(&client, "stream_heads")
        .await
        .expect("shares")
}

/// Polls `check` until it holds, at most `within`; how long it took.
async fn until<F, Fut>(within: Duration, what: &str, mut check: F) -> Duration
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let started = Instant::now();
    while !check().await {
        assert!(started.elapsed() < within, "{what} within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    started.elapsed()
}

#[tokio::test]
async fn partitions_are_shared_out_taken_over_and_rebalanced_and_rebuild_equals_live() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    for i in 0..60 {
        append(&store, &format!("pad-{}", i % 30)).await;
    }
    let first = process(&store, 8);
    let _second = process(&store, 8);
    let _third = process(&store, 8);
    until(
        Duration::from_secs(10),
        "8 partitions shared by 3",
        || async { shares(&store).await == [3, 3, 2] },
    )
    .await;
    until(Duration::from_secs(10), "every stream's head", || async {
        heads(&store).await == expected(&store).await
    })
    .await;

    // The first process dies: its partitions go to the two others.
    first.cancel();
    for i in 0..30 {
        append(&store, &format!("pad-{i}")).await;
    }
    let takeover = until(
        Duration::from_secs(5),
        "its partitions taken over",
        || async { shares(&store).await == [4, 4] },
    )
    .await;
    println!("takeover of a stopped process's partitions: {takeover:?}");
    until(
        Duration::from_secs(10),
        "the events after it applied",
        || async { heads(&store).await == expected(&store).await },
    )
    .await;

    // A new process gets its share from the others.
    let _fourth = process(&store, 8);
    until(
        Duration::from_secs(10),
        "a share for the newcomer",
        || async {
            let now = shares(&store).await;
            now.len() == 3 && now.iter().sum::<i64>() == 8 && now[0] <= 3
        },
    )
    .await;
    for i in 0..30 {
        append(&store, &format!("pad-{i}-late")).await;
    }
    until(
        Duration::from_secs(10),
        "every event applied once more",
        || async { heads(&store).await == expected(&store).await },
    )
    .await;

    let live = heads(&store).await;
    rebuild(&store, &StreamHeads, |_, _| {})
        .await
        .expect("rebuild");
    assert_eq!(heads(&store).await, live, "rebuild equals live");
    db.drop().await;
}

#[tokio::test]
async fn a_write_waits_for_the_partition_of_its_stream_only() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let count = 4;
    let watch = ProjectionWatch::start(db.url(), store.pool().clone())
        .expect("watch")
        .with_partitions([("stream_heads".to_owned(), count)].into());
    let stop = CancellationToken::new();
    let read = ReadDatabase::of_log(&store);
    let heads_model = Arc::new(StreamHeads);
    spawn_partitioned_runner(
        store.clone(),
        read,
        heads_model,
        count,
        Some(watch.clone()),
        stop.clone(),
    );
    until(Duration::from_secs(10), "every partition held", || async {
        shares(&store).await == [4]
    })
    .await;
    let fast = "fast".to_owned();
    let slow = (0..)
        .map(|i| format!("slow-{i}"))
        .find(|k| partition_of(&stream(k), count) != partition_of(&stream(&fast), count))
        .expect("a stream in another partition");

    // Partition of `slow` held up: its next batch waits for this lock.
    let mut blocker = store.pool().get().await.expect("client");
    let held_up = blocker.transaction().await.expect("tx");
    let slow_partition = partition_name("stream_heads", partition_of(&stream(&slow), count), count);
    // The partition's own transaction lock, as its batches take it.
    palimpsest_projections::checkpoint::lock(&held_up, &slow_partition)
        .await
        .expect("lock");
    let slow_at = append(&store, &slow).await;
    let fast_at = append(&store, &fast).await;
    let timeout = Duration::from_secs(10);
    watch
        .wait_until_written("stream_heads", &[stream(&fast)], fast_at, timeout)
        .await
        .expect("the write's own partition applies it while another is held up");
    let short = Duration::from_millis(300);
    let slow_wait = watch
        .wait_until_written("stream_heads", &[stream(&slow)], slow_at, short)
        .await;
    assert!(
        matches!(slow_wait, Err(WaitError::TimedOut { .. })),
        "{slow_wait:?}"
    );
    let whole = watch
        .wait_until_applied("stream_heads", fast_at, short)
        .await;
    assert!(
        matches!(whole, Err(WaitError::TimedOut { .. })),
        "the whole read model waits for every partition: {whole:?}"
    );
    held_up.rollback().await.expect("release");
    watch
        .wait_until_applied("stream_heads", fast_at, timeout)
        .await
        .expect("every partition once released");
    assert_eq!(heads(&store).await, expected(&store).await);
    stop.cancel();
    db.drop().await;
}

#[tokio::test]
async fn changing_the_split_rebuilds_the_read_model() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    for i in 0..10 {
        append(&store, &format!("pad-{i}")).await;
    }
    let read = ReadDatabase::of_log(&store);
    let partitions = || async {
        let client = store.pool().get().await.expect("client");
        let rows = client
            .query(
                "SELECT name, position FROM stream_heads.projection_checkpoint ORDER BY name",
                &[],
            )
            .await
            .expect("checkpoints");
        rows.iter()
            .map(|r| (r.get::<_, String>(0), r.get::<_, i64>(1)))
            .collect::<Vec<_>>()
    };
    ensure_in(&store, &read, &StreamHeads)
        .await
        .expect("one runner");
    palimpsest_projections::runner::apply_next_batch(&store, &StreamHeads, 100)
        .await
        .expect("applied by one runner");
    ensure_partitions(&store, &read, &StreamHeads, 2)
        .await
        .expect("split in two");
    let two = partitions().await;
    assert_eq!(
        two.iter()
            .map(|(n, p)| (n.as_str(), *p))
            .collect::<Vec<_>>(),
        [
            ("stream_heads", 10),
            ("stream_heads/0-of-2", 10),
            ("stream_heads/1-of-2", 10)
        ],
        "split where the one runner left it"
    );
    ensure_partitions(&store, &read, &StreamHeads, 3)
        .await
        .expect("split in three");
    let three: Vec<String> = partitions().await.into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        three,
        [
            "stream_heads",
            "stream_heads/0-of-3",
            "stream_heads/1-of-3",
            "stream_heads/2-of-3"
        ],
        "another split: rebuilt, only the new partitions"
    );
    assert_eq!(heads(&store).await, expected(&store).await, "rebuilt rows");
    ensure_in(&store, &read, &StreamHeads)
        .await
        .expect("one runner again");
    let one: Vec<String> = partitions().await.into_iter().map(|(n, _)| n).collect();
    assert_eq!(one, ["stream_heads"], "back to one runner: rebuilt");
    assert_eq!(heads(&store).await, expected(&store).await);
    db.drop().await;
}
