//! One short case of the chaos matrix (`just chaos` runs them all): `palimpsest run` killed with
//! -9 under HTTP load on every context (pads, atlas, docs, records, resources, each write under
//! an `Idempotency-Key`) and restarted; nothing acknowledged is lost or doubled, nothing is
//! refused, every context writes again, the log is gapless and verifies, JetStream equals the
//! log and every read model its rebuild.

use palimpsest_e2e::chaos::{self, Fault, Options};
use palimpsest_testkit::PgCluster;
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_of_the_whole_process_under_load_loses_nothing() {
    let mut pg = PgCluster::start().await;
    let options = Options {
        warmup: Duration::from_millis(1500),
        down: Duration::from_millis(300),
        after: Duration::from_millis(1500),
        writers: 2,
    };
    let outcome = chaos::run_case(&mut pg, Fault::KillRun, options).await;
    println!("{}", chaos::table(std::slice::from_ref(&outcome)));
    assert!(
        outcome.ok(),
        "{}",
        chaos::table(std::slice::from_ref(&outcome))
    );
    assert!(
        outcome.verdict.acked_by_context.iter().all(|n| *n > 0),
        "every context acknowledged writes: {:?}",
        outcome.verdict.acked_by_context
    );
}
