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

/// One round of `bench.js` against `db_url`: push and pull, in documents per second.
async fn round(db_url: &str) -> (f64, f64) {
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
    let per_second = |ms: &Value| DOCS as f64 * 1000.0 / ms.as_f64().unwrap_or(f64::NAN);
    (
        per_second(&figures["push_ms"]),
        per_second(&figures["pull_ms"]),
    )
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
    let (mut our_push, mut our_pull, mut node_push, mut node_pull) =
        (vec![], vec![], vec![], vec![]);
    for n in 0..ROUNDS {
        let (push, pull) = round(&ours(&format!("round{n}"))).await;
        println!("  round {n}  /docs:          push {push:>6.0} docs/s   pull {pull:>6.0} docs/s");
        our_push.push(push);
        our_pull.push(pull);
        let (push, pull) = round(&reference.url(&format!("round{n}"))).await;
        println!("  round {n}  pouchdb-server: push {push:>6.0} docs/s   pull {pull:>6.0} docs/s");
        node_push.push(push);
        node_pull.push(pull);
    }
    for (way, ours, node) in [
        ("push", median(our_push), median(node_push)),
        ("pull", median(our_pull), median(node_pull)),
    ] {
        let ratio = ours / node;
        println!(
            "  {way}: /docs {ours:>6.0} docs/s   pouchdb-server 4.2.0 {node:>6.0} docs/s   ratio {ratio:>4.2}x (target >= {TARGET:.1}x){}",
            if ratio >= TARGET { "" } else { "   MISSED" }
        );
    }
    drop(reference);
    app.stop().await;
}
