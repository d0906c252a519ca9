//! Several streams read in one query: each stream's events after its own version, at most the
//! limit of each, streams in the order asked, the same events one read per stream gives.

use palimpsest_events::{ExpectedVersion, NewEvent, StreamName};
use palimpsest_log::{AppendRequest, EventStore};
use palimpsest_testkit::TestDb;
use serde_json::json;

fn stream(key: &str) -> StreamName {
    StreamName::new("test", "thing", key).expect("stream name")
}

#[tokio::test]
async fn several_streams_read_in_one_query_are_each_streams_own_read() {
    let db = TestDb::create().await;
    let store = EventStore::connect(db.url()).await.expect("connect");
    let mut request = AppendRequest::new();
    for (key, count) in [("a", 3), ("b", 1), ("c", 5)] {
        let events = (0..count)
            .map(|n| NewEvent::new("Happened", 1, json!({"key": key, "n": n})))
            .collect();
        request = request.stream(stream(key), ExpectedVersion::NoStream, events);
    }
    store.append(request).await.expect("append");

    let asked = [
        (stream("c"), 1),
        (stream("missing"), 0),
        (stream("a"), 0),
        (stream("b"), 1),
    ];
    let read = store.read_streams(&asked, 3).await.expect("read");
    let mut expected = Vec::new();
    for (name, after) in &asked {
        expected.extend(
            store
                .read_stream(name, *after, 3)
                .await
                .expect("one stream"),
        );
    }
    let ids = |events: &[palimpsest_events::RecordedEvent]| {
        events
            .iter()
            .map(|e| (e.stream.key.clone(), e.version, e.event_id))
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&read), ids(&expected));
    assert_eq!(
        read.iter()
            .map(|e| (e.stream.key.as_str(), e.version))
            .collect::<Vec<_>>(),
        [("c", 2), ("c", 3), ("c", 4), ("a", 1), ("a", 2), ("a", 3)]
    );
    assert!(store.read_streams(&[], 10).await.expect("none").is_empty());
    db.drop().await;
}
