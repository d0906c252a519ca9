//! The short case of `just topology`: the whole topology on loopback (the log's Postgres and its
//! streaming replica, the read models' Postgres and its replica, three NATS nodes at R3, two
//! relays, three `project` processes sharing the partitions of `stream_heads`, one fed by
//! JetStream, two `serve` processes behind HAProxy) under HTTP load on every context, each write
//! read back through the other serve; a serve, a projector holding partitions, the active relay
//! and the NATS node leading the stream are killed with -9 in turn and restarted. Nothing acknowledged is lost or doubled, no read misses its
//! write, the partitions are taken over within 5 s, JetStream equals the log and every read
//! model its rebuild. Everything it started is stopped and removed, also on failure.

use palimpsest_e2e::topology::{self, Kill, Options};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kills_in_a_real_topology_lose_nothing_and_break_no_read_your_writes() {
    let options = Options {
        warmup: Duration::from_millis(1500),
        down: Duration::from_millis(500),
        after: Duration::from_millis(1500),
        writers: 2,
        partitions: 4,
        kills: Kill::ALL.to_vec(),
        keep_files_on_failure: false,
    };
    let outcomes = topology::run(&options).await;
    let table = topology::table(&outcomes);
    println!("{table}");
    assert!(outcomes.iter().all(|o| o.ok()), "{table}");
    for o in &outcomes {
        assert!(
            o.verdict.acked_by_context.iter().all(|n| *n > 0),
            "{}: every context acknowledged writes: {:?}",
            o.kill.name(),
            o.verdict.acked_by_context
        );
    }
}
