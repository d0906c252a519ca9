//! The tamper suite (issue #27): a Postgres superuser changes the log the way an attacker
//! would — triggers off, chains recomputed, positions renumbered, `log.head` moved — and both
//! `palimpsest audit verify --since <a head kept before>` and `palimpsest audit witness` (a
//! third party's, over HTTP, with the state it kept before) name the first position that was
//! altered, removed or reordered. Each test asserts the exact position, so it fails if the
//! detection is turned off. A byte changed in a content file is named by `verify --since`
//! (which reads the files) and refused by the read that would serve it (`content_serving.rs`).

use palimpsest::cli::audit::{AuditCommand, run};
use palimpsest::cli::witness::WitnessArgs;
use palimpsest::config::Settings;
use palimpsest_e2e::workload::write_through_every_context;
use palimpsest_events::canonical::chain_hash;
use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_log::rows::{COLUMNS, to_events};
use palimpsest_testkit::TestApp;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio_postgres::{Client, NoTls};

/// A log with real events of every context, then two streams interleaved one event per
/// append (`test/a/1` and `test/b/1`, versions 1..=6 each), so positions are known.
async fn a_log() -> (TestApp, Layout) {
    let app = TestApp::start().await;
    write_through_every_context(&app).await;
    let first = app.state.store.head_position().await.expect("head") + 1;
    for v in 0..6 {
        for name in ["a", "b"] {
            let stream = StreamName::new("test", name, "1").expect("stream");
            let event = NewEvent::new("Noted", 1, json!({ "v": v, "name": name }));
            let request = AppendRequest::new().stream(stream, ExpectedVersion::Any, vec![event]);
            app.state.store.append(request).await.expect("append");
        }
    }
    let last = app.state.store.head_position().await.expect("head");
    (app, Layout { first, last })
}

/// Where the interleaved streams stand: `a` at `first, first+2, …`, `b` at `first+1, …`.
struct Layout {
    first: i64,
    last: i64,
}

/// Waits for a signed head of the whole log and keeps it in a file of a fresh folder.
async fn keep_head(app: &TestApp) -> (tempfile::TempDir, PathBuf) {
    let size = app.state.store.head_position().await.expect("head");
    let started = Instant::now();
    loop {
        let client = app.state.store.pool().get().await.expect("client");
        let head = palimpsest_log::tree::proof::head(&client, app.state.store.log_id(), None)
            .await
            .expect("head");
        if head.is_some_and(|h| h.head.tree_size as i64 >= size) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no head of {size}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("head.json");
    audit(
        app,
        AuditCommand::Head {
            save: file.clone(),
            key: None,
        },
    )
    .await
    .expect("the head is kept");
    witness(app, dir.path())
        .await
        .expect("the witness keeps its state");
    (dir, file)
}

/// One round of `audit witness` with the state kept in `dir`, rechecking the whole log.
async fn witness(app: &TestApp, dir: &Path) -> anyhow::Result<()> {
    let args = WitnessArgs {
        url: app.url(""),
        token: Some(app.admin_token()),
        state: dir.join("witness.json"),
        interval: 100,
        recheck_every: 1,
        once: true,
        metrics_addr: None,
    };
    audit(app, AuditCommand::Witness(args)).await
}

/// Both the auditor's `verify --since` and the witness name `position`.
async fn both_name(app: &TestApp, (dir, kept): &(tempfile::TempDir, PathBuf), position: i64) {
    names(&verify_since_fails(app, kept).await, position);
    let fork = witness(app, dir.path())
        .await
        .expect_err("the witness finds it");
    names(&format!("{fork:#}"), position);
}

async fn audit(app: &TestApp, command: AuditCommand) -> anyhow::Result<()> {
    let settings = Settings::for_database(app.database_url(), app.data_dir());
    run(&settings, command).await
}

/// `audit verify --since file`, which must fail; gives its message.
async fn verify_since_fails(app: &TestApp, file: &Path) -> String {
    let command = AuditCommand::Verify {
        stream: None,
        docs_attachments_dir: None,
        resources_content_dir: Some(app.resources_content_dir()),
        since: Some(file.to_path_buf()),
        key: None,
    };
    format!(
        "{:#}",
        audit(app, command)
            .await
            .expect_err("the tampering is found")
    )
}

/// A superuser's session with the log's triggers off.
async fn superuser(app: &TestApp) -> Client {
    let (client, connection) = tokio_postgres::connect(&app.database_url(), NoTls)
        .await
        .expect("connect");
    tokio::spawn(connection);
    client
        .batch_execute("SET session_replication_role = replica")
        .await
        .expect("triggers off");
    client
}

/// Recomputes the chain of a stream from its events as they now are, as an attacker would,
/// and its head in `log.streams`.
async fn rechain(db: &Client, stream: &StreamName) {
    let rows = db
        .query(
            &format!(
                "SELECT {COLUMNS} FROM log.events WHERE context = $1 AND category = $2 \
                 AND stream_key = $3 ORDER BY version"
            ),
            &[&stream.context, &stream.category, &stream.key],
        )
        .await
        .expect("stream");
    let mut previous: Option<[u8; 32]> = None;
    for event in to_events(&rows).expect("events") {
        let hash = chain_hash(previous.as_ref(), &event.canonical_content());
        let prev = previous.map(|p| p.to_vec());
        db.execute(
            "UPDATE log.events SET prev_hash = $1, hash = $2 WHERE position = $3",
            &[&prev, &hash.to_vec(), &event.position],
        )
        .await
        .expect("rechain");
        previous = Some(hash);
    }
    db.execute(
        "UPDATE log.streams SET version = (SELECT count(*) FROM log.events e \
         WHERE e.context = $1 AND e.category = $2 AND e.stream_key = $3), last_hash = $4 \
         WHERE context = $1 AND category = $2 AND stream_key = $3",
        &[
            &stream.context,
            &stream.category,
            &stream.key,
            &previous.map(|p| p.to_vec()),
        ],
    )
    .await
    .expect("stream head");
}

fn stream(name: &str) -> StreamName {
    StreamName::new("test", name, "1").expect("stream")
}

/// Deletes the event at `position`, closes the gap (later positions, and later versions of
/// its stream, move down by one), rechains its stream and moves `log.head` back.
async fn delete_and_renumber(db: &Client, position: i64, of: &StreamName) {
    let version: i64 = db
        .query_one(
            "SELECT version FROM log.events WHERE position = $1",
            &[&position],
        )
        .await
        .expect("event")
        .get(0);
    db.batch_execute(&format!(
        "DELETE FROM log.events WHERE position = {position};
         UPDATE log.events SET version = version + 1000000 WHERE context = '{0}'
           AND category = '{1}' AND stream_key = '{2}' AND version > {version};
         UPDATE log.events SET version = version - 1000001 WHERE version > 1000000;
         UPDATE log.events SET position = -position WHERE position > {position};
         UPDATE log.events SET position = -position - 1 WHERE position < 0;
         UPDATE log.head SET position = position - 1",
        of.context, of.category, of.key
    ))
    .await
    .expect("delete");
    rechain(db, of).await;
}

fn names(message: &str, position: i64) {
    println!("{message}");
    assert!(
        message.contains(&format!("position {position}:"))
            || message.contains(&format!("position {position} ")),
        "expected position {position} named: {message}"
    );
}

#[tokio::test]
async fn an_edited_payload_with_its_chain_recomputed_is_named() {
    let (app, at) = a_log().await;
    let kept = keep_head(&app).await;
    let db = superuser(&app).await;
    let target = at.first + 2;
    db.execute(
        "UPDATE log.events SET payload = '{\"v\": 99, \"name\": \"a\"}' WHERE position = $1",
        &[&target],
    )
    .await
    .expect("edit");
    rechain(&db, &stream("a")).await;
    both_name(&app, &kept, target).await;
    app.stop().await;
}

#[tokio::test]
async fn a_deleted_event_mid_stream_with_positions_renumbered_is_named() {
    let (app, at) = a_log().await;
    let kept = keep_head(&app).await;
    let db = superuser(&app).await;
    delete_and_renumber(&db, at.first + 4, &stream("a")).await;
    both_name(&app, &kept, at.first + 4).await;
    app.stop().await;
}

#[tokio::test]
async fn a_streams_last_event_deleted_with_positions_renumbered_is_named() {
    let (app, at) = a_log().await;
    let kept = keep_head(&app).await;
    let db = superuser(&app).await;
    // `a`'s last event is the one before the log's last.
    delete_and_renumber(&db, at.last - 1, &stream("a")).await;
    both_name(&app, &kept, at.last - 1).await;
    app.stop().await;
}

#[tokio::test]
async fn the_logs_last_event_deleted_with_the_head_moved_back_is_named() {
    let (app, at) = a_log().await;
    let kept = keep_head(&app).await;
    let db = superuser(&app).await;
    delete_and_renumber(&db, at.last, &stream("b")).await;
    both_name(&app, &kept, at.last).await;
    app.stop().await;
}

#[tokio::test]
async fn two_events_of_different_streams_swapped_are_named() {
    let (app, at) = a_log().await;
    let kept = keep_head(&app).await;
    let db = superuser(&app).await;
    let (p, q) = (at.first + 6, at.first + 7);
    db.batch_execute(&format!(
        "UPDATE log.events SET position = -1 WHERE position = {p};
         UPDATE log.events SET position = {p} WHERE position = {q};
         UPDATE log.events SET position = {q} WHERE position = -1"
    ))
    .await
    .expect("swap");
    both_name(&app, &kept, p).await;
    app.stop().await;
}

#[tokio::test]
async fn a_forged_event_appended_with_a_valid_chain_hash_is_named() {
    let (app, at) = a_log().await;
    let kept = keep_head(&app).await;
    let db = superuser(&app).await;
    let forged = at.last + 1;
    // A docs user granted every channel, in a stream of its own, chained correctly, its
    // payload as valid as the real ones (it passes the schema check at the app's stop).
    db.execute(
        "INSERT INTO log.events (position, event_id, context, category, stream_key, version, \
         event_type, schema_version, payload, actor, recorded_at, prev_hash, hash) \
         VALUES ($1, gen_random_uuid(), 'docs', 'user', 'db/mallory', 1, 'UserSaved', 1, \
         '{\"db\": \"db\", \"name\": \"mallory\", \"admin_channels\": [\"*\"], \
         \"admin_roles\": [], \"disabled\": false}', 'admin', now(), NULL, '\\x00')",
        &[&forged],
    )
    .await
    .expect("forge");
    db.execute("UPDATE log.head SET position = $1", &[&forged])
        .await
        .expect("head");
    db.execute(
        "INSERT INTO log.streams VALUES ('docs', 'user', 'db/mallory', 1, '\\x00')",
        &[],
    )
    .await
    .expect("stream");
    rechain(
        &db,
        &StreamName::new("docs", "user", "db/mallory").expect("s"),
    )
    .await;
    both_name(&app, &kept, forged).await;
    app.stop().await;
}

#[tokio::test]
async fn the_log_rewritten_from_a_position_with_every_chain_recomputed_is_named() {
    let (app, at) = a_log().await;
    let kept = keep_head(&app).await;
    let db = superuser(&app).await;
    let from = at.first + 3;
    db.execute(
        "UPDATE log.events SET payload = json_build_object('rewritten', position) \
         WHERE position >= $1",
        &[&from],
    )
    .await
    .expect("rewrite");
    rechain(&db, &stream("a")).await;
    rechain(&db, &stream("b")).await;
    both_name(&app, &kept, from).await;
    app.stop().await;
}

#[tokio::test]
async fn a_truncated_log_is_named() {
    let (app, at) = a_log().await;
    let kept = keep_head(&app).await;
    let db = superuser(&app).await;
    let from = at.first + 5;
    db.batch_execute(&format!(
        "DELETE FROM log.events WHERE position >= {from};
         UPDATE log.head SET position = {from} - 1"
    ))
    .await
    .expect("truncate");
    rechain(&db, &stream("a")).await;
    rechain(&db, &stream("b")).await;
    both_name(&app, &kept, from).await;
    app.stop().await;
}

/// The log's tables, as a backup holds them.
const LOG_TABLES: [&str; 8] = [
    "events",
    "streams",
    "head",
    "idempotency",
    "batches",
    "tree_nodes",
    "tree_size",
    "tree_heads",
];

#[tokio::test]
async fn a_log_restored_from_an_older_backup_is_named_even_once_it_grew_again() {
    let (app, at) = a_log().await;
    let db = superuser(&app).await;
    // The backup: the log as it stood at `at.last`.
    for table in LOG_TABLES {
        db.batch_execute(&format!(
            "CREATE TABLE public.backup_{table} AS SELECT * FROM log.{table}"
        ))
        .await
        .expect("backup");
    }
    for v in 0..3 {
        let event = NewEvent::new("Noted", 1, json!({ "after_backup": v }));
        let request = AppendRequest::new().stream(stream("c"), ExpectedVersion::Any, vec![event]);
        app.state.store.append(request).await.expect("append");
    }
    let kept = keep_head(&app).await;
    for table in LOG_TABLES {
        db.batch_execute(&format!(
            "DELETE FROM log.{table}; INSERT INTO log.{table} SELECT * FROM public.backup_{table}"
        ))
        .await
        .expect("restore");
    }
    both_name(&app, &kept, at.last + 1).await;
    // The server appends on (with its key) over the restored log: still named.
    let event = NewEvent::new("Noted", 1, json!({ "after_restore": true }));
    let request = AppendRequest::new().stream(stream("d"), ExpectedVersion::Any, vec![event]);
    app.state
        .store
        .append(request)
        .await
        .expect("append after restore");
    both_name(&app, &kept, at.last + 1).await;
    app.stop().await;
}

#[tokio::test]
async fn a_byte_changed_in_an_attachment_or_a_resources_content_file_is_named() {
    let app = TestApp::builder()
        .data_file("resources-keys.json", r#"{"ann-key": {"user_id": 10}}"#)
        .resources_inline_max(0)
        .docs(palimpsest_docs::Settings {
            inline_max: 0,
            ..Default::default()
        })
        .start()
        .await;
    let http = reqwest::Client::new();
    let res = http
        .put(app.url("/resources/@api/deki/pages/1/files/a.txt"))
        .bearer_auth("ann-key")
        .header("content-type", "text/plain")
        .body("stored outside the log")
        .send()
        .await
        .expect("upload");
    assert!(res.status().is_success(), "{}", res.status());
    attach(&app, &http).await;
    let (_dir, kept) = keep_head(&app).await;
    for folder in [
        app.resources_content_dir(),
        app.data_dir().join("docs-attachments"),
    ] {
        let stored = files(&folder);
        let mut bytes = std::fs::read(&stored[0]).expect("read");
        bytes[0] ^= 1;
        std::fs::write(&stored[0], bytes).expect("tamper");
        let message = verify_since_fails(&app, &kept).await;
        let name = stored[0]
            .file_name()
            .and_then(|n| n.to_str())
            .expect("name");
        assert!(message.contains(name), "{message}");
        std::fs::remove_file(&stored[0]).expect("the next folder alone is altered");
    }
    app.stop().await;
}

/// A docs document with an attachment kept as a file.
async fn attach(app: &TestApp, http: &reqwest::Client) {
    let admin = app.admin_token();
    let put = |path: &str| http.put(app.url(path)).bearer_auth(&admin);
    let db = put("/docs/db").send().await.expect("db");
    assert!(db.status().is_success(), "{}", db.status());
    let created: serde_json::Value = put("/docs/db/d1")
        .json(&json!({}))
        .send()
        .await
        .expect("doc")
        .json()
        .await
        .expect("json");
    let rev = created["rev"].as_str().expect("rev");
    let res = put(&format!("/docs/db/d1/a.txt?rev={rev}"))
        .header("content-type", "text/plain")
        .body("an attachment outside the log")
        .send()
        .await
        .expect("attachment");
    assert!(res.status().is_success(), "{}", res.status());
}

/// Every file two levels below `dir` (`<key[0..2]>/<key>`).
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for prefix in std::fs::read_dir(dir).expect("content folder") {
        for file in std::fs::read_dir(prefix.expect("entry").path()).expect("prefix") {
            out.push(file.expect("entry").path());
        }
    }
    out
}
