//! What a committed batch tells: this process, and each command.
//!
//! The process learns the new events (for its readers, [`crate::recent`]) and the head. Each
//! command learns its own outcome: its events with their positions, its refusal, or, for a
//! repeat of an earlier command, that command's events read back from the log.

use super::Appender;
use crate::plan::Plan;
use crate::rows::{COLUMNS, to_events};
use crate::{AppendError, AppendRequest, Appended, LogError};
use deadpool_postgres::Client;

/// Each command's outcome, and the log's head after the batch.
pub(super) type Outcomes = (Vec<Result<Appended, AppendError>>, i64);

impl Appender {
    /// Makes a committed batch known in this process: its new events to the readers that keep
    /// up with it, then the head, which wakes them.
    pub(super) fn committed(
        &self,
        requests: &[AppendRequest],
        outcomes: &[Result<Appended, AppendError>],
        last: i64,
    ) {
        let new = requests
            .iter()
            .zip(outcomes)
            .filter_map(|(req, o)| match o {
                Ok(appended) if !appended.replayed => {
                    Some((appended.events.clone(), req.measured_bytes))
                }
                _ => None,
            });
        self.recent.record(new);
        self.head.advance(last);
    }
}

/// Each command's outcome when none is a repeat.
pub(super) fn written(plans: Vec<Plan>, position: i64) -> Outcomes {
    let outcomes = plans
        .into_iter()
        .map(|p| match p {
            Plan::Write(events) => Ok(Appended {
                events: events.into(),
                last_position: position,
                replayed: false,
            }),
            Plan::Refused(e) => Err(e),
            Plan::Replay(..) => Err(AppendError::Log(LogError::WriterStopped)),
        })
        .collect();
    (outcomes, position)
}

/// Each command's outcome; a repeat's events are read back (immutable, so after the commit).
pub(super) async fn replay(
    client: &Client,
    (plans, position): (Vec<Plan>, i64),
) -> Result<Outcomes, AppendError> {
    let mut outcomes = Vec::with_capacity(plans.len());
    for p in plans {
        outcomes.push(match p {
            Plan::Write(events) => Ok(Appended {
                events: events.into(),
                last_position: position,
                replayed: false,
            }),
            Plan::Replay(first, last) => {
                let stmt = client.prepare_cached(&replay_sql()).await?;
                let rows = client.query(&stmt, &[&first, &last]).await?;
                Ok(Appended {
                    events: to_events(&rows)?.into(),
                    last_position: position.max(last),
                    replayed: true,
                })
            }
            Plan::Refused(e) => Err(e),
        });
    }
    Ok((outcomes, position))
}

/// Reads back a replayed command's events (they are immutable, so after the commit is fine).
fn replay_sql() -> String {
    format!("SELECT {COLUMNS} FROM log.events WHERE position BETWEEN $1 AND $2 ORDER BY position")
}
