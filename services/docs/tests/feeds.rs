//! `_changes?feed=eventsource`: CouchDB's server-sent events (`data: {row}` + `id: <seq>`,
//! `heartbeat` events while it waits), honouring `since` (or `Last-Event-ID`), `timeout`,
//! `limit` and the filters, as the other feeds do.

mod common;

use common::Docs;
use serde_json::{Value, json};

/// One server-sent event: its `event` type (none for a message), `data` and `id`.
#[derive(Debug, Default)]
struct Event {
    kind: Option<String>,
    data: String,
    id: Option<String>,
}

fn events(text: &str) -> Vec<Event> {
    text.split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut event = Event::default();
            for line in block.lines() {
                let (field, value) = line.split_once(": ").unwrap_or((line, ""));
                match field {
                    "event" => event.kind = Some(value.to_owned()),
                    "data" => event.data.push_str(value),
                    "id" => event.id = Some(value.to_owned()),
                    other => panic!("unexpected field `{other}` in {block:?}"),
                }
            }
            event
        })
        .collect()
}

async fn put(docs: &Docs, id: &str, channels: &[&str]) -> i64 {
    let (status, _) = docs
        .call(
            "PUT",
            &format!("/db/{id}"),
            Some(json!({"channels": channels})),
        )
        .await;
    assert_eq!(status, 201);
    let (_, changes) = docs.call("GET", "/db/_changes", None).await;
    changes["last_seq"].as_i64().expect("last_seq")
}

/// The rows of an event stream's messages, each checked to carry its sequence as its id.
fn rows(text: &str) -> Vec<Value> {
    events(text)
        .into_iter()
        .filter(|e| e.kind.is_none())
        .map(|e| {
            let row: Value = serde_json::from_str(&e.data).expect("data is a change row");
            assert_eq!(e.id, Some(row["seq"].to_string()), "id is the row's seq");
            row
        })
        .collect()
}

/// The document ids of the changes an eventsource request answers.
async fn ids(request: reqwest::RequestBuilder) -> Vec<Value> {
    let text = request
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("text");
    rows(&text).iter().map(|r| r["id"].clone()).collect()
}

#[tokio::test]
async fn the_eventsource_feed_sends_changes_as_server_sent_events_with_heartbeats() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let after_a = put(&docs, "a", &["x"]).await;
    put(&docs, "b", &["y"]).await;
    let url = docs.url(&format!(
        "/db/_changes?feed=eventsource&since={after_a}&heartbeat=100&timeout=1500"
    ));
    let waiting = tokio::spawn(async move {
        let response = reqwest::get(url).await.expect("get");
        let kind = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        (kind, response.text().await.expect("text"))
    });
    tokio::time::sleep(std::time::Duration::from_millis(400)).await;
    put(&docs, "c", &["y"]).await;
    let (kind, text) = waiting.await.expect("join");
    assert_eq!(kind.as_deref(), Some("text/event-stream"));
    let ids: Vec<Value> = rows(&text).iter().map(|r| r["id"].clone()).collect();
    assert_eq!(ids, [json!("b"), json!("c")], "{text}");
    assert!(
        events(&text)
            .iter()
            .any(|e| e.kind.as_deref() == Some("heartbeat") && e.data.is_empty()),
        "heartbeat events while waiting: {text}"
    );
    assert!(!text.contains("last_seq"), "an event stream just ends");
    docs.stop().await;
}

#[tokio::test]
async fn the_eventsource_feed_resumes_from_last_event_id_and_keeps_filters_and_limit() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    put(&docs, "a", &["x"]).await;
    let after_b = put(&docs, "b", &["y"]).await;
    put(&docs, "c", &["y"]).await;
    put(&docs, "d", &["x"]).await;
    let client = reqwest::Client::new();
    let get = |path: &str| client.get(docs.url(path));

    let resumed = ids(get("/db/_changes?feed=eventsource&since=0&timeout=100")
        .header("Last-Event-ID", after_b.to_string()))
    .await;
    assert_eq!(resumed, [json!("c"), json!("d")]);
    let by_channel = ids(get(
        "/db/_changes?feed=eventsource&timeout=100&filter=sync_gateway/bychannel&channels=y",
    ))
    .await;
    assert_eq!(by_channel, [json!("b"), json!("c")]);
    let by_id = ids(get(
        "/db/_changes?feed=eventsource&timeout=100&filter=_doc_ids&doc_ids=[\"d\",\"a\"]",
    ))
    .await;
    assert_eq!(by_id, [json!("a"), json!("d")]);
    let limited = ids(get("/db/_changes?feed=eventsource&limit=1&timeout=60000")).await;
    assert_eq!(limited, [json!("a")], "the feed ends after `limit` rows");
    docs.stop().await;
}
