//! Issue 9, fourth pass: the sequencer design weighed before it is built. What could parallel
//! inserts of 10-event commands (positions from a sequence, no append lock) reach against the
//! 10-row floor, and what would one sequencer's stamping add as serial work?

use crate::scratch::{self, Command, EVENTS};
use crate::stamping::{FOLLOWING_ROUND, ROUND, Sequencer};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// Connections inserting 10-event commands, one transaction each, for one phase.
struct Writers {
    stop: Arc<AtomicBool>,
    count: Arc<AtomicU64>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    started: Instant,
}

impl Writers {
    /// `writers` connections inserting into `table`, each on its own stream; `flushed`: each
    /// commit waits for its WAL flush (as the floor's), or not (the insert's work alone).
    async fn start(url: &str, table: &str, writers: usize, flushed: bool, tag: &str) -> Writers {
        let stop = Arc::new(AtomicBool::new(false));
        let count = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for w in 0..writers {
            let client = crate::connect(url).await;
            if !flushed {
                client
                    .batch_execute("SET synchronous_commit = off")
                    .await
                    .expect("asynchronous commits");
            }
            let insert = client
                .prepare(&scratch::insert_sql(table))
                .await
                .expect("prepare insert");
            let (stop, count, key) = (stop.clone(), count.clone(), format!("{tag}-{w}"));
            tasks.push(tokio::spawn(async move {
                let mut version = 0;
                while !stop.load(Ordering::Relaxed) {
                    let command = Command::next(&key, &mut version, crate::payload);
                    client
                        .execute(&insert, &command.params())
                        .await
                        .expect("insert");
                    count.fetch_add(EVENTS as u64, Ordering::Relaxed);
                }
            }));
        }
        Writers {
            stop,
            count,
            tasks,
            started: Instant::now(),
        }
    }

    /// Stops them: events per second.
    async fn finish(self) -> f64 {
        self.stop.store(true, Ordering::Relaxed);
        let rate = self.count.load(Ordering::Relaxed) as f64 / self.started.elapsed().as_secs_f64();
        for t in self.tasks {
            let _ = t.await;
        }
        rate
    }
}

/// One phase of inserts alone: events per second.
async fn inserts(url: &str, table: &str, writers: usize, flushed: bool, tag: &str) -> f64 {
    let w = Writers::start(url, table, writers, flushed, tag).await;
    tokio::time::sleep(crate::phase()).await;
    w.finish().await
}

/// Prints the ceiling of parallel inserts and the sequencer's stamping beside the 10-row floor
/// at 64 writers, on scratch tables holding as many rows as the log when `grown`.
pub async fn sequencer(url: &str, label: &str, grown: bool, floor_10_row_64: f64) {
    let admin = crate::connect(url).await;
    let copied = Instant::now();
    scratch::create(&admin, grown).await;
    println!(
        "-- the sequencer weighed: {EVENTS}-event commands into a scratch copy of log.events \
         (same columns, json payload, primary key and two unique indexes{}), positions from a \
         sequence, no lock, one transaction a command --",
        if grown {
            format!(
                ", holding the log's rows: copied in {:.1} s",
                copied.elapsed().as_secs_f64()
            )
        } else {
            String::new()
        }
    );
    let table = "weigh.events";
    let serial = inserts(url, table, 1, true, &format!("{label}-s")).await;
    let serial_alone = inserts(url, table, 1, false, &format!("{label}-a")).await;
    println!(
        "ceiling:  1 connection, serially     {serial:>9.0} events/s (commit flushed) | \
         {serial_alone:.0} events/s (commit not waited: the insert's own work)"
    );
    let mut best = 0.0f64;
    for writers in [2, 8, 64] {
        let rate = inserts(url, table, writers, true, &format!("{label}-{writers}")).await;
        println!(
            "ceiling: {writers:>2} connections at once  {rate:>9.0} events/s (commit flushed)"
        );
        best = best.max(rate);
    }
    let parallel_alone = inserts(url, table, 64, false, &format!("{label}-64a")).await;
    println!("ceiling: 64 connections at once  {parallel_alone:>9.0} events/s (commit not waited)");
    println!(
        "ceiling: parallel / serial = {:.2} (best, commits flushed), {:.2} (64, commits not \
         waited)",
        best / serial,
        parallel_alone / serial_alone
    );
    // The sequencer starts before the xid8 phase, so that phase's rows are its settled backlog.
    let mut sequencer = Sequencer::start(crate::connect(url).await).await;
    let with_tx = inserts(url, "weigh.events_x", 64, true, &format!("{label}-x")).await;
    println!(
        "ceiling: 64 connections, with the sequencer's xid8 column and (tx, position) index \
         {with_tx:>9.0} events/s"
    );
    println!(
        "floor: plain 10-row INSERT per transaction, 64 writers {floor_10_row_64:>9.0} rows/s"
    );
    println!(
        "=> even with inserts spread over every backend, indexed rows reach {:.2} of the floor \
         ({:.2} with the sequencer's column and index; {:.2} with commits not waited, which the \
         floor waits for)",
        best / floor_10_row_64,
        with_tx / floor_10_row_64,
        parallel_alone / floor_10_row_64
    );

    let (stamped, seconds) = sequencer.backlog(crate::phase()).await;
    let stamping = stamped as f64 / seconds;
    println!(
        "stamping: one sequencer, (position, event) rows into a narrow positions table (one \
         index), {ROUND} a round, alone: {stamping:>9.0} events/s ({stamped} events)"
    );

    sequencer.skip_to_end().await;
    let writers = Writers::start(url, "weigh.events_x", 64, true, &format!("{label}-t")).await;
    let (stop, count) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let follower = tokio::spawn(sequencer.follow(stop.clone(), count.clone()));
    tokio::time::sleep(crate::phase()).await;
    let together = count.load(Ordering::Relaxed) as f64 / writers.started.elapsed().as_secs_f64();
    let inserted = writers.finish().await;
    stop.store(true, Ordering::Relaxed);
    let lag = match follower.await {
        Ok(s) => s.lag().await.to_string(),
        Err(e) => format!("unknown ({e})"),
    };
    println!(
        "stamping: with 64 connections inserting {inserted:.0} events/s, the sequencer stamped \
         {together:.0} events/s, up to {FOLLOWING_ROUND} a round (unstamped when the inserts stopped: {lag})"
    );

    let at_most = best.min(stamping);
    let sharing = 1.0 / (1.0 / best + 1.0 / stamping);
    println!(
        "ratio: sequencer 10-event x64 / 10-row floor x64 = {:.2} at most (the best parallel \
         insert or the stamping, whichever is slower), {:.2} if the stamping's time adds to the \
         inserts' (no overlap), {:.2} measured together (target >= 0.70)",
        at_most / floor_10_row_64,
        sharing / floor_10_row_64,
        together / floor_10_row_64
    );
    scratch::drop(&admin).await;
}
