//! What an auditor asks of the log: events matching a filter (context, stream, type, correlation
//! id, time range, all combined with AND), a stream as it was at a time, and the list of streams
//! with their version and last time. Reads only; the `/v1` API and the CLI use them.
//!
//! Every read walks the log in position (or version) order from a cursor, so a page never skips
//! an event: a filter only drops rows from that walk. The stream filter and the stream listing
//! use the log's own indexes (`(context, category, stream_key, version)` and the primary key of
//! `log.streams`); the other filters are checked on the position-ordered scan, which costs no
//! index on the append path (the log's appends are what the project measures).

use crate::rows::{COLUMNS, to_events};
use crate::{EventStore, LogError};
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use palimpsest_events::{RecordedEvent, StreamName};
use tokio_postgres::types::ToSql;
use uuid::Uuid;

/// Which events of the log to read; `None` fields do not narrow. Fields combine with AND.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EventFilter {
    /// Only events of this context (`pads`, `docs`, ...).
    pub context: Option<String>,
    /// Only events of this stream.
    pub stream: Option<StreamName>,
    /// Only events of this type (`PadCreated`, ...).
    pub event_type: Option<String>,
    /// Only events whose metadata carries this correlation id.
    pub correlation_id: Option<Uuid>,
    /// Only events recorded at or after this time.
    pub since: Option<DateTime<Utc>>,
    /// Only events recorded at or before this time.
    pub until: Option<DateTime<Utc>>,
}

impl EventFilter {
    /// The SQL conditions of this filter, numbered from `$first`, with their values.
    fn conditions(&self, first: usize) -> (String, Vec<Box<dyn ToSql + Sync + Send>>) {
        let mut sql = String::new();
        let mut values: Vec<Box<dyn ToSql + Sync + Send>> = Vec::new();
        let mut add = |column: &str, op: &str, value: Box<dyn ToSql + Sync + Send>| {
            values.push(value);
            sql.push_str(&format!(" AND {column} {op} ${}", first + values.len() - 1));
        };
        if let Some(context) = &self.context {
            add("context", "=", Box::new(context.clone()));
        }
        if let Some(stream) = &self.stream {
            add("context", "=", Box::new(stream.context.clone()));
            add("category", "=", Box::new(stream.category.clone()));
            add("stream_key", "=", Box::new(stream.key.clone()));
        }
        if let Some(event_type) = &self.event_type {
            add("event_type", "=", Box::new(event_type.clone()));
        }
        if let Some(correlation_id) = self.correlation_id {
            add("correlation_id", "=", Box::new(correlation_id));
        }
        if let Some(since) = self.since {
            add("recorded_at", ">=", Box::new(since));
        }
        if let Some(until) = self.until {
            add("recorded_at", "<=", Box::new(until));
        }
        (sql, values)
    }
}

impl EventStore {
    /// [`read_matching`] on a connection of the store's pool.
    pub async fn read_matching(
        &self,
        filter: &EventFilter,
        after_position: i64,
        limit: i64,
    ) -> Result<Vec<RecordedEvent>, LogError> {
        read_matching(&self.pool().get().await?, filter, after_position, limit).await
    }

    /// [`read_stream_at`] on a connection of the store's pool.
    pub async fn read_stream_at(
        &self,
        stream: &StreamName,
        after_version: i64,
        at: Option<DateTime<Utc>>,
        limit: i64,
    ) -> Result<Vec<RecordedEvent>, LogError> {
        read_stream_at(&self.pool().get().await?, stream, after_version, at, limit).await
    }

    /// [`list_streams`] on a connection of the store's pool.
    pub async fn list_streams(
        &self,
        prefix: &str,
        after: Option<&StreamName>,
        limit: i64,
    ) -> Result<Vec<StreamSummary>, LogError> {
        list_streams(&self.pool().get().await?, prefix, after, limit).await
    }
}

/// Events above `after_position` that match `filter`, in position order, at most `limit`.
/// With an empty filter it is [`crate::EventStore::read_all`].
pub async fn read_matching(
    client: &impl deadpool_postgres::GenericClient,
    filter: &EventFilter,
    after_position: i64,
    limit: i64,
) -> Result<Vec<RecordedEvent>, LogError> {
    let (conditions, values) = filter.conditions(3);
    let sql = format!(
        "SELECT {COLUMNS} FROM log.events WHERE position > $1{conditions} \
         ORDER BY position LIMIT $2"
    );
    let mut params: Vec<&(dyn ToSql + Sync)> = vec![&after_position, &limit];
    params.extend(values.iter().map(|v| v.as_ref() as &(dyn ToSql + Sync)));
    let rows = client.query(&sql, &params).await?;
    to_events(&rows)
}

/// The events of one stream above `after_version` recorded at or before `at` (all of them when
/// `at` is `None`), in version order: the stream as it was at that time, what
/// `palimpsest audit stream --at` folds into a state.
pub async fn read_stream_at(
    client: &impl deadpool_postgres::GenericClient,
    stream: &StreamName,
    after_version: i64,
    at: Option<DateTime<Utc>>,
    limit: i64,
) -> Result<Vec<RecordedEvent>, LogError> {
    let rows = client
        .query(
            &format!(
                "SELECT {COLUMNS} FROM log.events WHERE context = $1 AND category = $2 \
                 AND stream_key = $3 AND version > $4 \
                 AND ($5::timestamptz IS NULL OR recorded_at <= $5) ORDER BY version LIMIT $6"
            ),
            &[
                &stream.context,
                &stream.category,
                &stream.key,
                &after_version,
                &at,
                &limit,
            ],
        )
        .await?;
    to_events(&rows)
}

/// One stream of the log, as [`list_streams`] lists it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct StreamSummary {
    /// The stream, written as `context/category/key` (what `stream=` and `after=` take).
    #[serde(serialize_with = "as_text")]
    pub stream: StreamName,
    /// The version of its last event.
    pub version: i64,
    /// When its last event was recorded.
    pub last_recorded_at: DateTime<Utc>,
}

/// Writes a stream as its `context/category/key` text.
fn as_text<S: serde::Serializer>(stream: &StreamName, out: S) -> Result<S::Ok, S::Error> {
    out.collect_str(stream)
}

/// Streams whose name (`context/category/key`) starts with `prefix`, after the stream `after`
/// (exclusive) in name order, at most `limit`. The version comes from `log.streams`, the time
/// from its last event (one index probe each).
pub async fn list_streams(
    client: &impl deadpool_postgres::GenericClient,
    prefix: &str,
    after: Option<&StreamName>,
    limit: i64,
) -> Result<Vec<StreamSummary>, LogError> {
    let (context, category, key) = after
        .map(|s| (s.context.as_str(), s.category.as_str(), s.key.as_str()))
        .unwrap_or(("", "", ""));
    let rows = client
        .query(
            "SELECT s.context, s.category, s.stream_key, s.version, e.recorded_at \
             FROM log.streams s JOIN log.events e ON e.context = s.context \
               AND e.category = s.category AND e.stream_key = s.stream_key \
               AND e.version = s.version \
             WHERE starts_with(s.context || '/' || s.category || '/' || s.stream_key, $1) \
               AND (s.context, s.category, s.stream_key) > ($2, $3, $4) \
             ORDER BY s.context, s.category, s.stream_key LIMIT $5",
            &[&prefix, &context, &category, &key, &limit],
        )
        .await?;
    rows.iter()
        .map(|row| {
            let stream = StreamName::new(
                row.try_get::<_, String>(0)?,
                row.try_get::<_, String>(1)?,
                row.try_get::<_, String>(2)?,
            )
            .map_err(|e| LogError::Corrupt(e.to_string()))?;
            Ok(StreamSummary {
                stream,
                version: row.try_get(3)?,
                last_recorded_at: row.try_get(4)?,
            })
        })
        .collect()
}

/// A point in time as an auditor types it: RFC 3339 (`2026-11-27T10:03:12Z`), or without
/// seconds or offset (`2026-11-27T10:03`, `2026-11-27 10:03`, read as UTC), or a bare date
/// (`2026-11-27`, its midnight UTC).
pub fn parse_time(text: &str) -> Result<DateTime<Utc>, String> {
    let text = text.trim();
    if let Ok(time) = DateTime::parse_from_rfc3339(text) {
        return Ok(time.with_timezone(&Utc));
    }
    let with_t = text.replacen(' ', "T", 1);
    let with_offset = match with_t.strip_suffix(['Z', 'z']) {
        Some(bare) => format!("{bare}+00:00"),
        None => with_t.clone(),
    };
    if let Ok(time) = DateTime::parse_from_rfc3339(&with_t)
        .or_else(|_| DateTime::parse_from_str(&with_offset, "%Y-%m-%dT%H:%M%:z"))
    {
        return Ok(time.with_timezone(&Utc));
    }
    for format in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M"] {
        if let Ok(time) = NaiveDateTime::parse_from_str(&with_t, format) {
            return Ok(time.and_utc());
        }
    }
    if let Ok(date) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        return Ok(date.and_time(chrono::NaiveTime::MIN).and_utc());
    }
    Err(format!(
        "{text:?} is not a time: give RFC 3339 (2026-11-27T10:03:12Z), \
         2026-11-27T10:03 (UTC) or 2026-11-27"
    ))
}

#[cfg(test)]
mod tests {
    use super::parse_time;

    #[test]
    fn times_are_read_with_or_without_seconds_and_offsets() {
        let minute = "2026-11-27T10:03:00Z";
        for text in [
            "2026-11-27T10:03:00Z",
            "2026-11-27T10:03",
            "2026-11-27 10:03",
            "2026-11-27T11:03+01:00",
            "2026-11-27T10:03Z",
            "2026-11-27T10:03:00",
        ] {
            assert_eq!(
                parse_time(text).map(|t| t.to_rfc3339()),
                parse_time(minute).map(|t| t.to_rfc3339()),
                "{text}"
            );
        }
        assert_eq!(
            parse_time("2026-11-27").map(|t| t.to_rfc3339()),
            Ok("2026-11-27T00:00:00+00:00".to_owned())
        );
        assert!(parse_time("yesterday").is_err());
        assert!(parse_time("2026-11-27T25:00").is_err());
    }
}
