//! `just bench` for the log: appends per second with 1, 8 and 64 concurrent writers (1-event
//! and 10-event commands), append → projector-visible latency at half the maximum rate, and
//! replay speed — each beside a floor measured in the same run on the same server: a plain
//! INSERT of the same rows into an unindexed table, and a plain SELECT scan of the log.
//!
//! Runs against the server of `PALIMPSEST_TEST_ADMIN_URL` (default local), in a database it
//! creates and drops. `BENCH_SECONDS` sets each phase's length (default 3).

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_projections::{ProjectionWatch, rebuild, spawn_runner};
use palimpsest_stream_heads::StreamHeads;
use palimpsest_testkit::TestDb;
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio_postgres::NoTls;
use tokio_util::sync::CancellationToken;

fn phase() -> Duration {
    let secs = std::env::var("BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3.0);
    Duration::from_secs_f64(secs)
}

fn payload(i: u64) -> serde_json::Value {
    json!({ "changeset": "Z:1>5+5$hello", "author": "a.0123456789abcdef", "n": i })
}

/// Plain INSERTs of `rows` rows per transaction into an unindexed table by `writers` connections.
async fn insert_floor(url: &str, writers: usize, rows: usize) -> f64 {
    let (setup, conn) = tokio_postgres::connect(url, NoTls).await.expect("connect");
    tokio::spawn(conn);
    setup
        .batch_execute("DROP TABLE IF EXISTS floor; CREATE UNLOGGED TABLE floor_probe (x int); DROP TABLE floor_probe; \
                        CREATE TABLE floor (id uuid, stream text, version bigint, event_type text, payload json, recorded_at timestamptz)")
        .await
        .expect("floor table");
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for w in 0..writers {
        let (client, conn) = tokio_postgres::connect(url, NoTls).await.expect("connect");
        tokio::spawn(conn);
        let (stop, count) = (stop.clone(), count.clone());
        tasks.push(tokio::spawn(async move {
            let values: String = (0..rows)
                .map(|r| format!("(gen_random_uuid(), 's{w}', {r}, 'Happened', $1, now())"))
                .collect::<Vec<_>>()
                .join(",");
            let stmt = client
                .prepare(&format!("INSERT INTO floor VALUES {values}"))
                .await
                .expect("prepare");
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                i += 1;
                client.execute(&stmt, &[&payload(i)]).await.expect("insert");
                count.fetch_add(rows as u64, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    tokio::time::sleep(phase()).await;
    stop.store(true, Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    let n = count.load(Ordering::Relaxed) as f64;
    for t in tasks {
        let _ = t.await;
    }
    n / elapsed
}

/// Commands of `events` events each, by `writers` concurrent tasks on their own streams.
/// Returns events per second.
async fn append_rate(store: &EventStore, writers: usize, events: usize, tag: &str) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for w in 0..writers {
        let (store, stop, count) = (store.clone(), stop.clone(), count.clone());
        let stream = StreamName::new("bench", "thing", format!("{tag}-{w}")).expect("stream");
        tasks.push(tokio::spawn(async move {
            let mut version = 0i64;
            while !stop.load(Ordering::Relaxed) {
                let batch = (0..events)
                    .map(|i| NewEvent::new("Happened", 1, payload(i as u64)))
                    .collect();
                let expected = if version == 0 {
                    ExpectedVersion::NoStream
                } else {
                    ExpectedVersion::Exact(version)
                };
                store
                    .append(AppendRequest::new().stream(stream.clone(), expected, batch))
                    .await
                    .expect("append");
                version += events as i64;
                count.fetch_add(events as u64, Ordering::Relaxed);
            }
        }));
    }
    let started = Instant::now();
    tokio::time::sleep(phase()).await;
    stop.store(true, Ordering::Relaxed);
    let elapsed = started.elapsed().as_secs_f64();
    let n = count.load(Ordering::Relaxed) as f64;
    for t in tasks {
        let _ = t.await;
    }
    n / elapsed
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    println!(
        "== log: appends (events/s; {:.0}s per phase; same server, same run) ==",
        phase().as_secs_f64()
    );

    let floor_1_row_64 = insert_floor(db.url(), 64, 1).await;
    let floor_1_row_1 = insert_floor(db.url(), 1, 1).await;
    let floor_10_row_64 = insert_floor(db.url(), 64, 10).await;
    println!("floor: plain 1-row INSERT per transaction, 1 writer    {floor_1_row_1:>10.0} rows/s");
    println!(
        "floor: plain 1-row INSERT per transaction, 64 writers  {floor_1_row_64:>10.0} rows/s"
    );
    println!(
        "floor: plain 10-row INSERT per transaction, 64 writers {floor_10_row_64:>10.0} rows/s"
    );
    let mut single64 = 0.0;
    let mut ten64 = 0.0;
    for writers in [1, 8, 64] {
        let single = append_rate(&store, writers, 1, &format!("one-{writers}")).await;
        let ten = append_rate(&store, writers, 10, &format!("ten-{writers}")).await;
        println!("append: {writers:>2} writers, 1-event commands   {single:>10.0} events/s");
        println!("append: {writers:>2} writers, 10-event commands  {ten:>10.0} events/s");
        if writers == 64 {
            (single64, ten64) = (single, ten);
        }
    }
    println!(
        "ratio: 1-event x64 / 1-row floor x64 = {:.2} (target >= 1.0); vs 1-row floor x1 = {:.2}",
        single64 / floor_1_row_64,
        single64 / floor_1_row_1
    );
    println!(
        "ratio: 10-event x64 / 10-row floor x64 = {:.2} (target >= 0.70)",
        ten64 / floor_10_row_64
    );

    // Append -> projector-visible latency at half the maximum single-event rate.
    let shutdown = CancellationToken::new();
    let runner = spawn_runner(store.clone(), Arc::new(StreamHeads), shutdown.clone());
    let watch = ProjectionWatch::start(db.url(), store.pool().clone()).expect("watch");
    let rate = (single64 / 2.0).max(1.0);
    let interval = Duration::from_secs_f64(1.0 / rate);
    let mut latencies = Vec::new();
    let mut tasks = Vec::new();
    let started = Instant::now();
    let mut tick = tokio::time::interval(interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut i = 0u64;
    while started.elapsed() < phase() {
        tick.tick().await;
        i += 1;
        let (store, watch) = (store.clone(), watch.clone());
        let stream = StreamName::new("bench", "latency", format!("l{}", i % 64)).expect("stream");
        tasks.push(tokio::spawn(async move {
            let t0 = Instant::now();
            let appended = store
                .append(AppendRequest::new().stream(
                    stream,
                    ExpectedVersion::Any,
                    vec![NewEvent::new("Happened", 1, payload(i))],
                ))
                .await
                .expect("append");
            let seen = watch
                .wait_for(
                    "stream_heads",
                    appended.last_position,
                    Duration::from_secs(10),
                )
                .await;
            (seen, t0.elapsed().as_secs_f64() * 1000.0)
        }));
    }
    for t in tasks {
        if let Ok((true, ms)) = t.await {
            latencies.push(ms);
        }
    }
    latencies.sort_by(f64::total_cmp);
    println!(
        "latency: append -> projector-visible at {:.0} cmds/s ({} samples): p50 {:.2} ms, p99 {:.2} ms (target p99 <= 25 ms)",
        i as f64 / started.elapsed().as_secs_f64(),
        latencies.len(),
        percentile(&latencies, 0.50),
        percentile(&latencies, 0.99)
    );
    shutdown.cancel();
    let _ = runner.await;

    // Replay versus a raw scan of the same log.
    let total = store.head_position().await.expect("head");
    let client = store.pool().get().await.expect("client");
    let t0 = Instant::now();
    let rows = client
        .query("SELECT * FROM log.events", &[])
        .await
        .expect("scan");
    let scan = rows.len() as f64 / t0.elapsed().as_secs_f64();
    drop(rows);
    let report = rebuild(&store, &StreamHeads, |_, _| {})
        .await
        .expect("rebuild");
    let replay = report.events as f64 / report.seconds;
    println!("floor: plain SELECT scan of the log  {scan:>10.0} rows/s ({total} rows)");
    println!("replay: stream_heads rebuild         {replay:>10.0} events/s");
    println!(
        "ratio: replay / scan = {:.2} (target >= 0.50)",
        replay / scan
    );
    db.drop().await;
}
