//! The relay against a three-node JetStream cluster with the stream at R3, as `deploy/` runs it:
//! the stream leader is killed while events are appended and published, and later, once the
//! killed node is back and caught up, the next leader too. Every event must still be in the
//! stream exactly once, in log order, with JetStream sequence = log position, read through the
//! nodes that survive.

use async_nats::jetstream::{self, stream};
use palimpsest_events::{ExpectedVersion, NewEvent, RecordedEvent, StreamName};
use palimpsest_log::relay::{self, RelayConfig, STREAM_NAME};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_testkit::NatsCluster;
use palimpsest_testkit::TestApp;
use serde_json::json;
use std::collections::HashSet;
use std::time::Duration;
use tokio::time::{Instant, sleep, timeout};
use tokio_util::sync::CancellationToken;

/// The bound on every wait of this test: elections, reconnections and catching up.
const WITHIN: Duration = Duration::from_secs(90);

async fn append(store: &EventStore, key: &str, n: usize) -> i64 {
    let stream = StreamName::new("test", "cluster", key).expect("stream");
    let events = (0..n)
        .map(|i| NewEvent::new("Happened", 1, json!({ "key": key, "i": i })))
        .collect();
    store
        .append(AppendRequest::new().stream(stream, ExpectedVersion::Any, events))
        .await
        .expect("append")
        .last_position
}

/// Appends `commands` commands of `n` events each, spread over time so that the relay is
/// publishing while a node dies; returns the last position.
fn append_meanwhile(
    store: EventStore,
    prefix: &'static str,
    commands: usize,
    n: usize,
) -> tokio::task::JoinHandle<i64> {
    tokio::spawn(async move {
        let mut head = 0;
        for i in 0..commands {
            head = append(&store, &format!("{prefix}-{}", i % 7), n).await;
            sleep(Duration::from_millis(5)).await;
        }
        head
    })
}

/// A JetStream context on the comma-separated `urls`, or why not.
async fn jetstream(urls: &str) -> Result<jetstream::Context, String> {
    let client = async_nats::ConnectOptions::new()
        .connection_timeout(Duration::from_secs(2))
        .connect(relay::server_list(urls))
        .await
        .map_err(|e| e.to_string())?;
    Ok(jetstream::new(client))
}

/// The stream's info through `urls`, or why it is not available (an election, a reconnection).
async fn stream_info(urls: &str) -> Result<stream::Info, String> {
    let js = jetstream(urls).await?;
    let mut s = js
        .get_stream(STREAM_NAME)
        .await
        .map_err(|e| e.to_string())?;
    s.info().await.cloned().map_err(|e| e.to_string())
}

/// Polls the stream's info through `urls` until `done` holds, failing after [`WITHIN`].
async fn wait_for(urls: &str, what: &str, done: impl Fn(&stream::Info) -> bool) -> stream::Info {
    let deadline = Instant::now() + WITHIN;
    let mut last = String::from("no answer yet");
    while Instant::now() < deadline {
        match stream_info(urls).await {
            Ok(info) if done(&info) => return info,
            Ok(info) => last = format!("{:?} {:?}", info.state, info.cluster),
            Err(e) => last = e,
        }
        sleep(Duration::from_millis(100)).await;
    }
    panic!("{what} did not happen within {WITHIN:?}; last seen: {last}");
}

async fn wait_published(urls: &str, head: i64) -> stream::Info {
    wait_for(urls, &format!("publishing up to position {head}"), |i| {
        i.state.last_sequence >= head as u64
    })
    .await
}

async fn leader(urls: &str) -> String {
    let info = wait_for(urls, "a stream leader", |i| {
        i.cluster.as_ref().and_then(|c| c.leader.as_ref()).is_some()
    })
    .await;
    info.cluster
        .and_then(|c| c.leader)
        .expect("leader was just seen")
}

/// The whole log, in position order.
async fn log(store: &EventStore) -> Vec<RecordedEvent> {
    let mut events: Vec<RecordedEvent> = Vec::new();
    loop {
        let after = events.last().map_or(0, |e| e.position);
        let page = store.read_all(after, 1000).await.expect("read log");
        if page.is_empty() {
            return events;
        }
        events.extend(page);
    }
}

/// Reads message `seq` through `urls`, retrying (bounded) over a leader change.
async fn message(js: &jetstream::Context, seq: u64) -> jetstream::message::StreamMessage {
    let deadline = Instant::now() + WITHIN;
    loop {
        let got = match js.get_stream(STREAM_NAME).await {
            Ok(s) => s.get_raw_message(seq).await.map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        match got {
            Ok(m) => return m,
            Err(e) if Instant::now() >= deadline => panic!("message {seq}: {e}"),
            Err(_) => sleep(Duration::from_millis(100)).await,
        }
    }
}

/// The stream holds exactly the log: one message per position, sequence = position, each the
/// log's event (same id, as `Nats-Msg-Id` too), no id twice.
async fn assert_stream_is_the_log(urls: &str, store: &EventStore) {
    let log = log(store).await;
    let head = log.len() as u64;
    assert_eq!(
        log.last().map(|e| e.position as u64),
        Some(head),
        "gapless log"
    );
    let info = stream_info(urls).await.expect("stream info");
    assert_eq!(info.state.messages, head, "one message per event");
    assert_eq!(info.state.first_sequence, 1);
    assert_eq!(info.state.last_sequence, head, "nothing beyond the log");
    let js = jetstream(urls).await.expect("nats");
    let mut ids = HashSet::new();
    for expected in &log {
        let seq = expected.position as u64;
        let m = message(&js, seq).await;
        assert_eq!(m.sequence, seq);
        let event: RecordedEvent = serde_json::from_slice(&m.payload).expect("event");
        assert_eq!(
            event.position as u64, seq,
            "JetStream sequence equals log position"
        );
        assert_eq!(
            event.event_id, expected.event_id,
            "the log's event at {seq}"
        );
        assert_eq!(
            m.headers.get("Nats-Msg-Id").map(|v| v.as_str().to_owned()),
            Some(event.event_id.to_string())
        );
        assert!(ids.insert(event.event_id), "event {} twice", event.event_id);
    }
    assert_eq!(ids.len() as u64, head);
}

#[tokio::test]
async fn losing_the_stream_leader_of_an_r3_cluster_loses_and_repeats_no_event() {
    let mut cluster = NatsCluster::start(3).await;
    let app = TestApp::start().await;
    let store = app.state.store.clone();
    let stop = CancellationToken::new();
    let mut config = RelayConfig::new(cluster.urls());
    config.replicas = 3;
    config.batch = 16;
    let relay_task = tokio::spawn(relay::run(store.clone(), config, stop.clone()));

    // The relay creates the stream on all three nodes and publishes what is there.
    let mut head = 0;
    for i in 0..30 {
        head = append(&store, &format!("before-{}", i % 5), 3).await;
    }
    let info = wait_published(&cluster.urls(), head).await;
    assert_eq!(
        info.config.num_replicas, 3,
        "the relay created the stream at R3"
    );
    let peers = info.cluster.as_ref().map_or(0, |c| c.replicas.len());
    assert_eq!(peers, 2, "a leader and two replicas: {:?}", info.cluster);

    // Kill the stream leader while appends go on and the relay publishes them.
    let first = leader(&cluster.urls()).await;
    let victim = cluster.index_of(&first).unwrap_or(0);
    let appender = append_meanwhile(store.clone(), "during", 100, 2);
    let deadline = Instant::now() + WITHIN;
    while store.head_position().await.expect("head") < head + 20 {
        assert!(Instant::now() < deadline, "appends did not start");
        sleep(Duration::from_millis(5)).await;
    }
    cluster.stop(victim);
    head = appender.await.expect("appender");
    let survivors = cluster.running_urls();
    wait_published(&survivors, head).await;
    assert_stream_is_the_log(&survivors, &store).await;
    let second = leader(&survivors).await;
    assert_ne!(second, first, "a surviving node leads the stream");

    // The killed node comes back and catches up; then the next leader dies, so the stream can
    // only go on if the node that came back is a full member again.
    cluster.restart(victim).await;
    let back = cluster.name(victim).to_owned();
    wait_for(&cluster.urls(), &format!("{back} caught up"), |i| {
        i.cluster.as_ref().is_some_and(|c| {
            c.leader.as_deref() == Some(back.as_str())
                || c.replicas
                    .iter()
                    .any(|p| p.name == back && p.current && !p.offline && p.lag.unwrap_or(0) == 0)
        })
    })
    .await;
    let current = leader(&cluster.urls()).await;
    let next = match cluster.index_of(&current) {
        Some(i) if i != victim => i,
        _ => (victim + 1) % cluster.size(),
    };
    let appender = append_meanwhile(store.clone(), "after", 50, 2);
    cluster.stop(next);
    head = appender.await.expect("appender");
    let survivors = cluster.running_urls();
    wait_published(&survivors, head).await;
    assert_stream_is_the_log(&survivors, &store).await;

    stop.cancel();
    timeout(WITHIN, relay_task)
        .await
        .expect("the relay stops when asked")
        .expect("relay task");
    app.stop().await;
}
