//! `palimpsest audit witness` (decision 0024): rounds around new writes are consistent; an
//! event edited in the database by a superuser (triggers off) is found by the recheck and named
//! by its position, whether its stored hash was left alone or recomputed to match; a server
//! answering with another log's key is a fork.

use palimpsest::cli::audit::{AuditCommand, run};
use palimpsest::cli::witness::{self, WitnessArgs};
use palimpsest::config::Settings;
use palimpsest_e2e::workload;
use palimpsest_events::RecordedEvent;
use palimpsest_events::canonical::chain_hash;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

// Writes go through a real route as the admin.
use workload::post_as_admin as post;

/// A section created, locked and unlocked: three events of its stream.
async fn write_section(app: &TestApp, title: &str) {
    let section = post(app, "/atlas/sections", json!({"title": title})).await;
    let id = section["id"].as_str().expect("id");
    for step in ["lock", "unlock"] {
        post(app, &format!("/atlas/sections/{id}/{step}"), json!({})).await;
    }
}

/// Waits until a signed head covers the whole log.
async fn head_covers_the_log(app: &TestApp) -> u64 {
    let log = app.state.store.head_position().await.expect("head") as u64;
    let started = Instant::now();
    loop {
        let head: Value = reqwest::get(app.url("/v1/log/head"))
            .await
            .expect("head")
            .json()
            .await
            .unwrap_or(Value::Null);
        if head["tree_size"].as_u64().is_some_and(|s| s >= log) {
            return log;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no head covers {log}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn args(app: &TestApp, state: &Path, recheck_every: u64) -> WitnessArgs {
    WitnessArgs {
        url: app.url(""),
        token: Some(app.admin_token()),
        state: state.to_path_buf(),
        interval: 100,
        recheck_every,
        once: true,
        metrics_addr: None,
    }
}

/// `audit witness --once`, the error's whole text on failure.
async fn witness_once(app: &TestApp, state: &Path, recheck_every: u64) -> Result<(), String> {
    let settings = Settings::for_database(app.database_url(), app.data_dir());
    run(
        &settings,
        AuditCommand::Witness(args(app, state, recheck_every)),
    )
    .await
    .map_err(|e| format!("{e:#}"))
}

fn state_file(app: &TestApp) -> PathBuf {
    app.data_dir().join("witness.json")
}

/// The event at `position` as `/v1/events` publishes it.
async fn event_at(app: &TestApp, position: u64) -> RecordedEvent {
    let page: Value = reqwest::Client::new()
        .get(app.url(&format!("/v1/events?after={}&limit=1", position - 1)))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("events")
        .json()
        .await
        .expect("json");
    serde_json::from_value(page["events"][0].clone()).expect("event")
}

/// As a Postgres superuser with the append-only trigger off: the payload of `position` set to
/// `payload`, and its stored hash set to `hash` when given.
async fn tamper(app: &TestApp, position: u64, payload: &Value, hash: Option<&[u8]>) {
    let (client, connection) = tokio_postgres::connect(&app.database_url(), tokio_postgres::NoTls)
        .await
        .expect("connect");
    let running = tokio::spawn(connection);
    client
        .batch_execute("SET session_replication_role = replica")
        .await
        .expect("triggers off");
    let updated = client
        .execute(
            "UPDATE log.events SET payload = $2::text::json, hash = coalesce($3, hash)
             WHERE position = $1",
            &[&(position as i64), &payload.to_string(), &hash],
        )
        .await
        .expect("update");
    assert_eq!(updated, 1);
    // The forged payload fits no schema: the app's stop is told not to check its stream.
    let row = client
        .query_one(
            "SELECT context, category, stream_key FROM log.events WHERE position = $1",
            &[&(position as i64)],
        )
        .await
        .expect("stream");
    let stream = palimpsest_events::StreamName::new(
        row.get::<_, String>(0),
        row.get::<_, String>(1),
        row.get::<_, String>(2),
    )
    .expect("stream name");
    app.allow_invalid_events(&stream);
    drop(client);
    let _ = running.await;
}

/// Three rounds of the witness, around writes, then a superuser's edit of the payload of the
/// log's second event (hash untouched): the third round, rechecking every leaf, names it.
#[tokio::test]
async fn the_witness_follows_writes_and_names_a_payload_edited_in_the_database() {
    let app = TestApp::start().await;
    let state = state_file(&app);
    write_section(&app, "first").await;
    let first = head_covers_the_log(&app).await;
    witness_once(&app, &state, 10)
        .await
        .expect("the first round trusts the first head");
    let kept = witness::load(&state).expect("state").expect("kept");
    assert!(
        kept.head.head.tree_size >= first,
        "{}",
        kept.head.head.tree_size
    );
    assert!(kept.leaves.is_some());

    write_section(&app, "second").await;
    let second = head_covers_the_log(&app).await;
    witness_once(&app, &state, 10)
        .await
        .expect("consistent after more writes");
    let kept = witness::load(&state).expect("state").expect("kept");
    assert!(kept.head.head.tree_size >= second);
    assert_eq!(kept.rounds, 2);

    let event = event_at(&app, 2).await;
    tamper(&app, 2, &json!({"forged": true}), None).await;
    let failed = witness_once(&app, &state, 1)
        .await
        .expect_err("the recheck finds the edit");
    assert!(failed.contains("fork at position 2:"), "{failed}");
    assert!(failed.contains("edited"), "{failed}");
    assert_eq!(event.position, 2);
    app.stop().await;
}

/// A superuser edits the payload of a stream's last event and recomputes its hash so that the
/// chain (and `audit verify`) hold: the leaf still differs from the one the witness kept.
#[tokio::test]
async fn the_witness_names_an_event_rewritten_with_a_recomputed_hash() {
    let app = TestApp::start().await;
    let state = state_file(&app);
    write_section(&app, "first").await;
    write_section(&app, "second").await;
    head_covers_the_log(&app).await;
    witness_once(&app, &state, 1).await.expect("first round");
    // The log's third event is the first section's last: nothing chains from it.
    let mut event = event_at(&app, 3).await;
    assert_eq!(event.version, 3, "{event:?}");
    event.payload = json!({"forged": true});
    let previous = event
        .prev_hash
        .as_deref()
        .map(|h| <[u8; 32]>::try_from(hex::decode(h).expect("hex")).expect("32 bytes"));
    let hash = chain_hash(previous.as_ref(), &event.canonical_content());
    tamper(&app, 3, &event.payload, Some(&hash)).await;
    assert_eq!(
        event_at(&app, 3).await.hash,
        hex::encode(hash),
        "the edit holds"
    );
    let failed = witness_once(&app, &state, 1)
        .await
        .expect_err("the kept leaf differs");
    assert!(failed.contains("fork at position 3:"), "{failed}");
    assert!(
        failed.contains("not the one the witness verified"),
        "{failed}"
    );
    app.stop().await;
}

/// The witness's state kept for one log, then a server answering with another log's key.
#[tokio::test]
async fn another_logs_key_is_a_fork() {
    let one = TestApp::start().await;
    let two = TestApp::start().await;
    write_section(&one, "one").await;
    write_section(&two, "two").await;
    head_covers_the_log(&one).await;
    head_covers_the_log(&two).await;
    let state = state_file(&one);
    witness_once(&one, &state, 10).await.expect("first round");
    let size = witness::load(&state)
        .expect("state")
        .expect("kept")
        .head
        .head
        .tree_size;
    let failed = witness_once(&two, &state, 10)
        .await
        .expect_err("another key");
    assert!(
        failed.contains(&format!("fork at position {}:", size + 1)),
        "{failed}"
    );
    assert!(failed.contains("key changed"), "{failed}");
    one.stop().await;
    two.stop().await;
}

/// The heads after the kept one are deleted (as a restore from an older backup would leave
/// them): the head served is smaller than the kept one, a fork at the first position gone,
/// counted in the witness's `/metrics`.
#[tokio::test]
async fn a_log_that_shrank_is_a_fork_counted_in_metrics() {
    let app = TestApp::start().await;
    write_section(&app, "first").await;
    let older = head_covers_the_log(&app).await;
    write_section(&app, "second").await;
    head_covers_the_log(&app).await;
    let state = state_file(&app);
    witness_once(&app, &state, 10).await.expect("first round");
    let kept = witness::load(&state).expect("state").expect("kept");
    let (client, connection) = tokio_postgres::connect(&app.database_url(), tokio_postgres::NoTls)
        .await
        .expect("connect");
    let running = tokio::spawn(connection);
    client
        .batch_execute("SET session_replication_role = replica")
        .await
        .expect("triggers off");
    client
        .execute(
            "DELETE FROM log.tree_heads WHERE tree_size > $1",
            &[&(older as i64)],
        )
        .await
        .expect("delete");
    drop(client);
    let _ = running.await;
    let served: Value = reqwest::get(app.url("/v1/log/head"))
        .await
        .expect("head")
        .json()
        .await
        .expect("json");
    let size = served["tree_size"].as_u64().expect("tree_size");
    assert!(size < kept.head.head.tree_size, "{served}");

    let metrics = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port");
    let settings = Settings::for_database(app.database_url(), app.data_dir());
    let witness = WitnessArgs {
        metrics_addr: Some(metrics),
        ..args(&app, &state, 10)
    };
    let failed = run(&settings, AuditCommand::Witness(witness))
        .await
        .expect_err("the log shrank");
    let failed = format!("{failed:#}");
    assert!(
        failed.contains(&format!("fork at position {}:", size + 1)),
        "{failed}"
    );
    assert!(failed.contains("shrank"), "{failed}");
    let text = reqwest::get(format!("http://{metrics}/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    let forks = text
        .lines()
        .find_map(|l| l.strip_prefix("palimpsest_witness_forks_total "))
        .and_then(|n| n.trim().parse::<f64>().ok());
    assert!(forks.is_some_and(|n| n >= 1.0), "{text}");
    app.stop().await;
}

/// What the server's tree is made from is changed under the kept head (the stored hash that
/// position 3's leaf is made from, its content left as it was; the tree keeps no leaf rows):
/// the witness names position 3, whose leaf the server's tree no longer holds.
#[tokio::test]
async fn a_leaf_changed_under_the_kept_head_is_a_fork_naming_its_position() {
    let app = TestApp::start().await;
    write_section(&app, "first").await;
    let older = head_covers_the_log(&app).await;
    assert_eq!(older, 3);
    let state = state_file(&app);
    witness_once(&app, &state, 10).await.expect("first round");
    write_section(&app, "second").await;
    head_covers_the_log(&app).await;
    let (client, connection) = tokio_postgres::connect(&app.database_url(), tokio_postgres::NoTls)
        .await
        .expect("connect");
    let running = tokio::spawn(connection);
    client
        .batch_execute("SET session_replication_role = replica")
        .await
        .expect("triggers off");
    let changed = client
        .execute(
            "UPDATE log.events SET hash = sha256(hash) WHERE position = 3",
            &[],
        )
        .await
        .expect("update");
    assert_eq!(changed, 1);
    drop(client);
    let _ = running.await;
    let failed = witness_once(&app, &state, 10).await.expect_err("a fork");
    assert!(failed.contains("fork at position 3:"), "{failed}");
    app.stop().await;
}
