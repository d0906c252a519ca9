//! Two deployments share one nats-server (issue 29, item 5): each publishes under its own
//! subject prefix into its own stream, and a subscriber of one prefix sees only that
//! deployment's events (and its tree heads on `<prefix>-log.…`). A third deployment whose
//! stream would overlap another's subjects cannot publish: after `--relay-stuck-after`
//! readiness answers 503, naming the reason.

use futures::StreamExt;
use palimpsest_events::RecordedEvent;
use palimpsest_testkit::{NatsServer, TestApp};
use serde_json::Value;
use std::time::{Duration, Instant};

/// Creates docs database `name`.
async fn create_database(app: &TestApp, name: &str) {
    let res = reqwest::Client::new()
        .put(app.url(&format!("/docs/{name}")))
        .bearer_auth(app.admin_token())
        .send()
        .await
        .expect("create");
    assert!(res.status().is_success(), "{}", res.status());
}

async fn deployment(nats: &NatsServer, prefix: &str, stream: &str) -> TestApp {
    TestApp::builder()
        .nats(&nats.url())
        .subject_prefix(prefix)
        .stream_name(stream)
        .start()
        .await
}

/// The subjects and events received on `sub` until `want` events came (or 15 s passed).
async fn receive(sub: &mut async_nats::Subscriber, want: usize) -> Vec<(String, RecordedEvent)> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    while got.len() < want && Instant::now() < deadline {
        if let Ok(Some(m)) = tokio::time::timeout(Duration::from_millis(200), sub.next()).await {
            let event = serde_json::from_slice(&m.payload).expect("an event envelope");
            got.push((m.subject.to_string(), event));
        }
    }
    got
}

async fn readyz(app: &TestApp) -> (u16, Value) {
    let res = reqwest::get(app.url("/readyz")).await.expect("readyz");
    (res.status().as_u16(), res.json().await.expect("json"))
}

#[tokio::test]
async fn two_deployments_with_their_own_prefix_and_stream_share_one_nats_server() {
    let nats = NatsServer::start().await;
    let client = async_nats::connect(nats.url()).await.expect("nats");
    let mut sub_a = client.subscribe("dep-a.>").await.expect("sub");
    let mut sub_b = client.subscribe("dep-b.>").await.expect("sub");
    let mut heads_a = client.subscribe("dep-a-log.>").await.expect("sub");
    let mut default = client.subscribe("palimpsest.>").await.expect("sub");
    let a = deployment(&nats, "dep-a", "DEP_A").await;
    let b = deployment(&nats, "dep-b", "DEP_B").await;
    create_database(&a, "shared-a").await;
    create_database(&b, "shared-b").await;
    create_database(&a, "shared-a2").await;

    for (app, sub, prefix, mine, theirs) in [
        (&a, &mut sub_a, "dep-a.", "shared-a", "shared-b"),
        (&b, &mut sub_b, "dep-b.", "shared-b", "shared-a"),
    ] {
        let log = app.state.store.read_all(0, 1000).await.expect("log");
        let got = receive(sub, log.len()).await;
        let ids = |events: Vec<&RecordedEvent>| {
            events.into_iter().map(|e| e.event_id).collect::<Vec<_>>()
        };
        assert_eq!(
            ids(got.iter().map(|(_, e)| e).collect()),
            ids(log.iter().collect()),
            "{prefix} carries its own log, in order"
        );
        for (subject, event) in &got {
            assert!(subject.starts_with(prefix), "{subject}");
            assert!(!event.payload.to_string().contains(theirs), "{event:?}");
        }
        assert!(
            got.iter()
                .any(|(_, e)| e.payload.to_string().contains(mine))
        );
        // Nothing more comes: the other deployment's events are not on this prefix.
        assert!(
            tokio::time::timeout(Duration::from_millis(300), sub.next())
                .await
                .is_err()
        );
        let (status, body) = readyz(app).await;
        assert_eq!(status, 200, "{body}");
    }
    let js = async_nats::jetstream::new(client.clone());
    for (stream, filter, app) in [("DEP_A", "dep-a.>", &a), ("DEP_B", "dep-b.>", &b)] {
        let mut stream = js.get_stream(stream).await.expect("stream");
        let info = stream.info().await.expect("info");
        assert_eq!(info.config.subjects, [filter]);
        let head = app.state.store.head_position().await.expect("head");
        assert_eq!(info.state.last_sequence, head as u64);
    }
    let head = tokio::time::timeout(Duration::from_secs(10), heads_a.next())
        .await
        .expect("a tree head")
        .expect("message");
    assert_eq!(
        head.subject.as_str(),
        palimpsest_events::subject::heads_subject("dep-a", a.state.store.log_id())
    );
    assert!(
        tokio::time::timeout(Duration::from_millis(300), default.next())
            .await
            .is_err(),
        "nothing is published under the default prefix"
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn a_relay_failing_for_the_same_reason_longer_than_stuck_after_fails_readiness() {
    let nats = NatsServer::start().await;
    let a = deployment(&nats, "dep-x", "DEP_X").await;
    create_database(&a, "first").await;
    // Same prefix, another stream: its subjects overlap DEP_X's, which NATS refuses.
    let started = Instant::now();
    let c = TestApp::builder()
        .nats(&nats.url())
        .subject_prefix("dep-x")
        .stream_name("DEP_Y")
        .relay_stuck_after(Duration::from_secs(1))
        .start()
        .await;
    let body = loop {
        let (status, body) = readyz(&c).await;
        if status == 503 {
            break body;
        }
        assert_eq!(body["status"], "ready", "{body}");
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "readiness never failed: {body}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(
        started.elapsed() >= Duration::from_secs(1),
        "failed before --relay-stuck-after: {body}"
    );
    assert_eq!(body["status"], "stopped", "{body}");
    assert_eq!(body["relay"]["state"], "interrupted", "{body}");
    let reason = body["relay_stuck"]["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("overlap"), "{body}");
    // The deployment that owns the subjects is unaffected.
    let (status, body) = readyz(&a).await;
    assert_eq!(status, 200, "{body}");
    c.stop().await;
    a.stop().await;
}
