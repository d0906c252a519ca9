//! The live feed of a sub-collection as Server-Sent Events.

mod common;

use common::Records;
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
