//! `just topology`: the real topology on loopback (the log's Postgres and its streaming
//! replica, the read models' Postgres and its replica, three NATS nodes at R3, two relays, three
//! `project` processes sharing partitions, two `serve` processes behind HAProxy) under HTTP
//! load on every context, killing with -9 in turn a serve, a projector holding partitions, the
//! active relay and a NATS node. Prints a table; exits non-zero on any loss, duplicate,
//! read-your-writes violation, slow takeover or rebuild that differs. Arguments name the cases
//! to run (all when none): kill-serve, kill-project, kill-relay, kill-nats-node.

use palimpsest_e2e::topology::{self, Kill, Options};

#[tokio::main]
async fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let kills: Vec<Kill> = Kill::ALL
        .into_iter()
        .filter(|k| wanted.is_empty() || wanted.iter().any(|w| w == k.name()))
        .collect();
    if kills.is_empty() {
        eprintln!("no such case; known: {:?}", Kill::ALL.map(Kill::name));
        std::process::exit(2);
    }
    let binary = palimpsest_e2e::chaos::processes::binary();
    println!("topology against {}", binary.display());
    let options = Options {
        kills,
        ..Options::default()
    };
    let outcomes = topology::run(&options).await;
    println!("\n{}", topology::table(&outcomes));
    if outcomes.iter().any(|o| !o.ok()) {
        std::process::exit(1);
    }
}
