//! Throughput beside its floor, measured in one run (ignored by default; run with
//! `cargo test -p palimpsest-docs --release --test throughput -- --ignored --nocapture`):
//! `_bulk_docs` of 100-document batches against the log's own rate for 100-event appends.

mod common;

use common::Docs;
use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::AppendRequest;
use serde_json::json;
use std::time::Instant;

const BATCHES: usize = 30;
const BATCH: usize = 100;

#[tokio::test]
#[ignore = "a measurement: run explicitly"]
async fn bulk_docs_against_the_logs_own_rate() {
    let docs = Docs::start().await;
    docs.call("PUT", "/bench", None).await;
    let started = Instant::now();
    for batch in 0..BATCHES {
        let items: Vec<_> = (0..BATCH)
            .map(
                |i| json!({"_id": format!("d{batch:04}-{i:03}"), "n": i, "text": "some body text"}),
            )
            .collect();
        let (status, _) = docs
            .call("POST", "/bench/_bulk_docs", Some(json!({"docs": items})))
            .await;
        assert_eq!(status, 201);
    }
    let docs_rate = (BATCHES * BATCH) as f64 / started.elapsed().as_secs_f64();
    let started = Instant::now();
    for batch in 0..BATCHES {
        let mut request = AppendRequest::new();
        for i in 0..BATCH {
            let stream = StreamName::new("bench", "floor", format!("s{batch}-{i}")).expect("name");
            let event = NewEvent::new("Floor", 1, json!({"n": i, "text": "some body text"}));
            request = request.stream(stream, ExpectedVersion::NoStream, vec![event]);
        }
        docs.app.state.store.append(request).await.expect("append");
    }
    let log_rate = (BATCHES * BATCH) as f64 / started.elapsed().as_secs_f64();
    eprintln!(
        "_bulk_docs: {docs_rate:.0} docs/s; log floor (100-stream appends): {log_rate:.0} events/s; ratio {:.0}%",
        100.0 * docs_rate / log_rate
    );
    docs.stop().await;
}
