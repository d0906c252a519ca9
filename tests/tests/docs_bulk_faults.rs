//! Found by `just chaos` (postgres-stop): a `_bulk_docs` whose try could not read one
//! document's stream answered 201 with that document "internal_server_error" or
//! "service_unavailable" beside the others, which it appended. A replicator takes such an
//! answer as the document's own failure and moves on; the document is never written. A failure
//! to read what the write needs now fails the whole write: 5xx, nothing appended, nothing kept
//! under its key, so the client sends it again.

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};

async fn incarnation(app: &TestApp, db: &str) -> String {
    let stream = StreamName::new("docs", "database", db).expect("stream");
    let events = app
        .state
        .store
        .read_stream(&stream, 0, 10)
        .await
        .expect("database stream");
    events
        .first()
        .and_then(|e| e.payload["incarnation"].as_str())
        .expect("DatabaseCreated with its incarnation")
        .to_owned()
}

async fn events_of(app: &TestApp, stream: &StreamName) -> usize {
    app.state
        .store
        .read_stream(stream, 0, 10)
        .await
        .expect("read")
        .len()
}

#[tokio::test]
async fn a_bulk_write_that_cannot_read_a_document_fails_whole_and_appends_nothing() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let created = http
        .put(app.url("/docs/db"))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("create db");
    assert_eq!(created.status().as_u16(), 201);
    let incarnation = incarnation(&app, "db").await;
    // A document stream whose event does not decode: loading it fails, as a load fails when
    // the log is unavailable.
    let unreadable =
        StreamName::new("docs", "document", format!("{incarnation}/unreadable")).expect("stream");
    app.allow_invalid_events(&unreadable);
    app.state
        .store
        .append(AppendRequest::new().stream(
            unreadable,
            ExpectedVersion::NoStream,
            vec![NewEvent::new(
                "RevisionStored",
                1,
                json!({"not": "a revision"}),
            )],
        ))
        .await
        .expect("append");
    let good = StreamName::new("docs", "document", format!("{incarnation}/good")).expect("stream");

    let answer = http
        .post(app.url("/docs/db/_bulk_docs"))
        .bearer_auth(app.admin_token())
        .header("Idempotency-Key", "bulk-1")
        .json(&json!({"docs": [{"_id": "unreadable", "n": 1}, {"_id": "good", "n": 2}]}))
        .send()
        .await
        .expect("bulk");
    let status = answer.status().as_u16();
    let body: Value = answer.json().await.unwrap_or(Value::Null);
    assert!(
        status >= 500,
        "the write fails as a whole, not item by item: {status} {body}"
    );
    assert!(body["error"].is_string(), "a CouchDB error body: {body}");
    assert_eq!(events_of(&app, &good).await, 0, "nothing was appended");
    let kept = app
        .state
        .store
        .command_reply("bulk-1")
        .await
        .expect("read key");
    assert!(kept.is_none(), "nothing is kept under the key");
    app.stop().await;
}
