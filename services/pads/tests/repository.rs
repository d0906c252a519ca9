//! A process that has never seen a pad starts its state from the store record (at the stream
//! version the projector recorded) and catches up from the log: the state is the one folding
//! the whole stream gives.

mod support;

use palimpsest_events::StreamName;
use palimpsest_pads::domain::Pad;
use palimpsest_pads::service::folding::Folded;
use palimpsest_pads::service::repository::Repository;
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

    let fresh = Repository::new(s.state.store.clone(), s.state.read.clone());
    let loaded = fresh.pad("cold").await.expect("load");
    let stream = StreamName::new("pads", "pad", "cold").expect("stream");
    assert_eq!(
        loaded.version,
        s.state
            .store
            .stream_version(&stream)
            .await
            .expect("version")
    );

    let events = s
        .state
        .store
        .read_stream(&stream, 0, 10_000)
        .await
        .expect("events");
    let mut folded = Pad::initial("cold");
    for e in &events {
        folded.fold(e).expect("fold");
    }
    assert_eq!(loaded.state, folded);
    assert_eq!(loaded.state.head, 150);
    assert_eq!(loaded.state.chat_head, 0);
    assert!(loaded.state.read_only_id.is_some());
    s.stop().await;
}
