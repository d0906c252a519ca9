//! Reads from a streaming replica of the read database, still reading your writes
//! (`--read-replica-url`): a private Postgres cluster holds the read models, a real
//! `pg_basebackup -R` standby follows it, and the app reads atlas through the standby. With the
//! standby's replay paused, a read naming the client's write (header `Palimpsest-Position`,
//! as the write's answer gave it) still sees it (the request waits for the standby, then reads
//! the primary), while a read naming nothing is served by the lagging standby. With the wait
//! turned off the same read misses the write: the check is what keeps the guarantee.

use palimpsest_e2e::postgres::connect;
use palimpsest_testkit::{PgCluster, TestApp};
use reqwest::StatusCode;
use serde_json::json;
use tokio_postgres::Client;

/// A private primary holding database `reads` and a streaming replica of it.
async fn primary_and_replica() -> (PgCluster, PgCluster) {
    let primary = PgCluster::start().await;
    connect(&primary.url("postgres"))
        .await
        .batch_execute("CREATE DATABASE reads")
        .await
        .expect("create the read database");
    let replica = primary.streaming_replica().await;
    (primary, replica)
}

/// Waits until the standby has replayed atlas' checkpoint up to `position` (it follows a
/// primary that committed it).
async fn replayed(standby: &Client, position: i64) {
    for _ in 0..2000 {
        let row = standby
            .query_one("SELECT position FROM atlas.projection_checkpoint", &[])
            .await
            .expect("the standby's checkpoint");
        if row.get::<_, i64>(0) >= position {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("the standby never replayed position {position}");
}

/// Creates a section; its id and the position the answer names.
async fn create_section(app: &TestApp, title: &str) -> (String, i64) {
    let answer = reqwest::Client::new()
        .post(app.url("/atlas/sections"))
        .bearer_auth(app.admin_token())
        .json(&json!({"title": title}))
        .send()
        .await
        .expect("create");
    assert_eq!(answer.status(), StatusCode::CREATED, "create {title}");
    let position = answer
        .headers()
        .get("palimpsest-position")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<i64>().ok())
        .expect("the write's answer names its position");
    let body: serde_json::Value = answer.json().await.expect("json");
    (body["id"].as_str().expect("id").to_owned(), position)
}

/// The status of reading section `id`, naming `position` when given.
async fn read_section(app: &TestApp, id: &str, position: Option<i64>) -> StatusCode {
    let mut request = reqwest::Client::new()
        .get(app.url(&format!("/atlas/sections/{id}")))
        .bearer_auth(app.admin_token());
    if let Some(position) = position {
        request = request.header("palimpsest-position", position.to_string());
    }
    request.send().await.expect("read").status()
}

/// The app reading atlas through the replica (checked or not), the standby's replay paused after
/// a first section, then a second section written: what a read naming the second write's
/// position answers, and what a read naming nothing answers.
async fn read_while_the_replica_lags(checked: bool) -> (StatusCode, StatusCode) {
    let (primary, replica) = primary_and_replica().await;
    let mut builder = TestApp::builder()
        .read_database(&primary.url("reads"))
        .read_replica(&replica.url("reads"));
    if !checked {
        builder = builder.read_replica_unchecked();
    }
    let app = builder.start().await;
    let (first, at) = create_section(&app, "first").await;
    if checked {
        assert_eq!(
            read_section(&app, &first, Some(at)).await,
            StatusCode::OK,
            "a read naming its write sees it"
        );
    }
    let standby = connect(&replica.url("reads")).await;
    replayed(&standby, at).await;
    standby
        .batch_execute("SELECT pg_wal_replay_pause()")
        .await
        .expect("pause the standby's replay");
    let (second, at) = create_section(&app, "second").await;
    let named = read_section(&app, &second, Some(at)).await;
    let unnamed = read_section(&app, &second, None).await;
    standby
        .batch_execute("SELECT pg_wal_replay_resume()")
        .await
        .expect("resume the standby's replay");
    app.stop().await;
    drop((replica, primary));
    (named, unnamed)
}

#[tokio::test]
async fn a_read_naming_its_write_sees_it_while_the_replica_lags() {
    let (named, unnamed) = read_while_the_replica_lags(true).await;
    assert_eq!(
        unnamed,
        StatusCode::NOT_FOUND,
        "a read naming no position is served by the lagging replica"
    );
    assert_eq!(named, StatusCode::OK, "a read naming its write sees it");
}

#[tokio::test]
async fn without_the_replica_wait_a_read_naming_its_write_misses_it() {
    let (named, _) = read_while_the_replica_lags(false).await;
    assert_eq!(
        named,
        StatusCode::NOT_FOUND,
        "unchecked, the lagging replica answers: the wait is what the test above proves"
    );
}
