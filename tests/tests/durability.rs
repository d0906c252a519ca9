//! Found by `just chaos` (postgres-stop): acknowledged appends were lost when Postgres stopped
//! immediately. Batches commit with `synchronous_commit = off` and their callers are answered
//! after a later synchronous commit; that commit (`SELECT pg_current_xact_id()`) wrote no WAL,
//! and Postgres commits such a transaction asynchronously, so nothing had been flushed. An
//! append that returned must survive a crash of the server right after it — whether it was
//! answered after the separate durability commit or, alone in the queue, after its own
//! synchronous commit.

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::{AppendOptions, AppendRequest, EventStore};
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
    // Rounds alternate the two ways a batch is made durable: its own synchronous commit (a
    // batch alone in the queue, the default) and the separate durability commit after an
    // asynchronous one (what every batch of a busy appender does).
    for round in 0..ROUNDS * 2 {
        let options = AppendOptions {
            flush_when_alone: round % 2 == 0,
            ..AppendOptions::default()
        };
        let pool = palimpsest_log::store::pool(&url, 4).expect("pool");
        let store = EventStore::with_options(&url, pool, options)
            .await
            .expect("connect");
        let stream = StreamName::new("test", "durable", format!("round-{round}")).expect("name");
        // The first append reads the heads under the lock (a cold batch), the second is planned
        // from memory (a warm batch, one round trip).
        for expected in [ExpectedVersion::NoStream, ExpectedVersion::Exact(1)] {
            store
                .append(AppendRequest::new().stream(
                    stream.clone(),
                    expected,
                    vec![NewEvent::new("Appended", 1, json!({ "round": round }))],
                ))
                .await
                .expect("append");
        }
        pg.stop_immediate();
        drop(store);
        pg.restart().await;
        let store = EventStore::connect(&url).await.expect("reconnect");
        if store.stream_version(&stream).await.expect("version") != 2 {
            lost.push(round);
        }
    }
    assert!(lost.is_empty(), "appends lost in rounds {lost:?}");
}
