//! The auditor: walks every stream's hash chain and the log's positions.

use crate::LogError;
use crate::rows::{COLUMNS, to_event};
use deadpool_postgres::Pool;
use futures::{StreamExt, pin_mut};
use palimpsest_events::canonical::chain_hash;
use palimpsest_events::{RecordedEvent, StreamName};
use serde::Serialize;

/// The first place where the log is not what the log wrote.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BrokenLink {
    /// The stream, or `None` for a fault of the global order.
    pub stream: Option<StreamName>,
    /// The stream version where the chain breaks.
    pub version: i64,
    /// The global position of the offending event.
    pub position: i64,
    /// What is wrong, in words.
    pub reason: String,
}

/// What a verification looked at and what it found.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AuditReport {
    /// Streams walked.
    pub streams: u64,
    /// Events whose hash was recomputed.
    pub events: u64,
    /// The first broken link, if any.
    pub broken: Option<BrokenLink>,
}

struct Last {
    stream: StreamName,
    version: i64,
    position: i64,
    hash: [u8; 32],
}

/// Verifies the chain of one stream, or of every stream and the global positions.
///
/// Detects an edited event (its hash no longer matches its content), a removed one (a version
/// or position is missing, or the next event's previous hash does not match), and reordered
/// ones (a later version at an earlier position).
pub async fn verify(pool: &Pool, only: Option<&StreamName>) -> Result<AuditReport, LogError> {
    let client = pool.get().await?;
    let mut report = AuditReport::default();
    let rows = match only {
        Some(s) => {
            client
                .query_raw(
                    &format!(
                        "SELECT {COLUMNS} FROM log.events WHERE context = $1 AND category = $2 \
                         AND stream_key = $3 ORDER BY version"
                    ),
                    &[&s.context, &s.category, &s.key],
                )
                .await?
        }
        None => {
            client
                .query_raw(
                    &format!(
                        "SELECT {COLUMNS} FROM log.events \
                         ORDER BY context, category, stream_key, version"
                    ),
                    std::iter::empty::<&str>(),
                )
                .await?
        }
    };
    pin_mut!(rows);
    let mut last: Option<Last> = None;
    while let Some(row) = rows.next().await {
        let event = to_event(&row?)?;
        report.events += 1;
        let same_stream = last.as_ref().is_some_and(|l| l.stream == event.stream);
        if !same_stream {
            report.streams += 1;
        }
        let previous = last.as_ref().filter(|_| same_stream);
        if let Some(reason) = check_link(previous, &event) {
            report.broken = Some(BrokenLink {
                stream: Some(event.stream.clone()),
                version: event.version,
                position: event.position,
                reason,
            });
            return Ok(report);
        }
        let hash = decode_hash(&event.hash).unwrap_or([0; 32]);
        last = Some(Last {
            stream: event.stream,
            version: event.version,
            position: event.position,
            hash,
        });
    }
    if only.is_none() {
        let row = client
            .query_one(
                "SELECT count(*), coalesce(max(position), 0), \
                 (SELECT position FROM log.head WHERE id = 1) FROM log.events",
                &[],
            )
            .await?;
        let (count, max, head): (i64, i64, i64) = (row.get(0), row.get(1), row.get(2));
        if count != max || max != head {
            report.broken = Some(BrokenLink {
                stream: None,
                version: 0,
                position: max,
                reason: format!(
                    "global positions are not gapless: {count} events, highest position {max}, head {head}"
                ),
            });
        }
    }
    Ok(report)
}

fn decode_hash(h: &str) -> Option<[u8; 32]> {
    hex::decode(h).ok()?.try_into().ok()
}

fn check_link(previous: Option<&Last>, event: &RecordedEvent) -> Option<String> {
    let expected_version = previous.map(|l| l.version + 1).unwrap_or(1);
    if event.version != expected_version {
        return Some(format!(
            "version {} follows version {}: an event is missing",
            event.version,
            expected_version - 1
        ));
    }
    if let Some(l) = previous
        && event.position <= l.position
    {
        return Some(format!(
            "version {} stands at position {}, before version {} at {}: events are reordered",
            event.version, event.position, l.version, l.position
        ));
    }
    let expected_prev = previous.map(|l| hex::encode(l.hash));
    if event.prev_hash != expected_prev {
        return Some("previous hash does not match the previous event".into());
    }
    let prev_bytes = previous.map(|l| l.hash);
    let recomputed = hex::encode(chain_hash(prev_bytes.as_ref(), &event.canonical_content()));
    if recomputed != event.hash {
        return Some("hash does not match the event's content: it was edited".into());
    }
    None
}
