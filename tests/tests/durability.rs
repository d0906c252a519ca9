//! Found by `just chaos` (postgres-stop): acknowledged appends were lost when Postgres stopped
//! immediately. Batches commit with `synchronous_commit = off` and their callers are answered
//! after a later synchronous commit; that commit (`SELECT pg_current_xact_id()`) wrote no WAL,
//! and Postgres commits such a transaction asynchronously, so nothing had been flushed. An
//! append that returned must survive a crash of the server right after it.

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_testkit::PgCluster;
use serde_json::json;

/// Rounds of append-then-crash: before the fix each round lost its append unless the WAL
/// writer (every 200 ms) happened to flush in the few milliseconds between them.
const ROUNDS: usize = 5;

#[tokio::test]
async fn an_append_that_returned_survives_an_immediate_stop_right_after_it() {
    let mut pg = PgCluster::start().await;
    let url = pg.url("durability");
    palimpsest_log::store::create_database_if_missing(&url)
        .await
        .expect("create database");
    let mut lost = Vec::new();
    for round in 0..ROUNDS {
        let store = EventStore::connect(&url).await.expect("connect");
        let stream = StreamName::new("test", "durable", format!("round-{round}")).expect("name");
        store
            .append(AppendRequest::new().stream(
                stream.clone(),
                ExpectedVersion::NoStream,
                vec![NewEvent::new("Appended", 1, json!({ "round": round }))],
            ))
            .await
            .expect("append");
        pg.stop_immediate();
        drop(store);
        pg.restart().await;
        let store = EventStore::connect(&url).await.expect("reconnect");
        if store.stream_version(&stream).await.expect("version") != 1 {
            lost.push(round);
        }
    }
    assert!(lost.is_empty(), "appends lost in rounds {lost:?}");
}
