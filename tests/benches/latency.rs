//! `just bench`: the latency one client feels (issue #30).
//!
//! The real app ([`TestApp`]: every context, every projector, the tree maker) on a fresh
//! database; one client on one keep-alive connection does each context's typical write, under
//! an Idempotency-Key, and reads it back (untimed) to check that the acknowledged write is
//! readable by the same client:
//!
//! - pads `appendText` (then `getText` ends with it),
//! - docs `PUT` of a new document (then `GET` finds it),
//! - records `insertDoc` (then `getDoc` finds it),
//! - resources upload of a small file (then its `GET` gives its bytes),
//! - atlas commit of a section's snapshot (then the section's commits list it).
//!
//! Each prints p50/p99 beside the targets (p50 ≤ 1.5 ms, p99 ≤ 5 ms) and beside, from the same
//! run on the same database: a plain 1-row `INSERT` committed alone (the floor), the log's own
//! one-writer 1-event append, and `GET /healthz` on the same connection. Per context it also
//! prints where the time goes: the appender's budget per batch and the projector's wait (from
//! the log's head moving to the context's projection showing it, watched in this process), and
//! how far its p50 is above the floor's: every acknowledged write commits durably at least once,
//! so the floor (its fsync included) bounds every write, and the last line says whether that
//! bound is above the target on this machine.
//!
//! `LATENCY_WRITES` (default 300) sets the writes per context, after `LATENCY_WARMUP` (default
//! 30) untimed ones.

use palimpsest_e2e::workload::{Client, form, json_body};
use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::budget::{BudgetSnapshot, Phase};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_testkit::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// The targets of issue #30, in milliseconds.
const TARGET_P50: f64 = 1.5;
const TARGET_P99: f64 = 5.0;

fn env_number(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Latencies of one series, sorted.
struct Series(Vec<Duration>);

impl Series {
    fn of(mut samples: Vec<Duration>) -> Series {
        samples.sort();
        Series(samples)
    }

    /// The `p` quantile in milliseconds.
    fn ms(&self, p: f64) -> f64 {
        if self.0.is_empty() {
            return f64::NAN;
        }
        let i = ((self.0.len() as f64 - 1.0) * p).round() as usize;
        self.0[i.min(self.0.len() - 1)].as_secs_f64() * 1000.0
    }

    fn mean_ms(&self) -> f64 {
        let total: Duration = self.0.iter().sum();
        total.as_secs_f64() * 1000.0 / self.0.len().max(1) as f64
    }
}

/// One context's typical write: made ready once, then written and read back `n` times.
#[derive(Clone, Copy)]
enum Context {
    Pads,
    Docs,
    Records,
    Resources,
    Atlas,
}

impl Context {
    const ALL: [Context; 5] = [
        Context::Pads,
        Context::Docs,
        Context::Records,
        Context::Resources,
        Context::Atlas,
    ];

    fn name(self) -> &'static str {
        match self {
            Context::Pads => "pads",
            Context::Docs => "docs",
            Context::Records => "records",
            Context::Resources => "resources",
            Context::Atlas => "atlas",
        }
    }

    fn write_name(self) -> &'static str {
        match self {
            Context::Pads => "appendText",
            Context::Docs => "PUT /db/{doc}",
            Context::Records => "insertDoc",
            Context::Resources => "PUT files/{name}",
            Context::Atlas => "POST commits",
        }
    }
}

/// The client, its credentials, and what each context's writes build on.
struct Session<'a> {
    client: Client,
    admin: String,
    apikey: String,
    app: &'a TestApp,
    /// The atlas section written to, and its head commit.
    section: Mutex<(String, Value)>,
    /// Distinguishes this run's keys and names.
    run: String,
}

impl Session<'_> {
    async fn prepare(&self, context: Context) {
        let admin = Some(self.admin.as_str());
        match context {
            Context::Pads => {
                let created = form(&[("apikey", &self.apikey), ("padID", "bench"), ("text", "")]);
                self.client
                    .write(
                        Method::POST,
                        "/pads/api/1.3.0/createPad",
                        created,
                        None,
                        None,
                    )
                    .await;
            }
            Context::Docs => {
                let empty = ("application/json", String::new());
                self.client
                    .write(Method::PUT, "/docs/bench", empty, admin, None)
                    .await;
            }
            Context::Records => {
                let class = json!({"clazz": "Book", "sync": true, "pk": ["p1"],
                                   "collections": [], "indexes": []});
                let call = json_body(class);
                self.client
                    .write(Method::POST, "/records/api/declareClass", call, admin, None)
                    .await;
            }
            Context::Resources => {}
            Context::Atlas => {
                let body = json_body(json!({"title": "Bench"}));
                let section = self
                    .client
                    .write(Method::POST, "/atlas/sections", body, admin, None)
                    .await;
                let id = section["id"].as_str().expect("section id").to_owned();
                let lock = json_body(json!({}));
                let path = format!("/atlas/sections/{id}/lock");
                self.client
                    .write(Method::POST, &path, lock, admin, None)
                    .await;
                *self.section.lock().expect("section") = (id, Value::Null);
            }
        }
    }

    /// Write `i` of `context`, timed; gives what the read-back needs.
    async fn write(&self, context: Context, i: usize) -> (Duration, Value) {
        let admin = Some(self.admin.as_str());
        let key = format!("{}-{}-{i}", self.run, context.name());
        let key = Some(key.as_str());
        let (method, path, body, bearer) = match context {
            Context::Pads => {
                let text = format!(" {i}");
                let params = [
                    ("apikey", self.apikey.as_str()),
                    ("padID", "bench"),
                    ("text", &text),
                ];
                let path = "/pads/api/1.3.0/appendText".to_owned();
                (Method::POST, path, form(&params), None)
            }
            Context::Docs => {
                let doc = json!({"type": "note", "n": i, "text": "a small document"});
                (
                    Method::PUT,
                    format!("/docs/bench/d{i}"),
                    json_body(doc),
                    admin,
                )
            }
            Context::Records => {
                let doc = json!({"org": "o1", "data": {"clazz": "Book", "p1": format!("b{i}"),
                                 "title": "a small record", "n": i}});
                let path = "/records/api/insertDoc".to_owned();
                (Method::POST, path, json_body(doc), admin)
            }
            Context::Resources => {
                let path = format!("/resources/@api/deki/pages/1/files/f{i}.txt");
                (
                    Method::PUT,
                    path,
                    ("text/plain", format!("file {i}")),
                    admin,
                )
            }
            Context::Atlas => {
                let (id, head) = self.section.lock().expect("section").clone();
                let mut commit = json!({"snapshot": snapshot(i)});
                if !head.is_null() {
                    commit["expected_head_commit_id"] = head;
                }
                let path = format!("/atlas/sections/{id}/commits");
                (Method::POST, path, json_body(commit), admin)
            }
        };
        let started = Instant::now();
        let answer = self.client.write(method, &path, body, bearer, key).await;
        let took = started.elapsed();
        if let Context::Atlas = context {
            self.section.lock().expect("section").1 = answer["commit"]["id"].clone();
        }
        (took, answer)
    }

    /// Reads write `i` back through the same connection and panics if it is not there.
    async fn read_back(&self, context: Context, i: usize, answer: &Value) {
        let admin = Some(self.admin.as_str());
        match context {
            Context::Pads => {
                let path = format!("/pads/api/1.3.0/getText?apikey={}&padID=bench", self.apikey);
                let (_, body) = self.client.get(&path, None).await;
                let body: Value = serde_json::from_str(&body).expect("getText");
                let text = body["data"]["text"].as_str().unwrap_or_default();
                assert!(
                    text.ends_with(&format!(" {i}\n")),
                    "pads: {i} not read back"
                );
            }
            Context::Docs => {
                let (status, body) = self.client.get(&format!("/docs/bench/d{i}"), admin).await;
                assert_eq!(status, StatusCode::OK, "docs: d{i} not read back: {body}");
            }
            Context::Records => {
                let pk = answer["result"]["pk"].clone();
                let call = json_body(json!({"org": "o1", "cl": "Book", "pk": pk}));
                let got = self
                    .client
                    .write(Method::POST, "/records/api/getDoc", call, admin, None)
                    .await;
                assert_eq!(got["result"]["pk"], pk, "records: {i} not read back");
            }
            Context::Resources => {
                let path = format!("/resources/@api/deki/pages/1/files/f{i}.txt");
                let (status, body) = self.client.get(&path, admin).await;
                assert_eq!(
                    (status, body),
                    (StatusCode::OK, format!("file {i}")),
                    "resources: f{i} not read back"
                );
            }
            Context::Atlas => {
                let id = self.section.lock().expect("section").0.clone();
                let path = format!("/atlas/sections/{id}/commits");
                let (status, body) = self.client.get(&path, admin).await;
                let commit = answer["commit"]["id"].as_str().unwrap_or("no commit id");
                assert!(
                    status == StatusCode::OK && body.contains(commit),
                    "atlas: commit {commit} not read back: {status}"
                );
            }
        }
    }
}

/// A section snapshot that differs with `i`.
fn snapshot(i: usize) -> Value {
    json!({
        "schema_version": 1,
        "editor_feature_collection": {"type": "FeatureCollection", "features": []},
        "entities": [{"operation": "create", "id": "e", "name": format!("Entity {i}"),
                      "slug": "e", "type_id": "country"}],
        "geometries": [{"operation": "create", "id": "g", "type": "path", "time_start": 968,
                        "draw_geometry": {"type": "Polygon", "coordinates":
                            [[[104.0, 19.0], [106.0, 19.0], [106.0, 21.0], [104.0, 19.0]]]}}],
        "link_scopes": [{"geometry_id": "g", "entity_ids": ["e"]}]
    })
}

/// The projector's share of each write: from the log's head moving (the append committed) to
/// projection `name` showing that position, as this process's watch sees it.
fn watch_projector(
    app: &TestApp,
    name: &'static str,
    stop: CancellationToken,
) -> Arc<Mutex<Vec<Duration>>> {
    let waits = Arc::new(Mutex::new(Vec::new()));
    let (store, watch, kept) = (
        app.state.store.clone(),
        app.state.watch.clone(),
        waits.clone(),
    );
    tokio::spawn(async move {
        let mut head = store.head().subscribe();
        loop {
            tokio::select! {
                changed = head.changed() => if changed.is_err() { return },
                _ = stop.cancelled() => return,
            }
            let moved = Instant::now();
            let position = *head.borrow_and_update();
            if watch.wait_for(name, position, Duration::from_secs(5)).await {
                kept.lock().expect("waits").push(moved.elapsed());
            }
        }
    });
    waits
}

/// Plain 1-row `INSERT`s, each committed alone, on one connection: the floor of a write.
async fn insert_floor(url: &str, n: usize) -> Series {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
        .batch_execute(
            "CREATE TABLE public.latency_floor (id uuid, stream text, version bigint, \
             event_type text, payload json, recorded_at timestamptz)",
        )
        .await
        .expect("floor table");
    let insert = client
        .prepare(
            "INSERT INTO public.latency_floor VALUES (gen_random_uuid(), 's', $1, 'Happened', \
             $2, now())",
        )
        .await
        .expect("prepare");
    let mut samples = Vec::with_capacity(n);
    for i in 0..n as i64 {
        let payload = json!({"text": "a small write", "n": i});
        let started = Instant::now();
        client
            .execute(&insert, &[&i, &payload])
            .await
            .expect("insert");
        samples.push(started.elapsed());
    }
    client
        .batch_execute("DROP TABLE public.latency_floor")
        .await
        .expect("drop floor");
    Series::of(samples)
}

/// The log's own 1-event appends, one writer, one stream.
async fn log_appends(app: &TestApp, n: usize) -> Series {
    let stream = StreamName::new("bench", "latency", "one-writer").expect("stream");
    app.allow_invalid_events(&stream);
    let store: &EventStore = &app.state.store;
    let mut samples = Vec::with_capacity(n);
    for i in 0..n {
        let event = NewEvent::new("Happened", 1, json!({"text": "a small write", "n": i}));
        let request =
            AppendRequest::new().stream(stream.clone(), ExpectedVersion::Any, vec![event]);
        let started = Instant::now();
        store.append(request).await.expect("append");
        samples.push(started.elapsed());
    }
    Series::of(samples)
}

fn per_batch(budget: &BudgetSnapshot, phase: Phase) -> f64 {
    budget.phase(phase).as_secs_f64() * 1000.0 / budget.batches.max(1) as f64
}

fn met(p50: f64, p99: f64) -> &'static str {
    match (p50 <= TARGET_P50, p99 <= TARGET_P99) {
        (true, true) => "yes",
        (false, false) => "no",
        (false, true) => "p50 no",
        (true, false) => "p99 no",
    }
}

/// What bounds a write on this machine: each is acknowledged only once durable, after at least
/// one synchronous commit, so no write's p50 can be below the floor's (one row committed alone,
/// its fsync included). "over floor" is what a write costs beyond that.
fn bound(floor_p50: f64) -> String {
    let verdict = if floor_p50 > TARGET_P50 {
        "above the p50 target: no durable write can meet it on this machine"
    } else {
        "below the p50 target"
    };
    format!(
        "bound: every write commits durably at least once; the floor's p50 {floor_p50:.3} ms is {verdict}; \
         \"over floor\" = write p50 - floor p50"
    )
}

#[tokio::main]
async fn main() {
    let writes = env_number("LATENCY_WRITES", 300);
    let warmup = env_number("LATENCY_WARMUP", 30);
    let app = TestApp::start().await;
    let apikey = std::fs::read_to_string(app.data_dir().join("APIKEY.txt")).expect("APIKEY.txt");
    let session = Session {
        client: Client::of(&app),
        admin: app.admin_token(),
        apikey: apikey.trim().to_owned(),
        app: &app,
        section: Mutex::new((String::new(), Value::Null)),
        run: uuid::Uuid::new_v4().simple().to_string(),
    };
    println!(
        "latency bench: one client on one keep-alive connection, {writes} writes per context \
         (after {warmup} untimed), each under an Idempotency-Key and read back untimed; fresh database"
    );

    let floor = insert_floor(&session.app.database_url(), writes + warmup).await;
    let appends = log_appends(session.app, writes + warmup).await;
    let mut health = Vec::with_capacity(writes);
    for _ in 0..writes {
        let started = Instant::now();
        let (status, _) = session.client.get("/healthz", None).await;
        health.push(started.elapsed());
        assert_eq!(status, StatusCode::OK);
    }
    let health = Series::of(health);
    println!(
        "floor: plain 1-row INSERT committed alone   p50 {:>6.3} ms  p99 {:>6.3} ms  mean {:.3} ms",
        floor.ms(0.5),
        floor.ms(0.99),
        floor.mean_ms()
    );
    println!(
        "log:   one-writer 1-event append             p50 {:>6.3} ms  p99 {:>6.3} ms  mean {:.3} ms",
        appends.ms(0.5),
        appends.ms(0.99),
        appends.mean_ms()
    );
    println!(
        "ratio: 1-event append x1 / 1-row floor x1 = {:.2} by mean, {:.2} by p50 (target >= 0.80)",
        floor.mean_ms() / appends.mean_ms(),
        floor.ms(0.5) / appends.ms(0.5)
    );
    println!(
        "http:  GET /healthz, same connection         p50 {:>6.3} ms  p99 {:>6.3} ms",
        health.ms(0.5),
        health.ms(0.99)
    );
    println!(
        "{:<10} {:<17} {:>8} {:>8}  {:<7} {:>10} | {:>8} {:>8} | append/batch: writes+COMMIT, reads, durable (ms)",
        "context", "write", "p50 ms", "p99 ms", "met", "over floor", "proj p50", "proj p99"
    );
    for context in Context::ALL {
        session.prepare(context).await;
        for i in 0..warmup {
            let (_, answer) = session.write(context, i).await;
            session.read_back(context, i, &answer).await;
        }
        let stop = CancellationToken::new();
        let waits = watch_projector(session.app, context.name(), stop.clone());
        let before = session.app.state.store.budget();
        let mut samples = Vec::with_capacity(writes);
        for i in warmup..warmup + writes {
            let (took, answer) = session.write(context, i).await;
            samples.push(took);
            session.read_back(context, i, &answer).await;
        }
        let budget = session.app.state.store.budget().since(&before);
        stop.cancel();
        let series = Series::of(samples);
        let waits = Series::of(std::mem::take(&mut *waits.lock().expect("waits")));
        let (p50, p99) = (series.ms(0.5), series.ms(0.99));
        println!(
            "{:<10} {:<17} {p50:>8.2} {p99:>8.2}  {:<7} {:>+10.2} | {:>8.2} {:>8.2} | {:.3}, {:.3}, {:.3} ({} batches)",
            context.name(),
            context.write_name(),
            met(p50, p99),
            p50 - floor.ms(0.5),
            waits.ms(0.5),
            waits.ms(0.99),
            per_batch(&budget, Phase::Writes),
            per_batch(&budget, Phase::Reads),
            per_batch(&budget, Phase::Durable),
            budget.batches,
        );
    }
    println!(
        "targets: p50 <= {TARGET_P50} ms, p99 <= {TARGET_P99} ms; the log's own append above: p50 {:.3} ms",
        appends.ms(0.5)
    );
    println!("{}", bound(floor.ms(0.5)));
    app.stop().await;
}
