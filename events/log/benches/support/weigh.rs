//! Issue 9, fourth pass: the sequencer design weighed before it is built. What could parallel
//! inserts of 10-event commands (positions from a sequence, no append lock) reach against the
//! 10-row floor, and what would one sequencer's stamping add as serial work?

use crate::scratch::{self, Command, EVENTS};
use crate::stamping::{FOLLOWING_ROUND, ROUND, Sequencer};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;
use tokio::sync::watch;

/// Where the sequencer stands: the last `(tx, position)` stamped.
type Stamped = watch::Receiver<(u64, i64)>;

/// Connections inserting 10-event commands, one transaction each, for one phase.
struct Writers {
    stop: Arc<AtomicBool>,
    count: Arc<AtomicU64>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    started: Instant,
}

impl Writers {
    /// `writers` connections inserting into `table`, each on its own stream; `flushed`: each
    /// commit waits for its WAL flush (as the floor's), or not (the insert's work alone). With
    /// `stamped` (`weigh.events_x` only) each writer waits until the sequencer has stamped its
    /// command before the next, as a caller waits for its positions.
    async fn start(
        url: &str,
        table: &str,
        writers: usize,
        flushed: bool,
        tag: &str,
        stamped: Option<Stamped>,
    ) -> Writers {
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
            let sql = match stamped {
                Some(_) => format!(
                    "WITH i AS ({} RETURNING position) \
                     SELECT pg_current_xact_id()::text, max(position) FROM i",
                    scratch::insert_sql(table)
                ),
                None => scratch::insert_sql(table),
            };
            let insert = client.prepare(&sql).await.expect("prepare insert");
            let (stop, count, key) = (stop.clone(), count.clone(), format!("{tag}-{w}"));
            let mut stamped = stamped.clone();
            tasks.push(tokio::spawn(async move {
                let mut version = 0;
                while !stop.load(Ordering::Relaxed) {
                    let command = Command::next(&key, &mut version, crate::payload);
                    if let Some(stamped) = stamped.as_mut() {
                        let row = client
                            .query_one(&insert, &command.params())
                            .await
                            .expect("insert");
                        let tx: u64 = row.get::<_, String>(0).parse().expect("xid8");
                        let at = (tx, row.get::<_, i64>(1));
                        if stamped.wait_for(|s| *s >= at).await.is_err() {
                            break;
                        }
                    } else {
                        client
                            .execute(&insert, &command.params())
                            .await
                            .expect("insert");
                    }
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
pub async fn inserts(url: &str, table: &str, writers: usize, flushed: bool, tag: &str) -> f64 {
    let w = Writers::start(url, table, writers, flushed, tag, None).await;
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
    // The sequencer starts before the xid8 phases, so their rows are its settled backlog.
    let mut sequencer = Sequencer::start(crate::connect(url).await).await;
    let x_flushed = inserts(url, "weigh.events_x", 64, true, &format!("{label}-x")).await;
    let x_alone = inserts(url, "weigh.events_x", 64, false, &format!("{label}-xa")).await;
    println!(
        "ceiling: 64 connections, with the sequencer's xid8 column and (tx, position) index \
         {x_flushed:>9.0} events/s (commits flushed) | {x_alone:.0} events/s (commits not waited)"
    );
    println!(
        "floor: plain 10-row INSERT per transaction, 64 writers {floor_10_row_64:>9.0} rows/s"
    );
    println!(
        "=> even with inserts spread over every backend, indexed rows reach {:.2} of the floor \
         with commits flushed ({:.2} with the sequencer's column and index), {:.2} ({:.2}) with \
         commits not waited and made durable by a later shared flush, as the appender's are",
        best / floor_10_row_64,
        x_flushed / floor_10_row_64,
        parallel_alone / floor_10_row_64,
        x_alone / floor_10_row_64
    );

    let (stamped, seconds) = sequencer.backlog(crate::phase()).await;
    let stamping = stamped as f64 / seconds;
    println!(
        "stamping: one sequencer, (position, event) rows into a narrow positions table (one \
         index), {ROUND} a round, alone: {stamping:>9.0} events/s ({stamped} events)"
    );
    let (flushed_together, sequencer) = together(url, &format!("{label}-t"), sequencer, true).await;
    let (alone_together, _) = together(url, &format!("{label}-ta"), sequencer, false).await;

    let at_most = parallel_alone.min(stamping);
    let sharing = 1.0 / (1.0 / parallel_alone + 1.0 / stamping);
    println!(
        "ratio: sequencer 10-event x64 / 10-row floor x64 = {:.2} at most (64 inserting with \
         commits not waited, or the stamping, whichever is slower), {:.2} if the stamping's time \
         adds to the inserts' (no overlap); measured together {:.2} (commits flushed), {:.2} \
         (commits not waited, rounds flushed) (target >= 0.70)",
        at_most / floor_10_row_64,
        sharing / floor_10_row_64,
        flushed_together / floor_10_row_64,
        alone_together / floor_10_row_64
    );
    scratch::drop(&admin).await;
}

/// 64 connections insert into `weigh.events_x` while the sequencer stamps what settles, each
/// waiting for its command's positions before the next: events per second, stamped. With
/// `flushed` the inserts' commits wait for their flush and the rounds' do not; otherwise the
/// reverse, the design's cheaper way: each round's synchronous commit flushes the WAL past every
/// insert it stamped, so what is stamped is durable.
async fn together(
    url: &str,
    tag: &str,
    mut sequencer: Sequencer,
    flushed: bool,
) -> (f64, Sequencer) {
    sequencer.flush_rounds(!flushed).await;
    sequencer.skip_to_end().await;
    let (cursor, stamped) = watch::channel((0u64, 0i64));
    let writers = Writers::start(url, "weigh.events_x", 64, flushed, tag, Some(stamped)).await;
    let (stop, count) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let follower = tokio::spawn(sequencer.follow(stop.clone(), count.clone(), cursor));
    tokio::time::sleep(crate::phase()).await;
    let rate = count.load(Ordering::Relaxed) as f64 / writers.started.elapsed().as_secs_f64();
    // The writers end once their last command is stamped, so the sequencer stops after them.
    let answered = writers.finish().await;
    stop.store(true, Ordering::Relaxed);
    let sequencer = follower.await.expect("sequencer");
    let lag = sequencer.lag().await;
    let (inserts, rounds) = if flushed {
        ("flushed", "not waited")
    } else {
        ("not waited", "flushed")
    };
    println!(
        "stamping: 64 connections, each waiting for its command's positions (commits {inserts}), \
         the sequencer stamping up to {FOLLOWING_ROUND} a round (commits {rounds}): \
         {rate:.0} events/s stamped, {answered:.0} answered (unstamped at the end: {lag})"
    );
    (rate, sequencer)
}
