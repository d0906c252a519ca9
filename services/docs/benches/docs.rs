//! Docs figures, each beside a floor measured in the same run, with its target:
//!
//! - `_bulk_docs` of 100-document batches over HTTP (through the command runner, waiting for
//!   the read model), new documents and then a round of updates of them, beside the log's own
//!   rate for 100-event appends (one event per stream, payloads of the same size; for the
//!   updates, a second event on each of those streams) [≥ 50%]; and new documents again
//!   into a database with a JavaScript sync function (QuickJS), beside a fresh floor;
//! - `_changes` of 100,000 documents (normal feed, read whole by the client) beside a plain scan
//!   of the same columns of the same rows of the read model's table in one query [≥ 30%].
//!
//! Real PouchDB replicating, beside pouchdb-server, is `benches/replication.rs`.
//!
//! `cargo bench -p palimpsest-docs --bench docs` (a fresh database on the local Postgres, or
//! on the server `PALIMPSEST_TEST_ADMIN_URL` names, dropped at the end).

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::time::Instant;

/// Documents per `_bulk_docs` request and events per floor append.
const BATCH: usize = 100;
/// Batches per phase.
const BATCHES: usize = 20;
/// Documents in the `_changes` read.
const CHANGES_DOCS: usize = 100_000;

/// A document body of an ordinary size.
fn body(batch: usize, i: usize, round: usize) -> Value {
    json!({"n": i, "batch": batch, "round": round, "text": "some body text of an ordinary length", "tags": ["a", "b"]})
}

fn doc_id(batch: usize, i: usize) -> String {
    format!("d{batch:04}-{i:03}")
}

/// The floor: 100-event appends, one event per stream, each payload shaped and sized like the
/// revision the same document becomes (`round` 0: new streams; 1: their second event).
async fn log_rate(store: &EventStore, prefix: &str, round: usize) -> f64 {
    let started = Instant::now();
    for batch in 0..BATCHES {
        let mut request = AppendRequest::new();
        for i in 0..BATCH {
            let stream =
                StreamName::new("bench", "floor", format!("{prefix}-{}", doc_id(batch, i)))
                    .expect("stream name");
            let payload = json!({
                "RevisionStored": {
                    "db": "bench", "doc_id": doc_id(batch, i),
                    "rev": format!("{}-0123456789abcdef0123456789abcdef", round + 1),
                    "ancestry": if round == 0 { json!([]) } else { json!(["1-0123456789abcdef0123456789abcdef"]) },
                    "body": body(batch, i, round).to_string(), "deleted": false, "channels": [], "access": {}
                }
            });
            let expected = if round == 0 {
                ExpectedVersion::NoStream
            } else {
                ExpectedVersion::Exact(round as i64)
            };
            request = request.stream(stream, expected, vec![NewEvent::new("Floor", 1, payload)]);
        }
        store.append(request).await.expect("floor append");
    }
    (BATCHES * BATCH) as f64 / started.elapsed().as_secs_f64()
}

/// `_bulk_docs` of `BATCHES` batches of new documents (`revs`: none) or of updates of them.
async fn bulk_rate(http: &reqwest::Client, db_url: &str, round: usize, revs: &mut [String]) -> f64 {
    let key = db_url.rsplit('/').next().unwrap_or("db").to_owned();
    let started = Instant::now();
    for batch in 0..BATCHES {
        let docs: Vec<Value> = (0..BATCH)
            .map(|i| {
                let mut doc = body(batch, i, round);
                doc["_id"] = json!(doc_id(batch, i));
                if round > 0 {
                    doc["_rev"] = json!(revs[batch * BATCH + i]);
                }
                doc
            })
            .collect();
        let response = http
            .post(format!("{db_url}/_bulk_docs"))
            .header("Idempotency-Key", format!("{key}-{round}-{batch}"))
            .json(&json!({"docs": docs}))
            .send()
            .await
            .expect("_bulk_docs");
        assert_eq!(response.status().as_u16(), 201);
        let answers: Vec<Value> = response.json().await.expect("answers");
        for (i, answer) in answers.iter().enumerate() {
            let rev = answer["rev"].as_str().expect("every document written");
            revs[batch * BATCH + i] = rev.to_owned();
        }
    }
    (BATCHES * BATCH) as f64 / started.elapsed().as_secs_f64()
}

/// Fills database `db` with `CHANGES_DOCS` documents straight in the read model, each a copy
/// of one document written through the API with its own id and sequence (the log is not read
/// by `_changes`, so it need not hold them).
async fn seed_changes(app: &TestApp, http: &reqwest::Client, db: &str) {
    let db_url = app.url(&format!("/docs/{db}"));
    assert_eq!(
        http.put(&db_url)
            .bearer_auth(app.admin_token())
            .send()
            .await
            .expect("create")
            .status(),
        201
    );
    let written = http
        .put(format!("{db_url}/template"))
        .json(&body(0, 0, 0))
        .send()
        .await
        .expect("template");
    assert_eq!(written.status(), 201);
    let client = app.state.read.get().await.expect("client");
    let row = client
        .query_one(
            "SELECT value, seq FROM docs.kv WHERE db = $1 AND key = 'template'",
            &[&db],
        )
        .await
        .expect("template row");
    let (value, seq): (String, i64) = (row.get(0), row.get(1));
    let marker = format!("\"sequence\":{seq}");
    assert!(
        value.contains(&marker),
        "the stored form names its sequence"
    );
    client
        .execute(
            "INSERT INTO docs.kv (db, key, value, seq, rev, deleted) \
             SELECT $1, 'c' || lpad(n::text, 6, '0'), replace($2, $3, '\"sequence\":' || ($4 + n)), \
                    $4 + n, rev, deleted \
             FROM generate_series(1, $5::bigint) AS n, docs.kv WHERE db = $1 AND key = 'template'",
            &[&db, &value, &marker, &seq, &(CHANGES_DOCS as i64 - 1)],
        )
        .await
        .expect("seed");
    client
        .execute("ANALYZE docs.kv", &[])
        .await
        .expect("analyze");
}

#[tokio::main]
async fn main() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    println!("docs bench (floors measured in the same run)");

    let db_url = app.url("/docs/bench");
    assert_eq!(
        http.put(&db_url)
            .bearer_auth(app.admin_token())
            .send()
            .await
            .expect("create")
            .status(),
        201
    );
    let mut revs = vec![String::new(); BATCHES * BATCH];
    for (round, what) in [(0, "new documents"), (1, "updates")] {
        let floor = log_rate(&app.state.store, "bench", round).await;
        let rate = bulk_rate(&http, &db_url, round, &mut revs).await;
        println!(
            "  _bulk_docs, {BATCH}-document batches, {what:>13}: {rate:>7.0} docs/s   log {BATCH}-event appends: {floor:>7.0} events/s   ratio {:>5.1}% (goal >= 50%)",
            100.0 * rate / floor
        );
    }

    // The same new documents into a database with a JavaScript sync function (QuickJS).
    let js_url = app.url("/docs/bench_js");
    assert_eq!(
        http.put(&js_url)
            .bearer_auth(app.admin_token())
            .send()
            .await
            .expect("create")
            .status(),
        201
    );
    let configured = http
        .put(app.url("/docs/_admin/bench_js/_config/sync"))
        .bearer_auth(app.admin_token())
        .body("function(doc, oldDoc) { channel(doc.tags); if (doc.n % 2) { access('user' + doc.n, 'a'); } }")
        .send()
        .await
        .expect("sync function");
    assert!(configured.status().is_success());
    let floor = log_rate(&app.state.store, "bench_js", 0).await;
    let mut js_revs = vec![String::new(); BATCHES * BATCH];
    let rate = bulk_rate(&http, &js_url, 0, &mut js_revs).await;
    println!(
        "  _bulk_docs, {BATCH}-document batches, JS sync fn.: {rate:>7.0} docs/s   log {BATCH}-event appends: {floor:>7.0} events/s   ratio {:>5.1}% (goal >= 50%)",
        100.0 * rate / floor
    );

    seed_changes(&app, &http, "changes").await;
    let client = app.state.read.get().await.expect("client");
    let started = Instant::now();
    let rows = client
        .query(
            "SELECT key, seq, rev, deleted FROM docs.kv WHERE db = 'changes' AND seq IS NOT NULL ORDER BY seq",
            &[],
        )
        .await
        .expect("scan");
    let scan = started.elapsed().as_secs_f64();
    assert_eq!(rows.len(), CHANGES_DOCS);
    drop(client);
    let started = Instant::now();
    let feed = http
        .get(app.url("/docs/changes/_changes"))
        .send()
        .await
        .expect("_changes")
        .bytes()
        .await
        .expect("body");
    let read = started.elapsed().as_secs_f64();
    let answer: Value = serde_json::from_slice(&feed).expect("json");
    assert_eq!(
        answer["results"].as_array().map(Vec::len),
        Some(CHANGES_DOCS)
    );
    println!(
        "  _changes of {CHANGES_DOCS} docs: {:>6.0} ms ({:.0} rows/s, {:.1} MB)   plain scan: {:>5.0} ms   ratio {:>5.1}% (goal >= 30%)",
        read * 1000.0,
        CHANGES_DOCS as f64 / read,
        feed.len() as f64 / 1e6,
        scan * 1000.0,
        100.0 * scan / read
    );

    app.stop().await;
}
