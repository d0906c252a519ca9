//! A process that has never seen a pad starts its state from the store record (at the stream
//! version the projector recorded) and catches up from the log: the state is the one folding
//! the whole stream gives.

mod support;

use palimpsest_events::StreamName;
use palimpsest_pads::pad::Pad;
use palimpsest_pads::pad::seed::pad_from_store;
use palimpsest_web::command::StreamState;
use support::Server;

#[tokio::test]
async fn a_fresh_process_loads_a_pad_from_the_store_and_the_log() {
    let s = Server::start().await;
    s.ok("createPad", &[("padID", "cold"), ("text", "start")])
        .await;
    for i in 0..150 {
        s.ok(
            "appendText",
            &[("padID", "cold"), ("text", &format!(" {i}"))],
        )
        .await;
    }
    s.ok("getReadOnlyID", &[("padID", "cold")]).await;
    s.ok("appendChatMessage", &[("padID", "cold"), ("text", "c")])
        .await;

    let stream = StreamName::new("pads", "pad", "cold").expect("stream");
    let (seed_version, mut seeded) = pad_from_store(&s.state.read, "cold")
        .await
        .expect("a seed from the store");
    assert!(seed_version > 1, "the seed stands at a recorded version");

    let events = s
        .state
        .store
        .read_stream(&stream, 0, 10_000)
        .await
        .expect("events");
    // The seed plus the events after its version is what folding the whole stream gives.
    for e in events.iter().filter(|e| e.version > seed_version) {
        seeded.fold(e).expect("fold");
    }
    let mut folded = Pad::initial(&stream);
    for e in &events {
        folded.fold(e).expect("fold");
    }
    assert_eq!(seeded, folded);
    assert_eq!(seeded.head, 150);
    assert_eq!(seeded.chat_head, 0);
    assert!(seeded.read_only_id.is_some());
    s.stop().await;
}
