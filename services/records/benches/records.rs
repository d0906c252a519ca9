//! Records figures, each beside a floor measured in the same run:
//!
//! - single-document writes per second (`insertDoc` over HTTP, through the command runner,
//!   waiting for the read model) at 1 and 64 clients, beside the log's own 1-event append rate
//!   at the same concurrency;
//! - an incremental sync of 100,000 documents (`listDocsSk` over HTTP: query, decrypt, decode,
//!   JSON, until the client holds the whole answer), beside a plain scan of the same rows; the
//!   client's own parse of the answer is printed apart (it is the client's cost, not the
//!   server's); scan and sync alternate five times (`RECORDS_BENCH_SYNC_ROUNDS`) and their
//!   medians are compared;
//! - the decrypt-and-decode cost per document.
//!
//! Each write phase also prints its time budget: the log's own (queue wait, round trips, plan,
//! durability wait per append), the CPU per write of this process and of the whole machine
//! (Postgres included), and the rate CPU alone would allow with every core busy; where the rest
//! goes is read from a CPU profile (`perf record --call-graph dwarf` while the phase runs; see
//! ARCHITECTURE.md).
//!
//! The 64-client write phase is followed by a floor of HTTP alone: the same requests from the
//! same client against a route that only parses the body and answers it. The write phases'
//! clients are the lean load generator of `support/client.rs` (one kept-alive connection each).
//! Each write phase alternates its floor and its writes `RECORDS_BENCH_WRITE_ROUNDS` times (3 by
//! default; the machine's speed drifts within a run) and reports the median round's ratio, with
//! every round's.
//!
//! `cargo bench -p palimpsest-records --bench records` (uses a fresh database on the local
//! Postgres, or on the server `PALIMPSEST_TEST_ADMIN_URL` names, and drops it).
//! `RECORDS_BENCH_PHASES` (a comma list of `write1`, `write64`, `http64`, `sync`; all by
//! default) runs some phases only, and `RECORDS_BENCH_WRITES` sets the writes per client at 64
//! clients (200 by default; shorter phases swing with the machine): a longer phase to profile.

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::budget::{BudgetSnapshot, Phase};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_records::hash::sha16;
use palimpsest_records::seal::{Nonces, SiteKey};
use palimpsest_testkit::TestDb;
use palimpsest_web::AppState;
use serde_json::json;
use std::net::SocketAddr;
use std::time::Instant;
#[path = "support/client.rs"]
mod client;
use client::Connection;
use tokio_util::sync::CancellationToken;

/// The binary's allocator (`services/palimpsest/src/main.rs`), so the figures are the binary's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const SYNC_DOCS: usize = 100_000;

/// Whether `phase` is to run (`RECORDS_BENCH_PHASES`, every phase when unset).
fn runs(phase: &str) -> bool {
    std::env::var("RECORDS_BENCH_PHASES")
        .map(|phases| phases.split(',').any(|p| p.trim() == phase))
        .unwrap_or(true)
}

/// CPU used, in seconds: by this process (user + system, `/proc/self/stat`) and by the whole
/// machine (busy and in all, every core, `/proc/stat`); zeros elsewhere.
#[derive(Clone, Copy, Default)]
struct Cpu {
    process: f64,
    busy: f64,
    total: f64,
}

impl Cpu {
    fn now() -> Cpu {
        Cpu {
            process: process_seconds(),
            ..machine_seconds()
        }
    }

    fn since(self, before: Cpu) -> Cpu {
        Cpu {
            process: self.process - before.process,
            busy: self.busy - before.busy,
            total: self.total - before.total,
        }
    }
}

/// The numbers of a `/proc` line after `skip` fields, as ticks (100 a second).
fn ticks(line: &str, skip: usize) -> Vec<f64> {
    line.split_whitespace()
        .skip(skip)
        .map(|f| f.parse::<f64>().unwrap_or(0.0) / 100.0)
        .collect()
}

fn process_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces) end with `)`; utime and stime are
    // fields 14 and 15 (11 and 12 after the name).
    let fields = stat.rsplit_once(')').map(|(_, rest)| ticks(rest, 0));
    let field = |i: usize| fields.as_ref().and_then(|f| f.get(i)).copied();
    field(11).unwrap_or(0.0) + field(12).unwrap_or(0.0)
}

fn machine_seconds() -> Cpu {
    let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let Some(line) = stat.lines().next() else {
        return Cpu::default();
    };
    // user nice system idle iowait irq softirq steal (guest time is inside user).
    let t = ticks(line, 1);
    let at = |i: usize| t.get(i).copied().unwrap_or(0.0);
    let busy = at(0) + at(1) + at(2) + at(5) + at(6) + at(7);
    Cpu {
        process: 0.0,
        busy,
        total: busy + at(3) + at(4),
    }
}

/// The median of `times` (the upper one of an even count).
fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times.get(times.len() / 2).copied().unwrap_or(0.0)
}

fn ms(total: std::time::Duration, count: u64) -> f64 {
    total.as_secs_f64() * 1000.0 / count.max(1) as f64
}

/// The log's budget of the appends between two snapshots, per append (command), and the CPU
/// per write: this process's and the machine's (Postgres' included).
fn print_budget(b: &BudgetSnapshot, writes: usize, cpu: Cpu) {
    let n = b.batches;
    println!(
        "    log: {} appends in {} batches ({:.1} a batch); per append: queue wait {:.2} ms | \
         per batch: reads round trip {:.2} ms | plan {:.2} ms | writes+COMMIT {:.2} ms | durable {:.2} ms",
        b.commands,
        n,
        b.commands as f64 / n.max(1) as f64,
        ms(b.queue_wait, b.commands),
        ms(b.phase(Phase::Reads), n),
        ms(b.phase(Phase::Plan), n),
        ms(b.phase(Phase::Writes), n),
        ms(b.phase(Phase::Durable), n),
    );
    let per_write = |seconds: f64| seconds * 1e6 / writes.max(1) as f64;
    println!(
        "    CPU per write: this process {:.0} us | the machine {:.0} us, its cores {:.0}% busy",
        per_write(cpu.process),
        per_write(cpu.busy),
        100.0 * cpu.busy / cpu.total.max(f64::MIN_POSITIVE)
    );
}

/// One round of a write phase: the records rate and the floor's, with their budgets.
struct Round {
    rate: f64,
    floor: f64,
    budget: BudgetSnapshot,
    cpu: Cpu,
    floor_budget: BudgetSnapshot,
    floor_cpu: Cpu,
}

impl Round {
    fn ratio(&self) -> f64 {
        self.rate / self.floor
    }
}

async fn log_rate(store: &EventStore, clients: usize, per_client: usize, round: usize) -> f64 {
    let started = Instant::now();
    let tasks = (0..clients).map(|c| {
        let store = store.clone();
        tokio::spawn(async move {
            for i in 0..per_client {
                let stream =
                    StreamName::new("bench", "floor", format!("{clients}-{round}-{c}-{i}"))
                        .expect("stream");
                let event = NewEvent::new("Floor", 1, json!({"i": i}));
                store
                    .append(AppendRequest::new().stream(
                        stream,
                        ExpectedVersion::NoStream,
                        vec![event],
                    ))
                    .await
                    .expect("append");
            }
        })
    });
    futures::future::join_all(tasks).await;
    (clients * per_client) as f64 / started.elapsed().as_secs_f64()
}

/// `insertDoc` of `per_client` new documents by each of `clients` clients (each its own
/// connection, one request at a time), in documents a second.
async fn insert_rate(
    addr: SocketAddr,
    admin: &str,
    clients: usize,
    per_client: usize,
    tag: &str,
) -> f64 {
    let mut connections = Vec::with_capacity(clients);
    for _ in 0..clients {
        connections.push(Connection::open(addr).await.expect("connect"));
    }
    let started = Instant::now();
    let tasks = connections.into_iter().enumerate().map(|(c, mut connection)| {
        let (admin, tag) = (admin.to_owned(), tag.to_owned());
        tokio::spawn(async move {
            for i in 0..per_client {
                let body = serde_json::to_vec(&json!({"org": "bench", "data": {"clazz": "Article", "p1": format!("{tag}-{c}-{i}"), "auteur": "Hugo", "taille": i, "titre": "un titre assez ordinaire"}}))
                    .expect("json");
                let answer = connection
                    .post("/records/api/insertDoc", &admin, &body)
                    .await
                    .expect("request");
                assert!(
                    (200..300).contains(&answer.status),
                    "{}",
                    String::from_utf8_lossy(&answer.body)
                );
            }
        })
    });
    futures::future::join_all(tasks).await;
    (clients * per_client) as f64 / started.elapsed().as_secs_f64()
}

/// The rate of `insert_rate`'s requests against a route that only parses the body as JSON and
/// answers it inside `{"result": …}`: what HTTP alone costs on this machine.
async fn http_floor(admin: &str, clients: usize, per_client: usize) -> f64 {
    async fn echo(body: axum::body::Bytes) -> axum::Json<serde_json::Value> {
        let mut data: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
        data["pk"] = json!("abcdefghijklmnopqrstuv");
        data["v"] = json!(1_700_000_000_000i64);
        axum::Json(json!({"result": data}))
    }
    let app = axum::Router::new().route("/records/api/insertDoc", axum::routing::post(echo));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    let rate = insert_rate(addr, admin, clients, per_client, "echo").await;
    server.abort();
    rate
}

/// Seeds `SYNC_DOCS` rows of collection auteur = Zola straight into the row table.
async fn seed(state: &AppState, key: &SiteKey) {
    let client = state.read.get().await.expect("client");
    let mut nonces = Nonces::fresh(SYNC_DOCS);
    let zola = sha16("Zola");
    for chunk in (0..SYNC_DOCS).collect::<Vec<_>>().chunks(5_000) {
        let mut pks = Vec::new();
        let mut datas = Vec::new();
        for i in chunk {
            let data = json!({"clazz": "Article", "org": "sync", "p1": format!("s{i}"), "auteur": "Zola", "v": 1000 + *i as i64, "x": 0, "titre": "un titre assez ordinaire", "taille": i});
            pks.push(sha16(&format!("s{i}")));
            datas.push(
                key.seal_bytes(&data, nonces.take().expect("iv"))
                    .expect("seal"),
            );
        }
        client
            .execute(
                "INSERT INTO records.\"Article\" (org, pk, v, x, ck, del, auteur, data) \
                 SELECT 'sync', pk, 1000 + n, 0, '', 0, $1, data FROM unnest($2::text[], $3::bytea[]) WITH ORDINALITY AS t(pk, data, n)",
                &[&zola, &pks, &datas],
            )
            .await
            .expect("seed");
    }
    client
        .execute("ANALYZE records.\"Article\"", &[])
        .await
        .expect("analyze");
}

#[tokio::main]
async fn main() {
    let db = TestDb::create().await;
    let state = AppState::connect(
        db.url(),
        std::env::temp_dir().join(format!("palimpsest-records-{}", uuid::Uuid::new_v4())),
        Default::default(),
    )
    .await
    .expect("state");
    let projection = palimpsest_records::projection();
    palimpsest_projections::ensure(&state.store, projection.as_ref())
        .await
        .expect("read model");
    let shutdown = CancellationToken::new();
    let runner = palimpsest_projections::spawn_runner(
        state.store.clone(),
        projection,
        Some(state.watch.clone()),
        shutdown.clone(),
    );
    let app = axum::Router::new()
        .nest("/records", palimpsest_records::router(state.clone()))
        .layer(axum::middleware::from_fn(
            palimpsest_web::command::fingerprint_requests,
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let base = format!("http://{addr}/records");
    let stop = shutdown.clone();
    let server = tokio::spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move { stop.cancelled().await })
            .await;
    });
    let http = reqwest::Client::new();
    let admin = state.admin_token.as_ref().clone();
    let declared = http
        .post(format!("{base}/api/declareClass"))
        .bearer_auth(&admin)
        .json(&json!({"clazz": "Article", "sync": true, "pk": ["p1"], "collections": [{"name": "auteur", "props": ["auteur"]}], "indexes": [{"name": "taille", "type": "int"}]}))
        .send()
        .await
        .expect("declare");
    assert!(declared.status().is_success());

    println!("records bench (floors measured in the same run)");
    let writes_64: usize = std::env::var("RECORDS_BENCH_WRITES")
        .ok()
        .and_then(|w| w.parse().ok())
        .unwrap_or(200);
    let write_rounds: usize = std::env::var("RECORDS_BENCH_WRITE_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(3)
        .max(1);
    for (phase, clients, per_client) in [("write1", 1usize, 300usize), ("write64", 64, writes_64)] {
        if !runs(phase) {
            continue;
        }
        // Floor and records alternate: the machine's speed drifts within a run, so each round's
        // ratio compares the two at one moment, and the median round is the figure.
        let mut measured = Vec::with_capacity(write_rounds);
        for round in 0..write_rounds {
            let before = state.store.budget();
            let cpu = Cpu::now();
            let floor = log_rate(&state.store, clients, per_client, round).await;
            let floor_budget = state.store.budget().since(&before);
            let floor_cpu = Cpu::now().since(cpu);
            let before = state.store.budget();
            let cpu = Cpu::now();
            let tag = format!("c{clients}r{round}");
            let rate = insert_rate(addr, &admin, clients, per_client, &tag).await;
            let budget = state.store.budget().since(&before);
            let cpu = Cpu::now().since(cpu);
            measured.push(Round {
                rate,
                floor,
                budget,
                cpu,
                floor_budget,
                floor_cpu,
            });
        }
        measured.sort_by(|a, b| a.ratio().total_cmp(&b.ratio()));
        let rounds: Vec<String> = measured
            .iter()
            .map(|r| format!("{:.1}%", 100.0 * r.ratio()))
            .collect();
        let median = &measured[measured.len() / 2];
        let (rate, floor, cpu) = (median.rate, median.floor, median.cpu);
        println!(
            "  insertDoc, {clients:>2} clients: {rate:>8.0} docs/s   log 1-event appends: {floor:>8.0}/s   ratio {:>5.1}% (goal >= 50%; the median of {} alternating rounds: {})",
            100.0 * rate / floor,
            measured.len(),
            rounds.join(", ")
        );
        println!(
            "    mean time a write takes: {:.2} ms (floor's append: {:.2} ms)",
            1000.0 * clients as f64 / rate,
            1000.0 * clients as f64 / floor
        );
        print_budget(&median.budget, clients * per_client, cpu);
        println!("    the floor's own:");
        print_budget(&median.floor_budget, clients * per_client, median.floor_cpu);
        // What CPU alone allows: every core busy at this phase's CPU per write.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let ceiling = cores * (clients * per_client) as f64 / cpu.busy.max(f64::MIN_POSITIVE);
        println!(
            "    every core busy at this CPU per write: insertDoc {ceiling:.0}/s at most, \
             {:.1}% of the log's appends measured above",
            100.0 * ceiling / floor
        );
    }
    if runs("http64") {
        let cpu = Cpu::now();
        let rate = http_floor(&admin, 64, writes_64).await;
        let cpu = Cpu::now().since(cpu);
        println!(
            "  floor: HTTP alone (a route that parses the body and answers it), 64 clients: {rate:>8.0}/s"
        );
        println!(
            "    CPU per request: the machine {:.0} us, its cores {:.0}% busy",
            cpu.busy * 1e6 / (64 * writes_64) as f64,
            100.0 * cpu.busy / cpu.total.max(f64::MIN_POSITIVE)
        );
    }
    if !runs("sync") {
        shutdown.cancel();
        let _ = runner.await;
        let _ = server.await;
        let _ = std::fs::remove_dir_all(&state.data_dir);
        db.drop().await;
        return;
    }

    let key = SiteKey::load(&state.data_dir, None, &[]).expect("key");
    seed(&state, &key).await;
    let client = state.read.get().await.expect("client");
    // Scan and sync alternate, `RECORDS_BENCH_SYNC_ROUNDS` times each (5 by default); the
    // medians are compared, so one stall of the shared machine does not make the figure.
    let rounds: usize = std::env::var("RECORDS_BENCH_SYNC_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5)
        .max(1);
    let (mut scans, mut syncs) = (Vec::new(), Vec::new());
    let (mut rows, mut body) = (Vec::new(), Default::default());
    for _ in 0..rounds {
        let started = Instant::now();
        let scanned = client
            .query(
                "SELECT pk, v, x, del, data FROM records.\"Article\" WHERE org = 'sync' AND ck = ''",
                &[],
            )
            .await
            .expect("scan");
        scans.push(started.elapsed().as_secs_f64());
        assert_eq!(scanned.len(), SYNC_DOCS);
        // The previous round's rows and answer are freed outside the timings.
        rows = scanned;
        let started = Instant::now();
        let answered = http
            .post(format!("{base}/api/listDocsSk"))
            .bearer_auth(&admin)
            .json(&json!({"org": "sync", "cl": "Article", "ik": 0, "val": "Zola", "v": 0}))
            .send()
            .await
            .expect("sync")
            .bytes()
            .await
            .expect("body");
        syncs.push(started.elapsed().as_secs_f64());
        body = answered;
    }
    let (scan, sync) = (median(&mut scans), median(&mut syncs));
    let started = Instant::now();
    for row in &rows {
        let sealed: Vec<u8> = row.get(4);
        std::hint::black_box(key.open_bytes(&sealed).expect("open"));
    }
    let decode = started.elapsed().as_secs_f64();
    // A row's JSON as lists wrote it before (a Value tree, then serialised) and as now
    // (transcoded from the msgpack), one thread, the same rows.
    let started = Instant::now();
    let mut out = Vec::with_capacity(256);
    for row in &rows {
        let sealed: &[u8] = row.get(4);
        let data = palimpsest_records::document::decide::with_pk(
            key.open_bytes(sealed).expect("open"),
            row.get(0),
        );
        out.clear();
        serde_json::to_writer(&mut out, &data).expect("json");
        std::hint::black_box(&out);
    }
    let through_value = started.elapsed().as_secs_f64();
    let started = Instant::now();
    for row in &rows {
        let sealed: &[u8] = row.get(4);
        let plain = key.open_plain(sealed).expect("open");
        out.clear();
        palimpsest_records::transcode::data_json(&plain, row.get(0), &mut out).expect("transcode");
        std::hint::black_box(&out);
    }
    let transcoded = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let answer: serde_json::Value = serde_json::from_slice(&body).expect("json");
    let parse = started.elapsed().as_secs_f64();
    assert_eq!(
        answer["result"]["rows"].as_array().map(Vec::len),
        Some(SYNC_DOCS)
    );
    println!(
        "  incremental sync of {SYNC_DOCS} docs: {:.0} ms ({:.0} docs/s)   plain scan: {:.0} ms ({:.0} rows/s)   ratio {:.1}% (goal >= 30%; medians of {rounds} alternating rounds)",
        sync * 1000.0,
        SYNC_DOCS as f64 / sync,
        scan * 1000.0,
        SYNC_DOCS as f64 / scan,
        100.0 * scan / sync
    );
    println!(
        "  (the client's own parse of that {:.1} MB answer, not counted above: {:.0} ms)",
        body.len() as f64 / 1e6,
        parse * 1000.0
    );
    println!(
        "  decrypt + msgpack decode: {:.2} us per document",
        decode * 1e6 / SYNC_DOCS as f64
    );
    println!(
        "  a row's data as JSON: decrypt + decode into a Value + serialise {:.2} us (before) | \
         decrypt + transcode {:.2} us (now) per document",
        through_value * 1e6 / SYNC_DOCS as f64,
        transcoded * 1e6 / SYNC_DOCS as f64
    );

    shutdown.cancel();
    let _ = runner.await;
    let _ = server.await;
    let _ = std::fs::remove_dir_all(&state.data_dir);
    db.drop().await;
}
