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

use palimpsest_testkit::TestApp;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Documents pushed and pulled in one round.
const DOCS: usize = 10_000;
/// Rounds per server.
const ROUNDS: usize = 3;
/// The target: `/docs` against pouchdb-server, both ways.
const TARGET: f64 = 2.0;

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
    print_server_time(&app).await;
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
