//! What the signed tree (decision 0024, issue #27) costs the append path, and how far its heads
//! trail the log, each in fresh databases on the bench's server:
//!
//! - appends by a plain store (no signer, no tree maker) against a store that signs its batches
//!   alone and one that signs with the tree maker running, alternating (plain, signed,
//!   signed + tree, three rounds), medians; after each tree phase the next waits until the tree
//!   maker has signed a head over everything, so no phase pays for another's backlog;
//! - the head lag at the best append rate (64 writers of 10-event commands), tree maker running
//!   with the default head policy: for every event, the first signed head covering its position,
//!   its `timestamp_ms` minus the event's `recorded_at` (stamped by the appender when it plans
//!   the batch, before the transaction).

use crate::{Server, append_rate, connect, percentile, phase};
use palimpsest_log::EventStore;
use palimpsest_log::tree::LogSigner;
use palimpsest_log::tree::maker::{HeadPolicy, TreeHealth, TreeMaker};
use palimpsest_testkit::TestDb;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Rounds of each (plain, signed, signed + tree) comparison.
const ROUNDS: usize = 3;

/// A fresh key, as `<data_dir>/log-signing-key` holds one.
fn new_signer() -> LogSigner {
    let hex = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    LogSigner::from_hex(&hex).expect("a 32-byte key")
}

/// A tree maker running on `store` until its token is cancelled.
struct Running {
    health: TreeHealth,
    shutdown: CancellationToken,
    task: JoinHandle<()>,
}

impl Running {
    fn start(store: &EventStore, signer: LogSigner) -> Running {
        let (health, shutdown) = (TreeHealth::default(), CancellationToken::new());
        let maker = TreeMaker {
            store: store.clone(),
            signer,
            policy: HeadPolicy::default(),
            nats: None,
            subject_prefix: palimpsest_events::subject::DEFAULT_PREFIX.into(),
            health: health.clone(),
        };
        let task = tokio::spawn(maker.run(shutdown.clone()));
        Running {
            health,
            shutdown,
            task,
        }
    }

    /// Waits until a signed head covers the log's head; how long that took.
    async fn caught_up(&self, store: &EventStore) -> Duration {
        let started = Instant::now();
        let head = store.head_position().await.expect("head") as u64;
        while self.health.state().head_size < head {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "the tree maker did not catch up: {:?}",
                self.health.state()
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        started.elapsed()
    }

    async fn stop(self) {
        self.shutdown.cancel();
        let _ = self.task.await;
    }
}

/// A signed store on a fresh database, its tree maker running.
struct TreeDb {
    url: String,
    store: EventStore,
    running: Running,
    db: Option<TestDb>,
}

impl TreeDb {
    async fn start(server: &Server, name: &str) -> TreeDb {
        let (url, db) = server.database(name).await;
        let signer = new_signer();
        let store = EventStore::connect_signed(&url, signer.clone())
            .await
            .expect("signed store");
        let running = Running::start(&store, signer);
        TreeDb {
            url,
            store,
            running,
            db,
        }
    }

    async fn stop(self) {
        self.running.stop().await;
        drop(self.store);
        if let Some(db) = self.db {
            db.drop().await;
        }
    }
}

/// CPU µs per event appended since `before` (events, this process's CPU s, the server's).
async fn cpu_per_event(server: &Server, store: &EventStore, before: (i64, f64, f64)) -> String {
    let events = (store.head_position().await.expect("head") - before.0).max(1) as f64;
    let own = crate::cluster::cpu_seconds(std::process::id(), false) - before.1;
    let pg = server.cpu() - before.2;
    format!("{:.0}+{:.0}", own * 1e6 / events, pg * 1e6 / events)
}

async fn cpu_now(server: &Server, store: &EventStore) -> (i64, f64, f64) {
    (
        store.head_position().await.expect("head"),
        crate::cluster::cpu_seconds(std::process::id(), false),
        server.cpu(),
    )
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    percentile(&xs, 0.5)
}

/// Appends per second by a plain store, a signing one, and a signing one with the tree maker
/// running, alternating; the ratios against the plain store's.
pub async fn append_cost(server: &Server) {
    println!(
        "\n== the signed tree: appends signed with the tree maker running vs plain \
         (events/s; {:.0}s a phase, {ROUNDS} rounds alternating, medians) ==",
        phase().as_secs_f64()
    );
    let (plain_url, plain_db) = server.database("tree_plain").await;
    let plain = EventStore::connect(&plain_url).await.expect("plain store");
    let (signed_url, signed_db) = server.database("tree_signed").await;
    let signed = EventStore::connect_signed(&signed_url, new_signer())
        .await
        .expect("signed store");
    let full = TreeDb::start(server, "tree_full").await;
    let (tree, running) = (&full.store, &full.running);
    for (writers, events) in [(1, 1), (64, 1), (64, 10)] {
        let (mut a, mut b, mut c, mut lag) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut cpu = Vec::new();
        for round in 0..ROUNDS {
            let tag = |kind: &str| format!("tree-{kind}-{writers}-{events}-{round}");
            let before = cpu_now(server, &plain).await;
            a.push(append_rate(&plain, writers, events, &tag("plain")).await);
            cpu.push(format!(
                "plain {}",
                cpu_per_event(server, &plain, before).await
            ));
            let before = cpu_now(server, &signed).await;
            b.push(append_rate(&signed, writers, events, &tag("signed")).await);
            cpu.push(format!(
                "signed {}",
                cpu_per_event(server, &signed, before).await
            ));
            let before = cpu_now(server, tree).await;
            c.push(append_rate(tree, writers, events, &tag("tree")).await);
            lag.push(running.caught_up(tree).await.as_secs_f64() * 1000.0);
            cpu.push(format!(
                "signed+tree {}",
                cpu_per_event(server, tree, before).await
            ));
        }
        let rounds = |xs: &[f64]| {
            xs.iter()
                .map(|x| format!("{x:.0}"))
                .collect::<Vec<_>>()
                .join("/")
        };
        let (a_med, b_med, c_med) = (median(a.clone()), median(b.clone()), median(c.clone()));
        println!(
            "tree: {writers:>2} writers x {events:>2}-event: plain {a_med:>7.0}/s ({}) | \
             signed {b_med:>7.0}/s ({}) | signed+tree {c_med:>7.0}/s ({}); tree maker's \
             catch-up after each phase {} ms",
            rounds(&a),
            rounds(&b),
            rounds(&c),
            rounds(&lag)
        );
        println!(
            "tree: append rate {writers:>2} writers x {events:>2}-event signed+tree / plain = \
             {:.2} (target >= 0.95); signed alone / plain = {:.2}",
            c_med / a_med,
            b_med / a_med
        );
        println!(
            "  CPU us per event, this process + Postgres (tree phases include the catch-up): {}",
            cpu.join(" | ")
        );
    }
    full.stop().await;
    drop((plain, signed));
    for db in [plain_db, signed_db].into_iter().flatten() {
        db.drop().await;
    }
}

/// Per-event lag (ms) from `recorded_at` to the first signed head covering the event, for the
/// events after `after`: p50, p99, max, and the events measured.
async fn lags(url: &str, after: i64) -> (f64, f64, f64, i64) {
    let row = connect(url)
        .await
        .query_one(
            "SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY lag), \
                    percentile_disc(0.99) WITHIN GROUP (ORDER BY lag), max(lag), count(*) \
             FROM (SELECT h.timestamp_ms \
                     - extract(epoch FROM e.recorded_at)::float8 * 1000 AS lag \
                   FROM log.events e CROSS JOIN LATERAL \
                     (SELECT timestamp_ms FROM log.tree_heads \
                      WHERE tree_size >= e.position ORDER BY tree_size LIMIT 1) h \
                   WHERE e.position > $1) l",
            &[&after],
        )
        .await
        .expect("lags");
    (row.get(0), row.get(1), row.get(2), row.get(3))
}

/// Heads signed after `after` events, and the longest time (ms) between two of them.
async fn heads(url: &str, after: i64) -> (i64, i64) {
    let row = connect(url)
        .await
        .query_one(
            "SELECT count(*), coalesce(max(gap), 0)::int8 FROM (SELECT timestamp_ms \
               - lag(timestamp_ms) OVER (ORDER BY tree_size) AS gap \
             FROM log.tree_heads WHERE tree_size > $1) g",
            &[&after],
        )
        .await
        .expect("heads");
    (row.get(0), row.get(1))
}

/// The head lag while 64 writers append 10-event commands as fast as they can.
pub async fn head_lag(server: &Server) {
    println!("\n== the signed tree: head lag at the best append rate ==");
    let lagged = TreeDb::start(server, "tree_lag").await;
    let (store, running, url) = (&lagged.store, &lagged.running, lagged.url.as_str());
    // A short warm-up, so the phase measures a running tree maker.
    append_rate(store, 8, 10, "tree-lag-warm").await;
    running.caught_up(store).await;
    let after = store.head_position().await.expect("head");
    let rate = append_rate(store, 64, 10, "tree-lag").await;
    let behind = (store.head_position().await.expect("head") as u64)
        .saturating_sub(running.health.state().size);
    let catch_up = running.caught_up(store).await;
    let (p50, p99, max, n) = lags(url, after).await;
    let (signed, gap) = heads(url, after).await;
    println!(
        "tree: head lag (recorded_at -> first signed head covering it) at {rate:.0} events/s \
         (64 writers x 10-event, {n} events): p50 {p50:.0} ms, p99 {p99:.0} ms, max {max:.0} ms \
         (target p99 <= 1000 ms)"
    );
    println!(
        "  {signed} heads signed, longest gap between two {gap} ms; the tree {behind} leaves \
         behind at the phase's end, a head over them {:.0} ms later",
        catch_up.as_secs_f64() * 1000.0
    );
    lagged.stop().await;
}
