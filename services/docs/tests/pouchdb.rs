//! Real PouchDB 9 (Node) replicates a database with edits, deletions, conflicts and `_local`
//! checkpoints through `/docs`, one-shot both ways and live; a second replication moves
//! nothing; and it meets CouchDB's protocol where its own suite expects it (`protocol.js`,
//! issue #28). The Node side is `tests/pouchdb/replicate.js`; its packages are pinned by
//! `package-lock.json` and installed with `npm ci` on first run.

mod common;

use common::Docs;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

fn pouchdb_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/pouchdb")
}

/// One `npm ci` at a time: the tests of this file run in parallel in one process, and two
/// installs into one `node_modules` break each other.
static INSTALL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn install() {
    let _one_at_a_time = INSTALL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let dir = pouchdb_dir();
    if dir.join("node_modules/pouchdb/package.json").exists() {
        return;
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund"])
        .current_dir(&dir)
        .status()
        .expect("npm must be installed (Node 20 and npm)");
    assert!(status.success(), "npm ci failed in {}", dir.display());
}

/// Runs `script` of `tests/pouchdb` with Node against `url`, within `limit`, and asserts that
/// it succeeded; answers what it printed.
async fn run_node(script: &str, url: &str, limit: Duration) -> String {
    let run = tokio::process::Command::new("node")
        .arg(script)
        .arg(url)
        .current_dir(pouchdb_dir())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(limit, run)
        .await
        .unwrap_or_else(|_| panic!("PouchDB ({script}) finished within {limit:?}"))
        .expect("node must be installed");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "PouchDB run failed:\n{stdout}\n{stderr}"
    );
    stdout.into_owned()
}

#[tokio::test]
async fn real_pouchdb_replicates_both_ways_one_shot_and_live() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::new(
            "warn,palimpsest_docs=debug",
        ))
        .with_test_writer()
        .try_init();
    tokio::task::spawn_blocking(install).await.expect("install");
    let docs = Docs::start().await;
    let base = docs.admin_url("");
    let stdout = run_node("replicate.js", &base, Duration::from_secs(120)).await;
    eprintln!("pouchdb: {stdout}");
    docs.stop().await;
}

#[tokio::test]
async fn real_pouchdb_as_a_user_replicates_only_its_channels() {
    tokio::task::spawn_blocking(install).await.expect("install");
    let docs = Docs::start().await;
    assert_eq!(docs.admin("PUT", "/_admin/chan", "{}").await.0, 201);
    let ann = serde_json::json!({"password": "pw", "admin_channels": ["a"]}).to_string();
    assert_eq!(
        docs.admin("PUT", "/_admin/chan/_user/ann", &ann).await.0,
        200
    );
    for (id, channel) in [("a1", "a"), ("a2", "a"), ("b1", "b")] {
        let body = serde_json::json!({"channels": [channel]}).to_string();
        assert_eq!(
            docs.admin("PUT", &format!("/chan/{id}"), &body).await.0,
            201
        );
    }
    let url = docs.url("/chan").replacen("http://", "http://ann:pw@", 1);
    run_node("channels.js", &url, Duration::from_secs(60)).await;
    let (status, _) = docs.admin("GET", "/chan/from-ann", "").await;
    assert_eq!(status, 200, "ann's push landed");
    docs.stop().await;
}

#[tokio::test]
async fn real_pouchdb_replicates_a_large_attachment_both_ways() {
    tokio::task::spawn_blocking(install).await.expect("install");
    let docs = Docs::start().await;
    assert_eq!(docs.as_admin("PUT", "/large", None).await.0, 201);
    run_node(
        "large_attachment.js",
        &docs.admin_url("/large"),
        Duration::from_secs(60),
    )
    .await;
    let stored = docs
        .rows("SELECT length FROM docs.attachments WHERE location IS NOT NULL")
        .await;
    assert_eq!(
        stored.len(),
        1,
        "the attachment is in the folder: {stored:?}"
    );
    docs.stop().await;
}

#[tokio::test]
async fn real_pouchdb_meets_couchdbs_protocol_where_its_own_suite_expects_it() {
    tokio::task::spawn_blocking(install).await.expect("install");
    let docs = Docs::start().await;
    assert_eq!(docs.as_admin("PUT", "/protocol", None).await.0, 201);
    run_node(
        "protocol.js",
        &docs.admin_url("/protocol"),
        Duration::from_secs(60),
    )
    .await;
    docs.stop().await;
}
