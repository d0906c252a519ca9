//! `just bench`: what a `project` process costs the log's database, fed by the log (`--source
//! log`) or by JetStream (`--source nats`) (issue #31 item 3).
//!
//! A fresh log gets `SOURCE_EVENTS` events (default 20 000, in appends of 100 on 200 streams);
//! a real `palimpsest relay` publishes them and is stopped. Then, for each source in turn, a
//! real `palimpsest project` with every read model in a fresh read database of its own catches
//! up from position 0, is stopped, and the log database's counters (`pg_stat_database`:
//! transactions, rows returned and fetched, blocks read or hit) are read before and after:
//! nothing else runs on the log then, so the difference is that process's cost to the log,
//! start-up included. Printed beside it: the same counters for an idle window of the same
//! length with no process (the floor), and each catch-up's time.

use palimpsest_e2e::chaos::processes::{Env, Proc};
use palimpsest_e2e::postgres::connect;
use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::relay::STREAM_NAME;
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_testkit::{NatsServer, TestDb, free_port};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_postgres::Client;

/// The counters of one database.
#[derive(Debug, Clone, Copy)]
struct Counters {
    transactions: i64,
    rows: i64,
    blocks: i64,
}

impl Counters {
    fn since(self, before: Counters) -> Counters {
        Counters {
            transactions: self.transactions - before.transactions,
            rows: self.rows - before.rows,
            blocks: self.blocks - before.blocks,
        }
    }
}

/// The log database's counters, once every backend has flushed its statistics.
async fn counters(admin: &Client, database: &str) -> Counters {
    // Backends flush their statistics at most once a second.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    admin
        .batch_execute("SELECT pg_stat_clear_snapshot()")
        .await
        .expect("clear snapshot");
    let row = admin
        .query_one(
            "SELECT xact_commit + xact_rollback, tup_returned + tup_fetched, blks_read + blks_hit \
             FROM pg_stat_database WHERE datname = $1",
            &[&database],
        )
        .await
        .expect("pg_stat_database");
    Counters {
        transactions: row.get(0),
        rows: row.get(1),
        blocks: row.get(2),
    }
}

fn events() -> usize {
    std::env::var("SOURCE_EVENTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000)
}

/// Every read model's checkpoint in `reads` is at `head`.
async fn caught_up(reads: &Client, head: i64) -> bool {
    let rows = reads
        .query(
            "SELECT table_schema::text FROM information_schema.tables \
             WHERE table_name = 'projection_checkpoint'",
            &[],
        )
        .await
        .unwrap_or_default();
    if rows.len() < 6 {
        return false;
    }
    for row in rows {
        let schema: String = row.get(0);
        let sql = format!("SELECT position FROM {schema}.projection_checkpoint");
        match reads.query_one(&sql, &[]).await {
            Ok(row) if row.get::<_, i64>(0) == head => {}
            _ => return false,
        }
    }
    true
}

/// Runs `project` with `source` into a fresh read database until it has caught up with
/// `head`, stops it; its cost to the log and how long the catch-up took.
async fn measure(
    env: &Env,
    admin: &Client,
    log: &str,
    source: &str,
    head: i64,
) -> (Counters, Duration) {
    let reads = TestDb::create().await;
    let mut env = env.clone();
    env.extra = vec![
        ("PALIMPSEST_PROJECTOR_SOURCE".into(), source.into()),
        (
            "PALIMPSEST_READ_DATABASE_URLS".into(),
            format!("all={}", reads.url()),
        ),
    ];
    let before = counters(admin, log).await;
    let started = Instant::now();
    let mut project = Proc::start("project", free_port(), &env).await;
    let client = connect(reads.url()).await;
    while !caught_up(&client, head).await {
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "{source}: no catch-up"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = started.elapsed();
    project.stop().await;
    let cost = counters(admin, log).await.since(before);
    drop(client);
    reads.drop().await;
    (cost, took)
}

#[tokio::main]
async fn main() {
    let total = events();
    let db = TestDb::create().await;
    let nats = NatsServer::start().await;
    let data_dir = tempfile::tempdir().expect("data dir");
    let env = Env {
        database_url: db.url().to_owned(),
        nats_url: nats.url(),
        replicas: 1,
        data_dir: data_dir.path().to_path_buf(),
        extra: Vec::new(),
    };
    let store = EventStore::connect(db.url()).await.expect("log");
    for batch in 0..total.div_ceil(100) {
        let mut request = AppendRequest::new();
        for stream in 0..2 {
            let name = StreamName::new(
                "bench",
                "source",
                format!("s{}", (batch * 2 + stream) % 200),
            )
            .expect("stream");
            let events = (0..50)
                .map(|i| NewEvent::new("Measured", 1, json!({"batch": batch, "i": i})))
                .collect();
            request = request.stream(name, ExpectedVersion::Any, events);
        }
        store.append(request).await.expect("append");
    }
    let head = store.head_position().await.expect("head");
    drop(store);
    let mut relay = Proc::start("relay", free_port(), &env).await;
    let client = async_nats::connect(nats.url()).await.expect("nats");
    let stream = async_nats::jetstream::new(client);
    let started = Instant::now();
    loop {
        let published = match stream.get_stream(STREAM_NAME).await {
            Ok(mut s) => s.info().await.map(|i| i.state.last_sequence).unwrap_or(0),
            Err(_) => 0,
        };
        if published as i64 >= head {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the relay never published"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    relay.stop().await;

    let admin = connect(&palimpsest_testkit::admin_url()).await;
    let log = db.name().to_owned();
    let (from_log, log_took) = measure(&env, &admin, &log, "log", head).await;
    let (from_nats, nats_took) = measure(&env, &admin, &log, "nats", head).await;
    let idle_before = counters(&admin, &log).await;
    tokio::time::sleep(log_took.max(nats_took)).await;
    let idle = counters(&admin, &log).await.since(idle_before);

    println!(
        "project catching up {head} events into a read database apart; cost to the log database:"
    );
    println!("| source | catch-up | transactions | rows returned+fetched | blocks read+hit |");
    println!("|---|---|---|---|---|");
    for (source, cost, took) in [
        ("log", from_log, log_took),
        ("nats", from_nats, nats_took),
        ("(idle, no process)", idle, log_took.max(nats_took)),
    ] {
        println!(
            "| {source} | {:.2} s | {} | {} | {} |",
            took.as_secs_f64(),
            cost.transactions,
            cost.rows,
            cost.blocks
        );
    }
    println!(
        "rows read from the log per event: log {:.2}, nats {:.4}",
        from_log.rows as f64 / head as f64,
        from_nats.rows as f64 / head as f64
    );
    db.drop().await;
}
