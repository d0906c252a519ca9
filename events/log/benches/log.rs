//! `just bench` for the log. Each figure is printed beside a floor measured in the same run on
//! the same server, and beside its target:
//!
//! - appends per second with 1, 8 and 64 concurrent writers (1-event and 10-event commands)
//!   against plain INSERTs of as many rows per transaction into an unindexed table, each with
//!   its time budget: queue wait, pool, lock wait, the two round trips, in-process CPU, the
//!   durability wait, Postgres' own time per statement (`pg_stat_statements`) and CPU per event
//!   in this process and in the server;
//! - the projector's catch-up rate against the best append rate;
//! - append → projector-visible latency at half the maximum rate, projector running;
//! - replay (rebuild) against a plain scan of the same rows;
//! - the sequencer design weighed (`support/weigh.rs`): parallel inserts of 10-event commands
//!   into a scratch copy of `log.events` (positions from a sequence) by 1, 2, 8 and 64
//!   connections, and one sequencer's stamping, against the 10-row floor at 64 writers;
//!
//! all of it on an empty log and again on a log that already holds 1,000,000 events; then the
//! signed tree's figures (`support/tree.rs`, `support/tree_proofs.rs`, issue #27), each in a
//! fresh database: appends signed with the tree maker running against plain ones, the head lag
//! at the best append rate, and proof times in a tree of 1,000,000 leaves.
//!
//! The bench starts a private Postgres cluster (`initdb` in a temporary directory, a free port,
//! `pg_stat_statements` loaded) and removes it afterwards; without server binaries it falls back
//! to `PALIMPSEST_TEST_ADMIN_URL`'s server, without per-statement times. `BENCH_SECONDS` sets
//! each phase's length (default 3), `BENCH_GROWTH` the events of the grown log (default 1e6),
//! `BENCH_PARTS` which parts run (comma-separated: `log`, `tree-rate`, `tree-lag`,
//! `tree-proofs`, or `tree` for the three, and `one-call`, the append as one server-side call
//! against the nine statements it replaced, `support/one_call.rs`; default all).

#[path = "support/cluster.rs"]
mod cluster;
#[path = "support/one_call.rs"]
mod one_call;
#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/stamping.rs"]
mod stamping;
#[path = "support/tree.rs"]
mod tree;
#[path = "support/tree_proofs.rs"]
mod tree_proofs;
#[path = "support/weigh.rs"]
mod weigh;

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::budget::{BudgetSnapshot, Phase};
use palimpsest_log::{AppendOptions, AppendRequest, EventStore};
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

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await.expect("connect");
    tokio::spawn(conn);
    client
}

/// Where the bench runs: a private cluster, or a database on the shared server.
struct Server {
    cluster: Option<cluster::Cluster>,
    shared: Option<TestDb>,
    url: String,
}

impl Server {
    async fn start() -> Server {
        match cluster::Cluster::start() {
            Ok(c) => {
                let admin = connect(&c.admin_url()).await;
                admin
                    .batch_execute("CREATE DATABASE bench")
                    .await
                    .expect("create database");
                let url = database_url(&c.admin_url(), "bench");
                connect(&url)
                    .await
                    .batch_execute("CREATE EXTENSION pg_stat_statements")
                    .await
                    .expect("pg_stat_statements");
                println!("server: private cluster at {url} (pg_stat_statements on)");
                Server {
                    cluster: Some(c),
                    shared: None,
                    url,
                }
            }
            Err(why) => {
                println!("server: shared (no private cluster: {why}); no per-statement times");
                let db = TestDb::create().await;
                Server {
                    url: db.url().to_owned(),
                    cluster: None,
                    shared: Some(db),
                }
            }
        }
    }

    /// A fresh, empty database on the same server: its URL, and the shared server's database
    /// to drop afterwards.
    async fn database(&self, name: &str) -> (String, Option<TestDb>) {
        match &self.cluster {
            Some(c) => {
                connect(&c.admin_url())
                    .await
                    .batch_execute(&format!("CREATE DATABASE {name}"))
                    .await
                    .expect("create database");
                (database_url(&c.admin_url(), name), None)
            }
            None => {
                let db = TestDb::create().await;
                (db.url().to_owned(), Some(db))
            }
        }
    }

    /// CPU seconds used so far by the server's processes.
    fn cpu(&self) -> f64 {
        match self.cluster.as_ref().and_then(|c| c.postmaster()) {
            Some(pid) => cluster::cpu_seconds(pid, true),
            None => f64::NAN,
        }
    }

    async fn stop(self) {
        if let Some(db) = self.shared {
            db.drop().await;
        }
        drop(self.cluster);
    }
}

/// The URL of database `name` on the server of `admin`.
fn database_url(admin: &str, name: &str) -> String {
    let base = admin.rsplit_once('/').map(|(b, _)| b).unwrap_or_default();
    format!("{base}/{name}")
}

/// Whether `BENCH_PARTS` (default: all) asks for `part` (`tree` stands for its three parts).
fn wanted(part: &str) -> bool {
    let Ok(parts) = std::env::var("BENCH_PARTS") else {
        return true;
    };
    parts
        .split(',')
        .map(str::trim)
        .any(|p| p == part || (p == "tree" && part.starts_with("tree-")))
}

/// Plain INSERTs of `rows` rows per transaction into an unindexed table by `writers` connections.
async fn insert_floor(url: &str, writers: usize, rows: usize) -> f64 {
    connect(url)
        .await
        .batch_execute(
            "DROP TABLE IF EXISTS floor; CREATE TABLE floor (id uuid, stream text, \
             version bigint, event_type text, payload json, recorded_at timestamptz)",
        )
        .await
        .expect("floor table");
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for w in 0..writers {
        let client = connect(url).await;
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

/// Postgres' own time per statement since the last reset: (short text, calls, total ms).
async fn statements(client: &tokio_postgres::Client) -> Vec<(String, i64, f64)> {
    let Ok(rows) = client
        .query(
            "SELECT query, calls, total_exec_time FROM pg_stat_statements \
             WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) \
             ORDER BY total_exec_time DESC LIMIT 9",
            &[],
        )
        .await
    else {
        return Vec::new();
    };
    rows.iter()
        .map(|r| {
            let q: String = r.get(0);
            let q = q.split_whitespace().collect::<Vec<_>>().join(" ");
            (q.chars().take(48).collect(), r.get(1), r.get(2))
        })
        .collect()
}

fn ms(d: Duration, per: u64) -> f64 {
    d.as_secs_f64() * 1000.0 / per.max(1) as f64
}

/// One append phase with its time budget.
async fn append_phase(
    store: &EventStore,
    server: &Server,
    stats: &tokio_postgres::Client,
    writers: usize,
    events: usize,
    tag: &str,
) -> f64 {
    let _ = stats
        .batch_execute("SELECT pg_stat_statements_reset()")
        .await;
    let before: BudgetSnapshot = store.budget();
    let (cpu_self, cpu_pg) = (
        cluster::cpu_seconds(std::process::id(), false),
        server.cpu(),
    );
    let rate = append_rate(store, writers, events, tag).await;
    let b = store.budget().since(&before);
    let cpu_self = cluster::cpu_seconds(std::process::id(), false) - cpu_self;
    let cpu_pg = server.cpu() - cpu_pg;
    let n = b.batches;
    println!(
        "append: {writers:>2} writers x {events:>2}-event commands {rate:>9.0} events/s \
         ({} batches, {:.1} commands and {:.0} events a batch)",
        n,
        b.commands as f64 / n.max(1) as f64,
        b.events as f64 / n.max(1) as f64
    );
    println!(
        "  budget per batch (ms): queue wait {:.2}/command | pool {:.2} | lock wait {:.2} | \
         reads round trip {:.2} | plan CPU {:.2} | writes+COMMIT round trip {:.2} | durable {:.2}",
        ms(b.queue_wait, b.commands),
        ms(b.phase(Phase::Pool), n),
        ms(b.phase(Phase::LockWait), n),
        ms(b.phase(Phase::Reads), n),
        ms(b.phase(Phase::Plan), n),
        ms(b.phase(Phase::Writes), n),
        ms(b.phase(Phase::Durable), n),
    );
    let per_event = |s: f64| s * 1e6 / b.events.max(1) as f64;
    println!(
        "  CPU per event (us): this process {:.1} | Postgres {:.1}",
        per_event(cpu_self),
        per_event(cpu_pg)
    );
    let statements = statements(stats).await;
    if !statements.is_empty() {
        println!("  Postgres time per batch (ms), by statement:");
        for (q, calls, total) in statements {
            println!(
                "    {:>7.3}  ({calls:>6} calls)  {q}",
                total / n.max(1) as f64
            );
        }
    }
    rate
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// Appends at `rate` commands/s for a phase, each waiting until the projector shows it.
async fn latency(store: &EventStore, url: &str, rate: f64) -> Latency {
    let watch = ProjectionWatch::start(url, store.pool().clone()).expect("watch");
    let interval = Duration::from_secs_f64(1.0 / rate.max(1.0));
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
            let appended_ms = t0.elapsed().as_secs_f64() * 1000.0;
            let seen = watch
                .wait_for(
                    "stream_heads",
                    appended.last_position,
                    Duration::from_secs(10),
                )
                .await;
            (seen, appended_ms, t0.elapsed().as_secs_f64() * 1000.0)
        }));
    }
    let sent = i as f64 / started.elapsed().as_secs_f64();
    let mut appends = Vec::new();
    for t in tasks {
        if let Ok((true, append_ms, ms)) = t.await {
            latencies.push(ms);
            appends.push(append_ms);
        }
    }
    latencies.sort_by(f64::total_cmp);
    appends.sort_by(f64::total_cmp);
    Latency {
        sent,
        samples: latencies.len(),
        p50: percentile(&latencies, 0.50),
        p99: percentile(&latencies, 0.99),
        append_p50: percentile(&appends, 0.50),
        append_p99: percentile(&appends, 0.99),
    }
}

/// Append → visible latencies (ms), and the append's own part (until it is durable).
struct Latency {
    sent: f64,
    samples: usize,
    p50: f64,
    p99: f64,
    append_p50: f64,
    append_p99: f64,
}

/// The projector from its checkpoint to the head: events per second.
async fn catch_up(store: &EventStore, client: &tokio_postgres::Client) -> (f64, i64) {
    let head = store.head_position().await.expect("head");
    let from: i64 = client
        .query_one(
            "SELECT coalesce((SELECT position FROM stream_heads.projection_checkpoint \
             WHERE name = 'stream_heads'), 0)",
            &[],
        )
        .await
        .map(|r| r.get(0))
        .unwrap_or(0);
    let shutdown = CancellationToken::new();
    let started = Instant::now();
    let runner = spawn_runner(store.clone(), Arc::new(StreamHeads), None, shutdown.clone());
    loop {
        let at: Option<i64> = client
            .query_one(
                "SELECT (SELECT position FROM stream_heads.projection_checkpoint \
                 WHERE name = 'stream_heads')",
                &[],
            )
            .await
            .ok()
            .and_then(|r| r.get(0));
        if at.is_some_and(|p| p >= head) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let rate = (head - from) as f64 / started.elapsed().as_secs_f64();
    shutdown.cancel();
    let _ = runner.await;
    (rate, head - from)
}

/// A CPU profile (Linux `perf`, sampling) of this process and the cluster's backends while 64
/// writers append 1-event commands: the top symbols by share of samples. Skipped without `perf`
/// or a private cluster.
async fn profile(store: &EventStore, server: &Server) {
    let Some(postmaster) = server.cluster.as_ref().and_then(|c| c.postmaster()) else {
        return;
    };
    let mut pids = vec![std::process::id()];
    pids.extend(cluster::children(postmaster));
    let pids: Vec<String> = pids.iter().map(u32::to_string).collect();
    let data = std::env::temp_dir().join(format!("palimpsest-bench-{}.perf", std::process::id()));
    let Some(data_path) = data.to_str().map(str::to_owned) else {
        return;
    };
    let recorder = tokio::process::Command::new("perf")
        // System-wide (per-process sampling gets nothing in this VM), filtered when reported.
        .args([
            "record",
            "-e",
            "cpu-clock",
            "-F",
            "499",
            "-a",
            "-o",
            &data_path,
        ])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn();
    let Ok(mut recorder) = recorder else {
        println!("profile: no perf on this machine");
        return;
    };
    let rate = append_rate(store, 64, 1, "profile").await;
    if let Some(id) = recorder.id() {
        let _ = tokio::process::Command::new("kill")
            .args(["-INT", &id.to_string()])
            .status()
            .await;
    }
    let _ = recorder.wait().await;
    let report = tokio::process::Command::new("perf")
        .args([
            "report",
            "-i",
            &data_path,
            "--stdio",
            "--sort",
            "comm,dso,sym",
        ])
        .arg(format!("--pid={}", pids.join(",")))
        // Shares of this process's and the cluster's samples, not of the whole machine's.
        .args([
            "--percentage",
            "relative",
            "--percent-limit",
            "1",
            "--no-children",
        ])
        .output()
        .await;
    let _ = std::fs::remove_file(&data);
    println!("profile: CPU samples while 64 writers append 1-event commands ({rate:.0} events/s):");
    match report {
        Ok(out) => {
            let text = String::from_utf8_lossy(&out.stdout);
            let lines: Vec<&str> = text
                .lines()
                .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
                .take(30)
                .collect();
            if lines.is_empty() {
                println!(
                    "  (no samples for pids {}: {})",
                    pids.join(","),
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            for line in lines {
                println!("  {line}");
            }
        }
        Err(e) => println!("  (perf report failed: {e})"),
    }
}

/// The appender's pipeline on and off, alternating in the same run (A B A B) so the machine's
/// noise shows beside the difference.
async fn compare_pipelining(url: &str) {
    println!(
        "-- option: batches pipelined on one connection (depth 4) vs one at a time (depth 1, chosen) --"
    );
    let mut stores = Vec::new();
    for depth in [1usize, 4] {
        let pool = palimpsest_log::store::pool(url, 16).expect("pool");
        let options = AppendOptions {
            pipeline_depth: depth,
            ..AppendOptions::default()
        };
        stores.push((
            depth,
            EventStore::with_options(url, pool, options)
                .await
                .expect("store"),
        ));
    }
    for events in [1, 10] {
        let mut line = format!("64 writers x {events:>2}-event:");
        for round in 0..2 {
            for (depth, store) in &stores {
                let tag = format!("pipe-{depth}-{events}-{round}");
                let rate = append_rate(store, 64, events, &tag).await;
                line.push_str(&format!(" depth {depth} {rate:>7.0}/s |"));
            }
        }
        println!("{line}");
    }
}

/// A lone batch committed synchronously (chosen) vs asynchronously with the separate
/// durability commit, alternating in the same run (A B A B).
async fn compare_flush_when_alone(url: &str) {
    println!(
        "-- option: a lone batch commits synchronously (flush, chosen) vs asynchronously + \
         durability commit (defer) --"
    );
    let mut stores = Vec::new();
    for flush in [true, false] {
        let pool = palimpsest_log::store::pool(url, 16).expect("pool");
        let options = AppendOptions {
            flush_when_alone: flush,
            ..AppendOptions::default()
        };
        let store = EventStore::with_options(url, pool, options)
            .await
            .expect("store");
        stores.push((if flush { "flush" } else { "defer" }, store));
    }
    for (writers, events) in [(1, 1), (64, 1), (64, 10)] {
        let mut line = format!("{writers:>2} writers x {events:>2}-event:");
        for round in 0..2 {
            for (name, store) in &stores {
                let tag = format!("alone-{name}-{writers}-{events}-{round}");
                let rate = append_rate(store, writers, events, &tag).await;
                line.push_str(&format!(" {name} {rate:>7.0}/s |"));
            }
        }
        println!("{line}");
    }
}

/// Every figure on the log as it stands.
async fn suite(store: &EventStore, server: &Server, label: &str) {
    let url = server.url.as_str();
    let stats = connect(url).await;
    let events_before = store.head_position().await.expect("head");
    println!(
        "\n== log with {events_before} events: appends (events/s; {:.0}s a phase) ==",
        phase().as_secs_f64()
    );
    let floor_1_row_64 = insert_floor(url, 64, 1).await;
    let floor_1_row_1 = insert_floor(url, 1, 1).await;
    let floor_10_row_64 = insert_floor(url, 64, 10).await;
    println!("floor: plain 1-row INSERT per transaction,   1 writer  {floor_1_row_1:>9.0} rows/s");
    println!("floor: plain 1-row INSERT per transaction,  64 writers {floor_1_row_64:>9.0} rows/s");
    println!(
        "floor: plain 10-row INSERT per transaction, 64 writers {floor_10_row_64:>9.0} rows/s"
    );
    let mut rates = std::collections::HashMap::new();
    for writers in [1, 8, 64] {
        for events in [1, 10] {
            let tag = format!("{label}-{events}-{writers}");
            let rate = append_phase(store, server, &stats, writers, events, &tag).await;
            rates.insert((writers, events), rate);
        }
    }
    if events_before == 0 {
        profile(store, server).await;
        compare_pipelining(url).await;
        compare_flush_when_alone(url).await;
    }
    let r = |w, e| rates.get(&(w, e)).copied().unwrap_or(0.0);
    let max_rate = rates.values().copied().fold(0.0, f64::max);
    println!("-- ratios to floors (log of {events_before} events) --");
    println!(
        "ratio: 1-event x64 / 1-row floor x64   = {:>5.2} (target >= 1.0)",
        r(64, 1) / floor_1_row_64
    );
    println!(
        "ratio: 10-event x64 / 10-row floor x64 = {:>5.2} (target >= 0.70)",
        r(64, 10) / floor_10_row_64
    );
    println!(
        "ratio: 1-event x1 / 1-row floor x1     = {:>5.2} (target >= 0.80)",
        r(1, 1) / floor_1_row_1
    );

    let (projector, backlog) = catch_up(store, &stats).await;
    println!(
        "projector: stream_heads catch-up {projector:>9.0} events/s over {backlog} events; \
         best append {max_rate:.0} events/s; ratio {:.2} (target >= 1.0)",
        projector / max_rate
    );

    let shutdown = CancellationToken::new();
    let runner = spawn_runner(store.clone(), Arc::new(StreamHeads), None, shutdown.clone());
    let half = r(64, 1) / 2.0;
    let l = latency(store, url, half).await;
    println!(
        "latency: append -> projector-visible at {:.0} commands/s (half of 1-event x64; \
         {} samples): p50 {:.2} ms, p99 {:.2} ms (target p99 <= 25 ms)",
        l.sent, l.samples, l.p50, l.p99
    );
    println!(
        "  of which the append until durable: p50 {:.2} ms, p99 {:.2} ms",
        l.append_p50, l.append_p99
    );
    shutdown.cancel();
    let _ = runner.await;

    let total = store.head_position().await.expect("head");
    let client = store.pool().get().await.expect("client");
    let t0 = Instant::now();
    let rows = client
        .query("SELECT * FROM log.events", &[])
        .await
        .expect("scan");
    let scan = rows.len() as f64 / t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let decoded = palimpsest_log::rows::to_events(&rows)
        .expect("decode")
        .len();
    let decode = decoded as f64 / t1.elapsed().as_secs_f64();
    drop(rows);
    let report = rebuild(store, &StreamHeads, |_, _| {})
        .await
        .expect("rebuild");
    let replay = report.events as f64 / report.seconds;
    println!("floor: plain SELECT scan of the log  {scan:>10.0} rows/s ({total} rows)");
    println!("  decoding those rows into envelopes (one thread) {decode:>10.0} events/s");
    println!("replay: stream_heads rebuild         {replay:>10.0} events/s");
    println!(
        "  replay budget (s of {:.2}): waiting for reads+decoding {:.2} | apply_batch {:.2} | \
         checkpoint+BEGIN+COMMIT {:.2}",
        report.seconds, report.reading_wait, report.applying, report.committing
    );
    println!(
        "ratio: replay / scan = {:.2} (target >= 0.50)",
        replay / scan
    );
    weigh::sequencer(url, label, events_before > 0, floor_10_row_64).await;
}

/// Grows the log to `target` events with plain SQL, shaped like the 10-event commands: runs of
/// ten events per stream over 100,000 streams (the hashes are not chains, which only `audit`
/// would notice), then analyses it.
async fn grow(url: &str, target: i64) {
    let client = connect(url).await;
    let started = Instant::now();
    let chunk = 100_000i64;
    loop {
        let head: i64 = client
            .query_one("SELECT position FROM log.head", &[])
            .await
            .expect("head")
            .get(0);
        if head >= target {
            break;
        }
        let n = chunk.min(target - head);
        client
            .batch_execute(&format!(
                "BEGIN; SELECT pg_advisory_xact_lock({lock});
                 INSERT INTO log.events (position, event_id, context, category, stream_key,
                     version, event_type, schema_version, payload, recorded_at, prev_hash, hash)
                 SELECT p, gen_random_uuid(), 'bench', 'grown', 'g' || ((p - 1) / 10) % 100000,
                     (p - 1) / 1000000 * 10 + (p - 1) % 10 + 1, 'Happened', 1,
                     json_build_object('changeset', 'Z:1>5+5$hello', 'n', p), now(), NULL,
                     sha256(int8send(p))
                 FROM generate_series({head} + 1, {head} + {n}) p;
                 INSERT INTO log.streams (context, category, stream_key, version, last_hash)
                 SELECT 'bench', 'grown', stream_key, max(version), sha256(''::bytea)
                 FROM log.events WHERE position > {head} AND position <= {head} + {n}
                 GROUP BY stream_key
                 ON CONFLICT (context, category, stream_key)
                 DO UPDATE SET version = greatest(log.streams.version, excluded.version);
                 UPDATE log.head SET position = {head} + {n};
                 COMMIT;",
                lock = palimpsest_log::APPEND_LOCK_KEY,
            ))
            .await
            .expect("grow");
    }
    for table in ["log.events", "log.streams"] {
        client
            .batch_execute(&format!("VACUUM ANALYZE {table}"))
            .await
            .expect("analyze");
    }
    println!(
        "\ngrew the log to {target} events in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

#[tokio::main]
async fn main() {
    let server = Server::start().await;
    if wanted("log") {
        log_suites(&server).await;
    }
    if wanted("tree-rate") {
        tree::append_cost(&server).await;
    }
    if wanted("tree-lag") {
        tree::head_lag(&server).await;
    }
    if wanted("tree-proofs") {
        tree_proofs::proof_times(&server).await;
    }
    if wanted("one-call") {
        one_call::compare(&server).await;
    }
    server.stop().await;
}

/// The log's figures on an empty log, then on a grown one.
async fn log_suites(server: &Server) {
    let store = EventStore::connect(&server.url).await.expect("connect");
    suite(&store, server, "empty").await;
    let growth = std::env::var("BENCH_GROWTH")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .unwrap_or(1e6) as i64;
    if growth > 0 {
        let head = store.head_position().await.expect("head");
        grow(&server.url, head + growth).await;
        suite(&store, server, "grown").await;
    }
}
