//! The serial work a sequencer would add: stamping gapless positions onto settled rows.
//!
//! Chosen form: one `(position, event)` row per event in the narrow `weigh.positions` (one
//! index, its primary key), not an `UPDATE … SET position` of the event rows. An update of an
//! indexed column is never HOT: it writes a second heap tuple and an entry in every index of
//! `log.events` (three unique ones, plus the sequencer's `(tx, position)`), more than the insert
//! itself, and it changes rows after their commit, which invariant 1 (nothing changes, enforced
//! by the `BEFORE UPDATE` trigger) forbids. The positions rows are insert-only.
//!
//! A round stamps, in `(tx, position)` order, a bounded number of rows past the cursor whose
//! inserting transaction is below the snapshot's `xmin` (settled: every row of it is visible,
//! and no later row can have a lower `tx`), numbering them after the last position stamped.
//! Per-stream order holds because a stream's writers take its lock before their first write
//! (which allocates the xid), so a later version has a higher `tx` — the caveat in
//! `shared/design.md`, "The log". One statement, one transaction a round, its commit flushed or
//! not ([`Sequencer::flush_rounds`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;
use tokio_postgres::{Client, Statement};

/// Rows stamped a round at most when stamping a backlog alone: the order of one appender batch
/// at 64 writers × 10 events (313–634 events in the runs so far).
pub const ROUND: i64 = 320;

/// Rows stamped a round at most beside running inserts: a sequencer stamps whatever settled,
/// so a round that falls behind catches up in the next instead of being held to [`ROUND`].
pub const FOLLOWING_ROUND: i64 = 10_000;

const STAMP_SQL: &str = "WITH settled AS MATERIALIZED (
        SELECT tx, position FROM weigh.events_x
        WHERE (tx, position) > ($1::text::xid8, $2::bigint)
          AND tx < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY tx, position LIMIT $3),
    stamped AS (
        INSERT INTO weigh.positions (position, event)
        SELECT $4::bigint + row_number() OVER (ORDER BY tx, position), position FROM settled)
    SELECT count(*),
        (SELECT tx::text FROM settled ORDER BY tx DESC, position DESC LIMIT 1),
        (SELECT position FROM settled ORDER BY tx DESC, position DESC LIMIT 1)
    FROM settled";

const END_SQL: &str = "SELECT tx::text, position FROM weigh.events_x \
    ORDER BY tx DESC, position DESC LIMIT 1";

/// The one sequencer: its connection and where it stands.
pub struct Sequencer {
    client: Client,
    stamp: Statement,
    after_tx: String,
    after_position: i64,
    last_stamped: i64,
}

impl Sequencer {
    /// A sequencer that takes every row already in `weigh.events_x` as stamped (the copied
    /// log) and numbers the next after the highest position there.
    pub async fn start(client: Client) -> Sequencer {
        client
            .batch_execute("SET synchronous_commit = off")
            .await
            .expect("asynchronous commits");
        let stamp = client.prepare(STAMP_SQL).await.expect("prepare stamping");
        let mut s = Sequencer {
            client,
            stamp,
            after_tx: "0".to_owned(),
            after_position: 0,
            last_stamped: 0,
        };
        s.skip_to_end().await;
        s
    }

    /// Whether each round's commit waits for its WAL flush (which makes durable every insert
    /// committed before it, so the stamped rows) or not.
    pub async fn flush_rounds(&self, flushed: bool) {
        let setting = if flushed { "on" } else { "off" };
        self.client
            .batch_execute(&format!("SET synchronous_commit = {setting}"))
            .await
            .expect("synchronous_commit");
    }

    /// Moves the cursor past every row inserted so far without stamping them (a phase's
    /// leftovers, so the next phase counts only its own rows).
    pub async fn skip_to_end(&mut self) {
        let end = self.client.query_opt(END_SQL, &[]).await.expect("end");
        if let Some(row) = end {
            self.after_tx = row.get(0);
            self.after_position = row.get(1);
            self.last_stamped = self.last_stamped.max(self.after_position);
        }
    }

    /// One round of at most `limit` rows: rows stamped.
    async fn round(&mut self, limit: i64) -> i64 {
        let row = self
            .client
            .query_one(
                &self.stamp,
                &[
                    &self.after_tx,
                    &self.after_position,
                    &limit,
                    &self.last_stamped,
                ],
            )
            .await
            .expect("stamp");
        let n: i64 = row.get(0);
        if n > 0 {
            self.after_tx = row.get(1);
            self.after_position = row.get(2);
            self.last_stamped += n;
        }
        n
    }

    /// Stamps the settled backlog alone, for at most `limit`: (events stamped, seconds).
    pub async fn backlog(&mut self, limit: Duration) -> (i64, f64) {
        let started = Instant::now();
        let mut n = 0;
        while started.elapsed() < limit {
            let stamped = self.round(ROUND).await;
            if stamped == 0 {
                break;
            }
            n += stamped;
        }
        (n, started.elapsed().as_secs_f64())
    }

    /// Stamps what settles until `stop`, adding to `count` and telling `cursor` the last
    /// `(tx, position)` stamped as it goes.
    pub async fn follow(
        mut self,
        stop: Arc<AtomicBool>,
        count: Arc<AtomicU64>,
        cursor: watch::Sender<(u64, i64)>,
    ) -> Sequencer {
        while !stop.load(Ordering::Relaxed) {
            let stamped = self.round(FOLLOWING_ROUND).await;
            count.fetch_add(stamped as u64, Ordering::Relaxed);
            if stamped > 0 {
                let tx = self.after_tx.parse().expect("xid8");
                cursor.send_replace((tx, self.after_position));
            } else {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        self
    }

    /// Rows inserted but not yet stamped.
    pub async fn lag(&self) -> i64 {
        self.client
            .query_one(
                "SELECT count(*) FROM weigh.events_x WHERE (tx, position) > ($1::text::xid8, $2)",
                &[&self.after_tx, &self.after_position],
            )
            .await
            .expect("lag")
            .get(0)
    }
}
