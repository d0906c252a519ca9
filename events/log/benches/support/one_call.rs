//! Issue #30: the append as one server-side call (`log.append_batch`, migration 0007, decision
//! 0025) against the nine statements it replaced, alternated in one run on one database, each
//! beside floors measured in the same run: the 1-row `INSERT` committed alone (one writer and
//! 64), the 10-row one at 64 writers, and the indexed-insert ceiling (the appender's 10-event
//! insert into a copy of `log.events` with its indexes, no lock, 64 connections, commits
//! flushed; `support/weigh.rs`). `BENCH_ROUNDS` (default 3) sets how many times each pair runs.

use crate::Server;
use palimpsest_log::{AppendOptions, EventStore};

/// The two ways of writing a batch, as the appender's option names them.
const WAYS: [(&str, bool); 2] = [("statements", false), ("call", true)];
/// The phases each way runs: (writers, events a command).
const PHASES: [(usize, usize); 3] = [(1, 1), (64, 1), (64, 10)];

/// Runs the comparison in a fresh database and prints each round and the medians.
pub async fn compare(server: &Server) {
    let (url, shared) = server.database("one_call").await;
    let stats = crate::connect(&url).await;
    let mut stores = Vec::new();
    for (name, one_call) in WAYS {
        let pool = palimpsest_log::store::pool(&url, 16).expect("pool");
        let options = AppendOptions {
            one_call,
            ..AppendOptions::default()
        };
        let store = EventStore::with_options(&url, pool, options)
            .await
            .expect("store");
        stores.push((name, store));
    }
    let rounds = std::env::var("BENCH_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3usize);
    println!(
        "\n== the append as one call vs nine statements ({rounds} rounds, {:.0}s a phase) ==",
        crate::phase().as_secs_f64()
    );
    let floor_1_64 = crate::insert_floor(&url, 64, 1).await;
    let floor_10_64 = crate::insert_floor(&url, 64, 10).await;
    let admin = crate::connect(&url).await;
    crate::scratch::create(&admin, false).await;
    let ceiling = crate::weigh::inserts(&url, "weigh.events", 64, true, "one-call").await;
    crate::scratch::drop(&admin).await;
    println!(
        "floor: 1-row x64 {floor_1_64:.0} rows/s | 10-row x64 {floor_10_64:.0} rows/s | \
         indexed-insert ceiling, 10-event x64 flushed {ceiling:.0} events/s"
    );
    // ratios[phase][way]: one ratio a round.
    let mut ratios = vec![vec![Vec::new(); WAYS.len()]; PHASES.len()];
    for round in 0..rounds {
        // The one-writer floor is measured again each round, beside the two ways.
        let floor_1_1 = crate::insert_floor(&url, 1, 1).await;
        println!("-- round {round}: floor 1-row x1 {floor_1_1:.0} rows/s --");
        for (p, (writers, events)) in PHASES.into_iter().enumerate() {
            let floor = match (writers, events) {
                (1, _) => floor_1_1,
                (_, 1) => floor_1_64,
                _ => ceiling,
            };
            for (w, (name, store)) in stores.iter().enumerate() {
                println!("[{name}]");
                let tag = format!("{name}-{writers}-{events}-{round}");
                let rate = crate::append_phase(store, server, &stats, writers, events, &tag).await;
                ratios[p][w].push(rate / floor);
            }
        }
    }
    println!("-- ratios, each round (median) --");
    for (p, (writers, events)) in PHASES.into_iter().enumerate() {
        let against = match (writers, events) {
            (1, _) => "1-row floor x1",
            (_, 1) => "1-row floor x64",
            _ => "indexed-insert ceiling x64",
        };
        let mut line = format!("{writers:>2} writers x {events:>2}-event / {against}:");
        for (w, (name, _)) in WAYS.into_iter().enumerate() {
            let each: Vec<String> = ratios[p][w].iter().map(|r| format!("{r:.2}")).collect();
            line.push_str(&format!(
                " {name} {} ({:.2}) |",
                each.join(", "),
                median(&ratios[p][w])
            ));
        }
        println!("{line}");
    }
    drop(stores);
    if let Some(db) = shared {
        db.drop().await;
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    crate::percentile(&sorted, 0.5)
}
