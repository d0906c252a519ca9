//! The live feed of a sub-collection as Server-Sent Events.

mod common;

use common::Records;
use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::AppendRequest;
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_subscriber_of_a_collection_receives_its_changes_live() {
    let r = Records::start().await;
    let token = r.token("demo").await;
    let mut feed = r
        .http
        .get(format!("{}/feed?cl=Article&ik=1&val=Hugo", r.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("feed");
    assert_eq!(feed.status(), reqwest::StatusCode::OK);
    let first = feed.chunk().await.expect("chunk").expect("first event");
    assert!(String::from_utf8_lossy(&first).contains("event: rows"));
    let doc = r
        .ok(
            "insertDoc",
            json!({"org": "demo", "data": {"clazz": "Article", "p1": "a1", "auteur": "Hugo"}}),
        )
        .await;
    let pk = doc["pk"].as_str().expect("pk").to_owned();
    let mut seen = String::new();
    let found = tokio::time::timeout(Duration::from_secs(10), async {
        while let Ok(Some(chunk)) = feed.chunk().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
            if seen.contains(&pk) {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(found, Ok(true), "{seen}");
    let (status, body) = r.call_as(&token, "listDocs", json!({"cl": "Nope"})).await;
    assert_eq!(status, reqwest::StatusCode::BAD_REQUEST, "{body}");
    let bad = r
        .http
        .get(format!("{}/feed?cl=Nope", r.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("feed");
    assert_eq!(bad.status(), reqwest::StatusCode::BAD_REQUEST);
    drop(feed);
    r.stop().await;
}

/// Another context's event wakes the feed once, not over and over: the records read model
/// passes it over at once and commits its checkpoint past it later (decision 0033), so the
/// feed waits past where the read model stands, not past its committed checkpoint.
#[tokio::test]
async fn another_contexts_event_wakes_the_feed_once() {
    let r = Records::start().await;
    let token = r.token("demo").await;
    let mut feed = r
        .http
        .get(format!("{}/feed?cl=Article&ik=1&val=Hugo", r.base))
        .bearer_auth(&token)
        .send()
        .await
        .expect("feed");
    let first = feed.chunk().await.expect("chunk").expect("first event");
    assert!(String::from_utf8_lossy(&first).contains("event: rows"));
    let stream = StreamName::new("test", "thing", "elsewhere").expect("stream");
    r.app.allow_invalid_events(&stream);
    let event = NewEvent::new("Happened", 1, json!({}));
    r.state
        .store
        .append(AppendRequest::new().stream(stream, ExpectedVersion::Any, vec![event]))
        .await
        .expect("append");
    let mut seen = String::new();
    let _ = tokio::time::timeout(Duration::from_millis(500), async {
        while let Ok(Some(chunk)) = feed.chunk().await {
            seen.push_str(&String::from_utf8_lossy(&chunk));
        }
    })
    .await;
    let wakes = seen.matches("event: rows").count();
    assert!(
        wakes <= 2,
        "{wakes} answers for one event of another context: {seen}"
    );
    drop(feed);
    r.stop().await;
}
