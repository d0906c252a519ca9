//! The platform end to end: the real app over HTTP, the relay to a private NATS server,
//! NATS outages and relay restarts.

use futures::StreamExt;
use palimpsest_events::{ExpectedVersion, NewEvent, RecordedEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_log::relay::{self, RelayConfig, STREAM_NAME};
use palimpsest_testkit::NatsServer;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn stream(key: &str) -> StreamName {
    StreamName::new("test", "thing", key).expect("stream")
}

async fn append(app: &TestApp, key: &str, n: usize) -> i64 {
    let events = (0..n)
        .map(|i| NewEvent::new("Happened", 1, json!({ "i": i })))
        .collect();
    app.state
        .store
        .append(AppendRequest::new().stream(stream(key), ExpectedVersion::Any, events))
        .await
        .expect("append")
        .last_position
}

/// Every message of the JetStream stream, in sequence order, decoded.
async fn published(nats_url: &str) -> Vec<(u64, RecordedEvent)> {
    let client = async_nats::connect(nats_url).await.expect("nats");
    let js = async_nats::jetstream::new(client);
    let mut s = js.get_stream(STREAM_NAME).await.expect("stream");
    let last = s.info().await.expect("info").state.last_sequence;
    let mut out = Vec::new();
    for seq in 1..=last {
        let m = s.get_raw_message(seq).await.expect("message");
        out.push((seq, serde_json::from_slice(&m.payload).expect("event")));
    }
    out
}

async fn wait_published(nats_url: &str, head: i64) -> Vec<(u64, RecordedEvent)> {
    for _ in 0..200 {
        let client = async_nats::connect(nats_url).await.expect("nats");
        let js = async_nats::jetstream::new(client);
        if let Ok(mut s) = js.get_stream(STREAM_NAME).await
            && s.info()
                .await
                .map(|i| i.state.last_sequence as i64)
                .unwrap_or(0)
                >= head
        {
            return published(nats_url).await;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("relay did not publish up to {head}");
}

fn assert_once_in_order(messages: &[(u64, RecordedEvent)], head: i64) {
    assert_eq!(messages.len() as i64, head, "every event once");
    for (seq, event) in messages {
        assert_eq!(
            *seq as i64, event.position,
            "JetStream sequence equals log position"
        );
    }
}

#[tokio::test]
async fn health_metrics_and_the_admin_api_need_the_token() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let last = append(&app, "a", 3).await;
    assert_eq!(
        http.get(app.url("/healthz"))
            .send()
            .await
            .expect("get")
            .status(),
        200
    );
    let ready: Value = http
        .get(app.url("/readyz"))
        .send()
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(ready["log_head"], json!(last));
    let metrics = http
        .get(app.url("/metrics"))
        .send()
        .await
        .expect("get")
        .text()
        .await
        .expect("text");
    assert!(
        metrics.contains("palimpsest_events_appended_total"),
        "{metrics}"
    );

    for auth in [None, Some("Bearer wrong"), Some("Basic abc")] {
        let mut req = http.get(app.url("/v1/events"));
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        let res = req.send().await.expect("get");
        assert_eq!(res.status(), 401);
        let body = res.text().await.expect("body");
        assert!(
            !body.contains(&app.admin_token()[..8]),
            "a 401 reveals nothing"
        );
    }
    let admin_get = |path: &str| {
        http.get(app.url(path))
            .header("authorization", format!("Bearer {}", app.admin_token()))
            .send()
    };
    let answer = admin_get("/v1/events?after=1&limit=10").await.expect("get");
    assert_eq!(
        answer.content_length(),
        None,
        "the page is written as its events are read, not built whole first"
    );
    let page: Value = answer.json().await.expect("json");
    assert_eq!(page["events"].as_array().map(Vec::len), Some(2));
    assert_eq!(page["next_after"], json!(3));
    let s: Value = admin_get("/v1/streams/test/thing/a?after=2")
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(s["events"][0]["version"], json!(3));
    let missing = admin_get("/v1/streams/test/thing/nope").await.expect("get");
    assert_eq!(missing.status(), 404);
    let bad = admin_get("/v1/events?limit=0").await.expect("get");
    assert_eq!(bad.status(), 400);
    let verify: Value = admin_get("/v1/audit/verify")
        .await
        .expect("get")
        .json()
        .await
        .expect("json");
    assert_eq!(verify["ok"], json!(true));
    app.stop().await;
}

#[tokio::test]
async fn a_long_events_page_is_the_log_s_events_as_json_written_a_few_at_a_time() {
    let app = TestApp::start().await;
    let http = reqwest::Client::new();
    let head = append(&app, "many", 50).await;
    for (after, limit) in [(0, 1000), (3, 33), (head - 2, 10), (head, 5)] {
        let answer = http
            .get(app.url(&format!("/v1/events?after={after}&limit={limit}")))
            .bearer_auth(app.admin_token())
            .send()
            .await
            .expect("get");
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.content_length(), None, "streamed");
        let text = answer.text().await.expect("body");
        let events = app
            .state
            .store
            .read_all(after, limit)
            .await
            .expect("read_all");
        let next = events.last().map(|e| e.position).unwrap_or(after);
        let whole =
            serde_json::to_string(&json!({ "events": events, "next_after": next })).expect("json");
        assert_eq!(
            text, whole,
            "after={after} limit={limit}: the bytes of the page built whole"
        );
    }
    app.stop().await;
}

#[tokio::test]
async fn the_relay_publishes_every_event_once_in_order_with_its_subject_and_id() {
    let nats = NatsServer::start().await;
    let client = async_nats::connect(nats.url()).await.expect("nats");
    let app = TestApp::start_with_nats(&nats.url()).await;
    // Wait for the relay to create the stream before subscribing to live messages.
    wait_published(&nats.url(), 0).await;
    let mut live = client
        .subscribe("palimpsest.test.thing.>")
        .await
        .expect("subscribe");
    let mut head = 0;
    for i in 0..20 {
        head = append(&app, &format!("k.{}", i % 3), 2).await;
    }
    let messages = wait_published(&nats.url(), head).await;
    assert_once_in_order(&messages, head);
    let first = live.next().await.expect("live message");
    assert_eq!(first.subject.as_str(), "palimpsest.test.thing.k_2E0");
    let headers = first.headers.expect("headers");
    let event: RecordedEvent = serde_json::from_slice(&first.payload).expect("event");
    assert_eq!(
        headers.get("Nats-Msg-Id").map(|v| v.as_str().to_owned()),
        Some(event.event_id.to_string())
    );
    app.stop().await;
}

#[tokio::test]
async fn appends_go_on_while_nats_is_down_and_everything_is_published_once_when_it_returns() {
    let mut nats = NatsServer::start().await;
    let app = TestApp::start_with_nats(&nats.url()).await;
    let before = append(&app, "a", 5).await;
    wait_published(&nats.url(), before).await;
    nats.stop();
    let mut head = before;
    for i in 0..10 {
        head = append(&app, &format!("down-{i}"), 3).await;
    }
    assert_eq!(head, before + 30, "appends kept succeeding");
    nats.restart().await;
    let messages = wait_published(&nats.url(), head).await;
    assert_once_in_order(&messages, head);
    app.stop().await;
}

#[tokio::test]
async fn a_killed_relay_restarts_where_the_server_stopped_and_a_second_relay_adds_nothing() {
    let nats = NatsServer::start().await;
    let app = TestApp::start().await;
    for i in 0..30 {
        append(&app, &format!("k{i}"), 10).await;
    }
    let head = app.state.store.head_position().await.expect("head");
    // Two relays at once, each killed and restarted a few times while publishing.
    for _ in 0..3 {
        let stops: Vec<CancellationToken> = (0..2).map(|_| CancellationToken::new()).collect();
        let tasks: Vec<_> = stops
            .iter()
            .map(|stop| {
                let mut config = RelayConfig::new(nats.url());
                config.batch = 7;
                tokio::spawn(relay::run(app.state.store.clone(), config, stop.clone()))
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(30)).await;
        for (stop, task) in stops.iter().zip(tasks) {
            stop.cancel();
            task.await.expect("relay task");
        }
    }
    let stop = CancellationToken::new();
    let task = tokio::spawn(relay::run(
        app.state.store.clone(),
        RelayConfig::new(nats.url()),
        stop.clone(),
    ));
    let messages = wait_published(&nats.url(), head).await;
    assert_once_in_order(&messages, head);
    stop.cancel();
    task.await.expect("relay task");
    app.stop().await;
}
