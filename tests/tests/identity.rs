//! A log publishes only into its own stream (issue 8, defect 4): the relay marks the JetStream
//! stream and every message with the log's identity, refuses a stream holding another log's
//! events or running ahead of the log (readiness says so, nothing is published or skipped), and
//! `relay --reset-stream` recovers. An event the server will not take (over its `max_payload`)
//! stops the relay before it, loudly, without skipping it.

use palimpsest_events::{ExpectedVersion, NewEvent, RecordedEvent, StreamName};
use palimpsest_log::AppendRequest;
use palimpsest_log::relay::{self, Blocked, LOG_ID_HEADER, RelayConfig, STREAM_NAME};
use palimpsest_testkit::NatsServer;
use palimpsest_testkit::TestApp;
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

async fn append(app: &TestApp, key: &str, n: usize) -> Vec<RecordedEvent> {
    let events = (0..n)
        .map(|i| NewEvent::new("Happened", 1, json!({ "i": i })))
        .collect();
    app.state
        .store
        .append(AppendRequest::new().stream(
            StreamName::new("test", "thing", key).expect("stream"),
            ExpectedVersion::Any,
            events,
        ))
        .await
        .expect("append")
        .events
        .to_vec()
}

/// (sequence, message id, log id header) of every message of the stream.
async fn messages(nats_url: &str) -> Vec<(u64, String, Option<String>)> {
    let client = async_nats::connect(nats_url).await.expect("nats");
    let js = async_nats::jetstream::new(client);
    let Ok(mut stream) = js.get_stream(STREAM_NAME).await else {
        return Vec::new();
    };
    let last = stream.info().await.expect("info").state.last_sequence;
    let mut out = Vec::new();
    for seq in 1..=last {
        let m = stream.get_raw_message(seq).await.expect("message");
        let header = |name: &str| m.headers.get(name).map(|v| v.as_str().to_owned());
        out.push((
            seq,
            header("Nats-Msg-Id").unwrap_or_default(),
            header(LOG_ID_HEADER),
        ));
    }
    out
}

async fn wait_until<T>(what: &str, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn ids(events: &[RecordedEvent]) -> Vec<String> {
    events.iter().map(|e| e.event_id.to_string()).collect()
}

#[tokio::test]
async fn a_relay_refuses_a_stream_of_another_log_and_a_reset_recovers() {
    let nats = NatsServer::start().await;
    let first = TestApp::start_with_nats(&nats.url()).await;
    let first_events = append(&first, "a", 3).await;
    let first_log = first.state.store.log_id().to_string();
    let published = wait_until("the first log published", async || {
        let m = messages(&nats.url()).await;
        (m.len() == 3).then_some(m)
    })
    .await;
    assert_eq!(
        published.iter().map(|m| m.1.clone()).collect::<Vec<_>>(),
        ids(&first_events)
    );
    assert!(published.iter().all(|m| m.2.as_deref() == Some(&first_log)));
    first.stop().await;

    // A second database (a new deployment, a recreated database) on the same NATS.
    let second = TestApp::start_with_nats(&nats.url()).await;
    let second_events = append(&second, "b", 2).await;
    let http = reqwest::Client::new();
    let ready: Value = wait_until("readiness to say the relay is blocked", async || {
        let res = http.get(second.url("/readyz")).send().await.ok()?;
        let status = res.status().as_u16();
        let body: Value = res.json().await.ok()?;
        (status == 503).then_some(body)
    })
    .await;
    assert_eq!(ready["relay"]["state"], json!("blocked"), "{ready}");
    assert_eq!(ready["relay"]["reason"], json!("foreign_stream"), "{ready}");
    assert!(
        ready["relay"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("--reset-stream") && m.contains(&first_log)),
        "{ready}"
    );
    assert_eq!(
        ready["log_id"],
        json!(second.state.store.log_id().to_string())
    );
    // Nothing of the second log was published, nothing of the first was touched.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        messages(&nats.url())
            .await
            .iter()
            .map(|m| m.1.clone())
            .collect::<Vec<_>>(),
        ids(&first_events)
    );

    // The deliberate recovery: reset the stream; the running relay then publishes from 1.
    relay::reset_stream(&second.state.store, &RelayConfig::new(nats.url()))
        .await
        .expect("reset");
    let second_log = second.state.store.log_id().to_string();
    let published = wait_until("the second log published", async || {
        let m = messages(&nats.url()).await;
        (m.len() == 2).then_some(m)
    })
    .await;
    assert_eq!(
        published.iter().map(|m| m.1.clone()).collect::<Vec<_>>(),
        ids(&second_events)
    );
    assert!(
        published
            .iter()
            .all(|m| m.2.as_deref() == Some(&second_log))
    );
    wait_until("readiness to recover", async || {
        let res = http.get(second.url("/readyz")).send().await.ok()?;
        (res.status().as_u16() == 200).then_some(())
    })
    .await;
    // Consumers read the identity from the admin API too.
    let head: Value = http
        .get(second.url("/v1/head"))
        .header("authorization", format!("Bearer {}", second.admin_token()))
        .send()
        .await
        .expect("head")
        .json()
        .await
        .expect("json");
    assert_eq!(head["log_id"], json!(second_log));
    second.stop().await;
}

#[tokio::test]
async fn a_relay_refuses_a_stream_ahead_of_its_log() {
    let nats = NatsServer::start().await;
    let app = TestApp::start().await;
    append(&app, "a", 3).await;
    let run_relay = |config: RelayConfig| {
        let stop = CancellationToken::new();
        let task = tokio::spawn(relay::run(app.state.store.clone(), config, stop.clone()));
        (stop, task)
    };
    let (stop, task) = run_relay(RelayConfig::new(nats.url()));
    wait_until("the log published", async || {
        (messages(&nats.url()).await.len() == 3).then_some(())
    })
    .await;
    stop.cancel();
    task.await.expect("relay");

    // The stream gains a message this log does not have (as if the database were restored
    // from a backup older than what NATS consumers saw).
    let client = async_nats::connect(nats.url()).await.expect("nats");
    let js = async_nats::jetstream::new(client);
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(LOG_ID_HEADER, app.state.store.log_id().to_string().as_str());
    js.publish_with_headers("palimpsest.test.thing.lost", headers, "{}".into())
        .await
        .expect("publish")
        .await
        .expect("ack");

    let config = RelayConfig::new(nats.url());
    let health = config.health.clone();
    let (stop, task) = run_relay(config);
    let blocked = wait_until("the relay to refuse", async || health.blocked()).await;
    assert_eq!(
        blocked,
        Blocked::StreamAhead {
            stream: STREAM_NAME.into(),
            log_id: app.state.store.log_id(),
            stream_last: 4,
            log_head: 3,
        }
    );
    // It publishes nothing more while blocked, even as the log grows.
    append(&app, "b", 2).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(messages(&nats.url()).await.len(), 4);
    stop.cancel();
    task.await.expect("relay");
    app.stop().await;
}

#[tokio::test]
async fn a_relay_stops_before_an_event_the_server_will_not_take_and_says_so() {
    // A server whose max_payload (64 KiB) is below what the log accepts (900 KiB).
    let nats = NatsServer::start_with_max_payload(64 * 1024).await;
    let app = TestApp::start().await;
    let before = append(&app, "small", 2).await;
    let big = app
        .state
        .store
        .append(AppendRequest::new().stream(
            StreamName::new("test", "thing", "big").expect("stream"),
            ExpectedVersion::Any,
            vec![NewEvent::new(
                "Big",
                1,
                json!({ "text": "x".repeat(100 * 1024) }),
            )],
        ))
        .await
        .expect("the log accepts it")
        .events;
    append(&app, "after", 1).await;
    let config = RelayConfig::new(nats.url());
    let health = config.health.clone();
    let stop = CancellationToken::new();
    let task = tokio::spawn(relay::run(app.state.store.clone(), config, stop.clone()));
    let blocked = wait_until("the relay to stop before the big event", async || {
        health.blocked()
    })
    .await;
    match blocked {
        Blocked::TooLarge {
            position,
            event_id,
            max_payload,
            ..
        } => {
            assert_eq!(position, big[0].position);
            assert_eq!(event_id, big[0].event_id);
            assert_eq!(max_payload, 64 * 1024);
        }
        other => panic!("expected TooLarge, got {other:?}"),
    }
    // Everything before it is published, nothing after it: nothing skipped.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        messages(&nats.url())
            .await
            .iter()
            .map(|m| m.1.clone())
            .collect::<Vec<_>>(),
        ids(&before)
    );
    stop.cancel();
    task.await.expect("relay");
    app.stop().await;
}
