//! The pads benchmark: `appendText` throughput and `getText` latency at an early and a late
//! revision, through the real router (HTTP, event log, projector, read model) on a database of
//! its own, created on the server `DATABASE_URL` names and dropped at the end.
//!
//! ```text
//! DATABASE_URL=postgres://postgres@127.0.0.1:5432/palimpsest cargo bench -p palimpsest-pads --bench pads
//! ```
//!
//! `PADS_BENCH_REVISIONS` (default 10000) sets how many revisions the pad gets,
//! `PADS_BENCH_SAMPLES` (default 300) how many `getText` calls each latency is measured over,
//! `PADS_BENCH_WRITERS` (default 8) how many concurrent writers the second throughput run uses.

use palimpsest_web::AppState;
use std::time::{Duration, Instant};
use tokio_postgres::NoTls;
use tokio_util::sync::CancellationToken;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The server URL of `DATABASE_URL` with its database replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
    let (base, rest) = url.rsplit_once('/').unwrap_or((url, ""));
    let query = rest
        .split_once('?')
        .map(|(_, q)| format!("?{q}"))
        .unwrap_or_default();
    format!("{base}/{database}{query}")
}

async fn admin(url: &str, sql: &str) {
    let (client, connection) = tokio_postgres::connect(&with_database(url, "postgres"), NoTls)
        .await
        .expect("cannot reach the Postgres server of DATABASE_URL");
    tokio::spawn(connection);
    client.batch_execute(sql).await.expect("admin statement");
}

struct Bench {
    http: reqwest::Client,
    base: String,
    key: String,
}

impl Bench {
    async fn call(&self, function: &str, params: &[(&str, &str)]) -> serde_json::Value {
        let mut query: Vec<(&str, &str)> = vec![("apikey", &self.key)];
        query.extend_from_slice(params);
        let res = self
            .http
            .get(format!("{}/api/1.3.0/{function}", self.base))
            .query(&query)
            .send()
            .await
            .expect("request");
        let body: serde_json::Value = res.json().await.expect("json");
        assert_eq!(body["code"], 0, "{function}: {body}");
        body["data"].clone()
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

async fn latency(bench: &Bench, pad: &str, rev: &str, samples: usize) -> (Duration, Duration) {
    let mut times = Vec::with_capacity(samples);
    for _ in 0..samples {
        let started = Instant::now();
        bench.call("getText", &[("padID", pad), ("rev", rev)]).await;
        times.push(started.elapsed());
    }
    times.sort();
    (percentile(&times, 0.5), percentile(&times, 0.99))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[tokio::main]
async fn main() {
    let url = std::env::var("DATABASE_URL")
        .unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/palimpsest".into());
    let revisions = env_number("PADS_BENCH_REVISIONS", 10_000);
    let samples = env_number("PADS_BENCH_SAMPLES", 300);
    let writers = env_number("PADS_BENCH_WRITERS", 8);
    let db = format!("palimpsest_bench_pads_{}", uuid::Uuid::new_v4().simple());
    admin(&url, &format!("CREATE DATABASE {db}")).await;
    let db_url = with_database(&url, &db);

    let data_dir = std::env::temp_dir().join(&db);
    let state = AppState::connect(&db_url, data_dir.clone(), Default::default())
        .await
        .expect("state");
    let shutdown = CancellationToken::new();
    palimpsest_projections::spawn_runner(
        state.store.clone(),
        palimpsest_pads::projection(),
        Some(state.watch.clone()),
        shutdown.clone(),
    );
    let app = axum::Router::new().nest("/pads", palimpsest_pads::router(state.clone()));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let stop = shutdown.clone();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    });
    let key = std::fs::read_to_string(data_dir.join("APIKEY.txt")).expect("api key");
    let bench = Bench {
        http: reqwest::Client::new(),
        base: format!("http://{addr}/pads"),
        key: key.trim().to_owned(),
    };
    // Wait for the projector to create its schema.
    loop {
        let client = state.read.get().await.expect("client");
        let ready: bool = client
            .query_one("SELECT to_regclass('pads.store') IS NOT NULL", &[])
            .await
            .expect("query")
            .get(0);
        if ready {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    println!("pads bench: {revisions} revisions, {samples} samples per latency, database {db}");
    bench
        .call("createPad", &[("padID", "bench"), ("text", "")])
        .await;
    let started = Instant::now();
    for i in 1..=revisions {
        bench
            .call(
                "appendText",
                &[("padID", "bench"), ("text", &format!("{i} "))],
            )
            .await;
    }
    let one_writer = started.elapsed();
    println!(
        "appendText, 1 writer:  {:>8.0} ops/s ({} revisions in {:.1}s)",
        revisions as f64 / one_writer.as_secs_f64(),
        revisions,
        one_writer.as_secs_f64()
    );

    let per_writer = (revisions / 10).max(1);
    for w in 0..writers {
        bench
            .call("createPad", &[("padID", &format!("w{w}")), ("text", "")])
            .await;
    }
    let started = Instant::now();
    let runs: Vec<_> = (0..writers)
        .map(|w| {
            let bench = &bench;
            async move {
                let pad = format!("w{w}");
                for i in 0..per_writer {
                    bench
                        .call("appendText", &[("padID", &pad), ("text", &format!("{i} "))])
                        .await;
                }
            }
        })
        .collect();
    futures::future::join_all(runs).await;
    let many = started.elapsed();
    println!(
        "appendText, {writers} writers: {:>8.0} ops/s ({} revisions in {:.1}s)",
        (writers * per_writer) as f64 / many.as_secs_f64(),
        writers * per_writer,
        many.as_secs_f64()
    );

    let late = revisions.to_string();
    let before_key = (revisions - revisions % 100)
        .saturating_sub(1)
        .max(10)
        .to_string();
    for rev in ["10", before_key.as_str(), late.as_str()] {
        let (p50, p99) = latency(&bench, "bench", rev, samples).await;
        println!(
            "getText rev {rev:>6}:    p50 {:>7.2} ms   p99 {:>7.2} ms",
            ms(p50),
            ms(p99)
        );
    }
    let (p50, p99) = {
        let mut times = Vec::with_capacity(samples);
        for _ in 0..samples {
            let started = Instant::now();
            bench.call("getText", &[("padID", "bench")]).await;
            times.push(started.elapsed());
        }
        times.sort();
        (percentile(&times, 0.5), percentile(&times, 0.99))
    };
    println!(
        "getText head:          p50 {:>7.2} ms   p99 {:>7.2} ms",
        ms(p50),
        ms(p99)
    );

    shutdown.cancel();
    drop(bench);
    drop(state);
    tokio::time::sleep(Duration::from_millis(200)).await;
    admin(&url, &format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)")).await;
    let _ = std::fs::remove_dir_all(data_dir);
}
