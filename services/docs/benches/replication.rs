//! Replication beside the Node reference: real PouchDB 9 (Node, `tests/pouchdb/bench.js`, the
//! memory adapter) pushes 10,000 documents into a new database and a fresh PouchDB pulls them
//! back, against `/docs` and against pouchdb-server 4.2.0 (a Node server keeping everything in
//! memory, `--in-memory`), started by this bench on the same machine. The two servers take turns,
//! three rounds each, every round into a new database; the medians are compared. Target (issue
//! #28): `/docs` at least 2× pouchdb-server both ways.
//!
//! `cargo bench -p palimpsest-docs --bench replication` (a fresh database on the local Postgres,
//! dropped at the end; PouchDB and pouchdb-server are installed by `npm ci` in
//! `tests/pouchdb` and `benches/pouchdb-server` when missing).

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::budget::{BudgetSnapshot, Phase};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Documents pushed and pulled in one round.
const DOCS: usize = 10_000;
/// Rounds per server.
const ROUNDS: usize = 3;
/// The target: `/docs` against pouchdb-server, both ways.
const TARGET: f64 = 2.0;
/// Events per floor append: PouchDB's batch.
const FLOOR_BATCH: usize = 100;
/// Floor appends per measure.
const FLOOR_APPENDS: usize = 20;

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `npm ci` in `dir` unless `marker` (a file of the installed package) is there.
fn install(dir: &Path, marker: &str) {
    if dir.join("node_modules").join(marker).exists() {
        return;
    }
    let status = std::process::Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(dir)
        .status()
        .expect("npm must be installed (Node 20 and npm)");
    assert!(status.success(), "npm ci failed in {}", dir.display());
}

/// pouchdb-server on a free port, in memory, its config and log in a temporary directory;
/// killed when dropped.
struct Reference {
    /// Held for `kill_on_drop`: the server lives as long as this.
    _child: tokio::process::Child,
    port: u16,
    _dir: tempfile::TempDir,
}

impl Reference {
    async fn start() -> Reference {
        let dir = tempfile::tempdir().expect("temporary directory");
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let child = tokio::process::Command::new("node")
            .arg(
                manifest()
                    .join("benches/pouchdb-server/node_modules/pouchdb-server/bin/pouchdb-server"),
            )
            .args(["--in-memory", "--no-stdout-logs", "--host", "127.0.0.1"])
            .args(["--port", &port.to_string()])
            .arg("--config")
            .arg(dir.path().join("config.json"))
            .arg("--dir")
            .arg(dir.path())
            .current_dir(dir.path())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node must be installed");
        let reference = Reference {
            _child: child,
            port,
            _dir: dir,
        };
        let http = reqwest::Client::new();
        let started = Instant::now();
        while http.get(reference.url("")).send().await.is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "pouchdb-server did not answer"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        reference
    }

    fn url(&self, db: &str) -> String {
        format!("http://127.0.0.1:{}/{db}", self.port)
    }
}

/// One way of one round, as `bench.js` timed it.
#[derive(Clone, Copy)]
struct Way {
    /// The whole way, in milliseconds.
    ms: f64,
    /// The part of it during which a request to the server was in flight.
    wait_ms: f64,
}

impl Way {
    fn per_second(self) -> f64 {
        DOCS as f64 * 1000.0 / self.ms
    }

    /// The client's own work: the same whichever server answers, so it bounds the ratio.
    fn own_ms(self) -> f64 {
        self.ms - self.wait_ms
    }
}

/// One round of `bench.js` against `db_url`: push and pull.
async fn round(db_url: &str) -> (Way, Way) {
    let output = tokio::process::Command::new("node")
        .arg("bench.js")
        .arg(db_url)
        .arg(DOCS.to_string())
        .current_dir(manifest().join("tests/pouchdb"))
        .kill_on_drop(true)
        .output()
        .await
        .expect("node must be installed");
    assert!(
        output.status.success(),
        "PouchDB bench failed against {db_url}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let figures: Value = serde_json::from_slice(&output.stdout).expect("one JSON line");
    let way = |name: &str| Way {
        ms: figures[format!("{name}_ms")].as_f64().unwrap_or(f64::NAN),
        wait_ms: figures[format!("{name}_wait_ms")]
            .as_f64()
            .unwrap_or(f64::NAN),
    };
    (way("push"), way("pull"))
}

/// Prints one round's way beside the client's own share of it.
fn print_way(n: usize, server: &str, name: &str, way: Way) {
    println!(
        "  round {n}  {server:<15} {name} {:>6.0} docs/s   {:>6.0} ms, of which the client's own work {:>5.0} ms",
        way.per_second(),
        way.ms,
        way.own_ms()
    );
}

/// The floor of a push batch: the log's own append of `FLOOR_BATCH` events, one per new stream,
/// each shaped like a replicated revision (one writer, as PouchDB pushes); mean ms per append.
async fn floor(store: &EventStore, label: &str) -> f64 {
    let started = Instant::now();
    for batch in 0..FLOOR_APPENDS {
        let mut request = AppendRequest::new();
        for i in 0..FLOOR_BATCH {
            let id = format!("{label}-{batch:03}-{i:03}");
            let stream = StreamName::new("bench", "floor", id.clone()).expect("stream name");
            let payload = json!({"RevisionStored": {
                "db": "floor", "doc_id": id, "rev": "1-0123456789abcdef0123456789abcdef",
                "ancestry": [], "body": json!({"n": i, "text": "a replicated document body"}).to_string(),
                "deleted": false, "channels": [], "access": {}
            }});
            request = request.stream(
                stream,
                ExpectedVersion::NoStream,
                vec![NewEvent::new("Floor", 1, payload)],
            );
        }
        store.append(request).await.expect("floor append");
    }
    started.elapsed().as_secs_f64() * 1000.0 / FLOOR_APPENDS as f64
}

/// The log appender's phases over the `/docs` rounds, per transaction (every append of the
/// rounds: a `_bulk_docs` batch or a checkpoint).
fn print_appender(budget: &BudgetSnapshot) {
    let per = |d: Duration| d.as_secs_f64() * 1000.0 / budget.batches.max(1) as f64;
    println!(
        "  the log's appender over the /docs rounds: {} transactions, {} commands, {} events; mean ms per transaction: queue {:.2} (per command), pool {:.2}, reads {:.2} (lock wait {:.2}), plan {:.2}, writes+commit {:.2}, durable {:.2}",
        budget.batches,
        budget.commands,
        budget.events,
        budget.queue_wait.as_secs_f64() * 1000.0 / budget.commands.max(1) as f64,
        per(budget.phase(Phase::Pool)),
        per(budget.phase(Phase::Reads)),
        per(budget.phase(Phase::LockWait)),
        per(budget.phase(Phase::Plan)),
        per(budget.phase(Phase::Writes)),
        per(budget.phase(Phase::Durable)),
    );
}

/// A histogram's `_sum` and `_count` per label set, from the binary's `/metrics`.
async fn histogram(app: &TestApp, name: &str) -> std::collections::BTreeMap<String, (f64, f64)> {
    let mut out: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
    let Ok(response) = reqwest::get(app.url("/metrics")).await else {
        return out;
    };
    let Ok(text) = response.text().await else {
        return out;
    };
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(name).and_then(|r| r.strip_prefix('_')) else {
            continue;
        };
        let (kind, rest) = rest.split_once('{').unwrap_or((rest, ""));
        let (labels, value) = rest.rsplit_once('}').unwrap_or(("", rest));
        let value: f64 = value.trim().parse().unwrap_or(0.0);
        let entry = out.entry(labels.to_owned()).or_default();
        match kind.trim() {
            "count" => entry.1 += value,
            "sum" => entry.0 += value,
            _ => {}
        }
    }
    out
}

/// The phases in the order a request runs them.
const PHASE_ORDER: &[&str] = &[
    "caller",
    "parse",
    "connection",
    "database",
    "receive",
    "load",
    "decide",
    "attachments",
    "decision",
    "diff",
    "read",
    "apply",
    "write",
    "append_and_wait",
    "reply",
];

/// Where each write and checkpoint route's time went, phase by phase (`palimpsest_docs_phase_
/// seconds`, laps in the order they ran): mean ms per request.
async fn print_phases(app: &TestApp) {
    let phases = histogram(app, "palimpsest_docs_phase_seconds").await;
    println!("  phases of /docs' requests, all rounds (mean ms per request):");
    let mut routes: std::collections::BTreeMap<String, Vec<(String, f64)>> = Default::default();
    for (labels, (sum, count)) in phases {
        let label = |key: &str| {
            labels
                .split("\",")
                .find_map(|kv| kv.strip_prefix(&format!("{key}=\"")))
                .map(|v| v.trim_end_matches('"').to_owned())
                .unwrap_or_default()
        };
        routes
            .entry(label("route"))
            .or_default()
            .push((label("phase"), sum * 1000.0 / count.max(1.0)));
    }
    for (route, mut phases) in routes {
        phases.sort_by_key(|(phase, _)| PHASE_ORDER.iter().position(|p| p == phase));
        let total: f64 = phases.iter().map(|(_, ms)| ms).sum();
        let list: Vec<String> = phases
            .iter()
            .map(|(phase, ms)| format!("{phase} {ms:.2}"))
            .collect();
        println!("    {route:<14} {total:>6.2}: {}", list.join(", "));
    }
}

/// Where `/docs` spent its time over all rounds: per route, the requests, their total and mean,
/// from the binary's own `palimpsest_http_request_seconds`.
async fn print_server_time(app: &TestApp) {
    let Ok(text) = reqwest::get(app.url("/metrics"))
        .await
        .and_then(|r| r.error_for_status())
    else {
        println!("  (no /metrics to read)");
        return;
    };
    let Ok(text) = text.text().await else { return };
    let mut routes: std::collections::BTreeMap<String, (f64, f64)> = Default::default();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("palimpsest_http_request_seconds_") else {
            continue;
        };
        let (kind, rest) = rest.split_once('{').unwrap_or(("", rest));
        let (labels, value) = rest.rsplit_once('}').unwrap_or(("", rest));
        let value: f64 = value.trim().parse().unwrap_or(0.0);
        let label = |key: &str| {
            labels
                .split("\",")
                .find_map(|kv| kv.strip_prefix(&format!("{key}=\"")))
                .map(|v| v.trim_end_matches('"').to_owned())
                .unwrap_or_default()
        };
        let route = format!("{} {}", label("method"), label("route"));
        if !route.contains("/docs") {
            continue;
        }
        let entry = routes.entry(route).or_default();
        match kind {
            "count" => entry.0 += value,
            "sum" => entry.1 += value,
            _ => {}
        }
    }
    println!("  where /docs spent its time, all rounds (requests, total s, mean ms):");
    for (route, (count, sum)) in routes {
        println!(
            "    {route:<40} {count:>7.0} {sum:>8.2} {:>7.2}",
            sum * 1000.0 / count.max(1.0)
        );
    }
}

fn median(mut figures: Vec<f64>) -> f64 {
    figures.sort_by(f64::total_cmp);
    figures[figures.len() / 2]
}

#[tokio::main]
async fn main() {
    install(&manifest().join("tests/pouchdb"), "pouchdb/package.json");
    install(
        &manifest().join("benches/pouchdb-server"),
        "pouchdb-server/package.json",
    );
    let app = TestApp::start().await;
    let reference = Reference::start().await;
    // Databases are the administrator's: PouchDB sends the URL's credentials as Basic.
    let ours = |db: &str| {
        app.url(&format!("/docs/{db}")).replacen(
            "http://",
            &format!("http://admin:{}@", app.admin_token()),
            1,
        )
    };
    println!("replication bench: PouchDB 9 push then pull of {DOCS} documents, servers alternated");
    let floor_before = floor(&app.state.store, "before").await;
    let appender_before = app.state.store.budget();
    let (mut ours_rounds, mut node_rounds) = (vec![], vec![]);
    for n in 0..ROUNDS {
        for (server, url, rounds) in [
            ("/docs", ours(&format!("round{n}")), &mut ours_rounds),
            (
                "pouchdb-server",
                reference.url(&format!("round{n}")),
                &mut node_rounds,
            ),
        ] {
            let (push, pull) = round(&url).await;
            print_way(n, server, "push", push);
            print_way(n, server, "pull", pull);
            rounds.push((push, pull));
        }
    }
    let appender = app.state.store.budget().since(&appender_before);
    let floor_after = floor(&app.state.store, "after").await;
    print_server_time(&app).await;
    print_phases(&app).await;
    print_appender(&appender);
    println!(
        "  floor: the log's own {FLOOR_BATCH}-event append (one event per new stream, one writer): {floor_before:.2} ms before the rounds, {floor_after:.2} ms after"
    );
    let pick = |rounds: &[(Way, Way)], pull: bool| -> Vec<Way> {
        rounds
            .iter()
            .map(|(push, pl)| if pull { *pl } else { *push })
            .collect()
    };
    for (name, pull) in [("push", false), ("pull", true)] {
        let (ours, node) = (pick(&ours_rounds, pull), pick(&node_rounds, pull));
        let rate = |ways: &[Way]| median(ways.iter().map(|w| w.per_second()).collect());
        let (ours_rate, node_rate) = (rate(&ours), rate(&node));
        let ratio = ours_rate / node_rate;
        // Were the server to answer in no time, the way would take the client's own work alone.
        let own = median(ours.iter().chain(&node).map(|w| w.own_ms()).collect());
        let node_ms = median(node.iter().map(|w| w.ms).collect());
        println!(
            "  {name}: /docs {ours_rate:>6.0} docs/s   pouchdb-server 4.2.0 {node_rate:>6.0} docs/s   ratio {ratio:>4.2}x (target >= {TARGET:.1}x){}   (the client's own work, {own:.0} ms, allows at most {:.1}x)",
            if ratio >= TARGET { "" } else { "   MISSED" },
            node_ms / own
        );
    }
    drop(reference);
    app.stop().await;
}
