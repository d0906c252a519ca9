//! `just chaos`: the fault matrix against the real binary; prints a table and exits non-zero
//! on any loss or failed check. Arguments name the cases to run (all when none): kill-run,
//! kill-serve, kill-relay, kill-project, nats-restart, postgres-stop, leader-loss.

use palimpsest_e2e::chaos::{self, Fault, Options};
use palimpsest_testkit::PgCluster;

#[tokio::main]
async fn main() {
    let wanted: Vec<String> = std::env::args().skip(1).collect();
    let faults: Vec<Fault> = Fault::ALL
        .into_iter()
        .filter(|f| wanted.is_empty() || wanted.iter().any(|w| w == f.name()))
        .collect();
    if faults.is_empty() {
        eprintln!("no such case; known: {:?}", Fault::ALL.map(Fault::name));
        std::process::exit(2);
    }
    let binary = chaos::processes::binary();
    println!("chaos against {}", binary.display());
    let mut pg = PgCluster::start().await;
    let mut outcomes = Vec::new();
    for fault in faults {
        println!("case {} ...", fault.name());
        let outcome = chaos::run_case(&mut pg, fault, Options::default()).await;
        println!("  {}", if outcome.ok() { "ok" } else { "FAILED" });
        outcomes.push(outcome);
    }
    println!("\n{}", chaos::table(&outcomes));
    // `exit` runs no destructors: stop the private cluster and remove its folder first.
    drop(pg);
    if outcomes.iter().any(|o| !o.ok()) {
        std::process::exit(1);
    }
}
