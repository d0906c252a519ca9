//! Planning a batch, in memory: each command checked against the stream heads as moved by the
//! commands before it, its events given positions, versions and chained hashes, and the rows
//! of the batch's statements built. No I/O: the appender reads or remembers the heads, then
//! writes what this module builds. Each payload's JSON and canonical texts were already written
//! by [`AppendRequest::validate`] in the caller's task: the appender is one task for the whole
//! process, so it only assembles around them (the chained hash, the rows).

use crate::append::EventText;
use crate::{AppendError, AppendRequest, LogError};
use chrono::{DateTime, Utc};
use palimpsest_events::canonical::{chain_hash, to_canonical_string};
use palimpsest_events::envelope::{HashedFields, canonical_metadata};
use palimpsest_events::{RecordedEvent, StreamName};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use tokio_postgres::Row;
use tokio_postgres::types::{IsNull, ToSql, Type, to_sql_checked};
use uuid::Uuid;

/// A stream's head: its last version and hash.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Head {
    pub(crate) version: i64,
    pub(crate) hash: Option<[u8; 32]>,
}

impl Head {
    /// The head of a stream with no event.
    pub(crate) const EMPTY: Head = Head {
        version: 0,
        hash: None,
    };
}

/// What the batch does with one command.
pub(crate) enum Plan {
    /// Accepted: these events are written.
    Write(Vec<RecordedEvent>),
    /// Seen before (idempotency key or event ids): the events at these positions are returned.
    Replay(i64, i64),
    /// Refused; nothing of it is written.
    Refused(AppendError),
}

/// What the database already holds of the batch's keys and event ids (empty unless the batch
/// runs carefully; otherwise their unique indexes catch a repeat and the batch is re-run).
#[derive(Default)]
pub(crate) struct Seen {
    pub(crate) keys: HashMap<String, (i64, i64)>,
    pub(crate) ids: HashMap<Uuid, i64>,
}

/// The state a batch is planned against, moved by each accepted command.
pub(crate) struct Planner<'a> {
    pub(crate) heads: &'a mut HashMap<StreamName, Head>,
    pub(crate) seen: Seen,
    pub(crate) position: i64,
    pub(crate) recorded_at: DateTime<Utc>,
}

impl Planner<'_> {
    /// Plans one command: a repeat, a refusal, or its events.
    pub(crate) fn plan(&mut self, req: &AppendRequest) -> Plan {
        if let Some(key) = &req.metadata.idempotency_key
            && let Some((first, last)) = self.seen.keys.get(key)
        {
            return Plan::Replay(*first, *last);
        }
        if let Some(plan) = self.repeated_ids(req) {
            return plan;
        }
        for s in &req.streams {
            let actual = self.heads.get(&s.stream).map(|h| h.version).unwrap_or(0);
            if !s.expected.accepts(actual) {
                return Plan::Refused(AppendError::WrongExpectedVersion {
                    stream: s.stream.clone(),
                    expected: s.expected,
                    actual,
                });
            }
        }
        let events = self.record(req);
        if let Some(key) = &req.metadata.idempotency_key {
            self.seen
                .keys
                .insert(key.clone(), key_range(&events, self.position));
        }
        Plan::Write(events)
    }

    /// A command whose event ids are all stored is a repeat; some of them stored is an error.
    fn repeated_ids(&self, req: &AppendRequest) -> Option<Plan> {
        if self.seen.ids.is_empty() {
            return None;
        }
        let ids: Vec<i64> = req
            .streams
            .iter()
            .flat_map(|s| &s.events)
            .filter_map(|e| self.seen.ids.get(&e.event_id).copied())
            .collect();
        let (first, last) = (*ids.iter().min()?, *ids.iter().max()?);
        if ids.len() == req.event_count() && (last - first + 1) as usize == ids.len() {
            return Some(Plan::Replay(first, last));
        }
        Some(Plan::Refused(AppendError::Invalid(
            "some of the command's event ids are already stored".into(),
        )))
    }

    /// Gives the command's events their positions, versions and chained hashes.
    fn record(&mut self, req: &AppendRequest) -> Vec<RecordedEvent> {
        let mut events = Vec::with_capacity(req.event_count());
        let metadata = match &req.metadata_text {
            Some(text) => Cow::Borrowed(text.as_str()),
            None => Cow::Owned(canonical_metadata(&req.metadata)),
        };
        let mut texts = req.texts.iter();
        for s in &req.streams {
            let head = self
                .heads
                .entry(s.stream.clone())
                .or_insert(Head::EMPTY.clone());
            for e in &s.events {
                self.position += 1;
                head.version += 1;
                // Written by `validate` in the caller's task; written here only for a request
                // that was not validated.
                let payload = match texts.next() {
                    Some(text) => Cow::Borrowed(text.canonical.as_str()),
                    None => Cow::Owned(to_canonical_string(&e.payload)),
                };
                let fields = HashedFields {
                    event_type: &e.event_type,
                    schema_version: e.schema_version,
                    payload: &payload,
                    metadata: &metadata,
                };
                let content = fields.content(e.event_id, &s.stream, head.version, self.recorded_at);
                let hash = chain_hash(head.hash.as_ref(), &content);
                events.push(RecordedEvent {
                    event_id: e.event_id,
                    stream: s.stream.clone(),
                    version: head.version,
                    position: self.position,
                    event_type: e.event_type.clone(),
                    schema_version: e.schema_version,
                    payload: e.payload.clone(),
                    metadata: req.metadata.clone(),
                    recorded_at: self.recorded_at,
                    prev_hash: head.hash.map(hex::encode),
                    hash: hex::encode(hash),
                });
                head.hash = Some(hash);
            }
        }
        events
    }
}

/// The positions an idempotency key is stored with: its command's first and last event, or,
/// for a command with no event (an answer stored alone), the empty range just after
/// `position`, the log's end when it was planned (a replay of it reads back no event).
fn key_range(events: &[RecordedEvent], position: i64) -> (i64, i64) {
    match (events.first(), events.last()) {
        (Some(first), Some(last)) => (first.position, last.position),
        _ => (position + 1, position),
    }
}

/// A value already written as JSON text, sent to a `json` column as it is (shared: a retried
/// batch sends it again without writing it again).
#[derive(Debug, Clone)]
pub(crate) struct JsonText(Arc<str>);

impl From<String> for JsonText {
    fn from(text: String) -> JsonText {
        JsonText(text.into())
    }
}

impl JsonText {
    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

impl ToSql for JsonText {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> Result<IsNull, Box<dyn std::error::Error + Sync + Send>> {
        if *ty == Type::JSONB {
            // jsonb's binary form is a version byte, then the text.
            out.extend_from_slice(&[1]);
        }
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }

    fn accepts(ty: &Type) -> bool {
        matches!(*ty, Type::JSON | Type::JSONB)
    }

    to_sql_checked!();
}

/// Column arrays of the batch's statements.
#[derive(Default)]
pub(crate) struct Rows {
    pub(crate) position: Vec<i64>,
    pub(crate) event_id: Vec<Uuid>,
    pub(crate) context: Vec<String>,
    pub(crate) category: Vec<String>,
    pub(crate) stream_key: Vec<String>,
    pub(crate) version: Vec<i64>,
    pub(crate) event_type: Vec<String>,
    pub(crate) schema_version: Vec<i32>,
    /// Each payload as its JSON text, written once here rather than cloned and written later.
    pub(crate) payload: Vec<JsonText>,
    pub(crate) actor: Vec<Option<String>>,
    pub(crate) correlation_id: Vec<Option<Uuid>>,
    pub(crate) causation_id: Vec<Option<Uuid>>,
    pub(crate) idempotency_key: Vec<Option<String>>,
    pub(crate) recorded_at: Vec<DateTime<Utc>>,
    pub(crate) prev_hash: Vec<Option<Vec<u8>>>,
    pub(crate) hash: Vec<Vec<u8>>,
    /// The log key's signature over the batch's leaves (decision 0024), when the store signs.
    pub(crate) signature: Option<Vec<u8>>,
    /// Idempotency rows of the accepted commands that carry a key.
    pub(crate) keys: RememberedKeys,
}

/// Column arrays for the idempotency rows of a batch: each key with its positions and, when the
/// command gave one, the answer to repeat.
#[derive(Default)]
pub(crate) struct RememberedKeys {
    pub(crate) key: Vec<String>,
    pub(crate) first: Vec<i64>,
    pub(crate) last: Vec<i64>,
    pub(crate) request_hash: Vec<Option<Vec<u8>>>,
    pub(crate) status: Vec<Option<i16>>,
    pub(crate) content_type: Vec<Option<String>>,
    pub(crate) body: Vec<Option<Vec<u8>>>,
}

impl RememberedKeys {
    fn push(&mut self, key: &str, first: i64, last: i64, reply: Option<&crate::StoredReply>) {
        self.key.push(key.to_owned());
        self.first.push(first);
        self.last.push(last);
        self.request_hash
            .push(reply.map(|r| r.request_hash.clone()));
        self.status
            .push(reply.and_then(|r| i16::try_from(r.status).ok()));
        self.content_type
            .push(reply.map(|r| r.content_type.clone()));
        self.body.push(reply.map(|r| r.body.clone()));
    }
}

impl Rows {
    /// The rows of every accepted command.
    /// The rows of every accepted command of a batch planned from log position `start`.
    pub(crate) fn of(
        requests: &[AppendRequest],
        plans: &[Plan],
        start: i64,
    ) -> Result<Rows, AppendError> {
        let mut rows = Rows::default();
        let mut position = start;
        for (req, p) in requests.iter().zip(plans) {
            let Plan::Write(events) = p else { continue };
            let mut texts = req.texts.iter();
            for e in events {
                rows.push(e, texts.next())?;
                position = e.position;
            }
            if let Some(key) = &req.metadata.idempotency_key {
                let (first, last) = key_range(events, position);
                rows.keys.push(key, first, last, req.reply.as_ref());
            }
        }
        Ok(rows)
    }

    fn push(&mut self, e: &RecordedEvent, text: Option<&EventText>) -> Result<(), AppendError> {
        let decode = |h: &str| hex::decode(h).map_err(|e| LogError::Corrupt(e.to_string()));
        self.position.push(e.position);
        self.event_id.push(e.event_id);
        self.context.push(e.stream.context.clone());
        self.category.push(e.stream.category.clone());
        self.stream_key.push(e.stream.key.clone());
        self.version.push(e.version);
        self.event_type.push(e.event_type.clone());
        self.schema_version.push(e.schema_version);
        self.payload.push(match text {
            Some(text) => text.json.clone(),
            None => JsonText::from(e.payload.to_string()),
        });
        self.actor.push(e.metadata.actor.clone());
        self.correlation_id.push(e.metadata.correlation_id);
        self.causation_id.push(e.metadata.causation_id);
        self.idempotency_key
            .push(e.metadata.idempotency_key.clone());
        self.recorded_at.push(e.recorded_at);
        self.prev_hash
            .push(e.prev_hash.as_deref().map(decode).transpose()?);
        self.hash.push(decode(&e.hash)?);
        Ok(())
    }

    /// Each touched stream's last version and hash (the last row of each stream wins).
    pub(crate) fn last_of_each_stream(&self) -> HeadColumns<'_> {
        let mut last: HashMap<(&str, &str, &str), usize> = HashMap::new();
        for i in 0..self.position.len() {
            last.insert(
                (
                    self.context[i].as_str(),
                    self.category[i].as_str(),
                    self.stream_key[i].as_str(),
                ),
                i,
            );
        }
        let mut cols: HeadColumns<'_> = Default::default();
        for ((ctx, cat, key), i) in last {
            cols.0.push(ctx);
            cols.1.push(cat);
            cols.2.push(key);
            cols.3.push(self.version[i]);
            cols.4.push(self.hash[i].as_slice());
        }
        cols
    }
}

/// Stream head columns: context, category, key, version, last hash.
pub(crate) type HeadColumns<'a> = (
    Vec<&'a str>,
    Vec<&'a str>,
    Vec<&'a str>,
    Vec<i64>,
    Vec<&'a [u8]>,
);

/// The batch's streams as three columns, for the heads lookup.
pub(crate) fn stream_columns(requests: &[AppendRequest]) -> (Vec<&str>, Vec<&str>, Vec<&str>) {
    let (mut ctx, mut cat, mut key) = (Vec::new(), Vec::new(), Vec::new());
    for s in requests.iter().flat_map(|r| &r.streams) {
        ctx.push(s.stream.context.as_str());
        cat.push(s.stream.category.as_str());
        key.push(s.stream.key.as_str());
    }
    (ctx, cat, key)
}

/// Decodes rows of (context, category, key, version, last hash).
pub(crate) fn decode_heads(rows: &[Row]) -> Result<Vec<(StreamName, Head)>, AppendError> {
    let mut heads = Vec::with_capacity(rows.len());
    for r in rows {
        let name = StreamName::new(
            r.get::<_, String>(0),
            r.get::<_, String>(1),
            r.get::<_, String>(2),
        )
        .map_err(|e| LogError::Corrupt(e.to_string()))?;
        let hash: Vec<u8> = r.get(4);
        let hash: [u8; 32] = hash
            .try_into()
            .map_err(|_| LogError::Corrupt(format!("stream {name} has a malformed head hash")))?;
        heads.push((
            name,
            Head {
                version: r.get(3),
                hash: Some(hash),
            },
        ));
    }
    Ok(heads)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::Limits;
    use palimpsest_events::{ExpectedVersion, Metadata, NewEvent};
    use serde_json::json;

    fn request() -> AppendRequest {
        let stream = StreamName::new("records", "doc", "o:C:pk").expect("stream");
        let events = vec![
            NewEvent::new(
                "Made",
                1,
                json!({"b": [1, 2.5, 1.0, "é\u{2028}"], "a": {"z": null}}),
            ),
            NewEvent::new("Changed", 2, json!({"k": "v"})),
        ];
        AppendRequest::new()
            .stream(stream, ExpectedVersion::NoStream, events)
            .metadata(Metadata {
                actor: Some("ann".into()),
                ..Default::default()
            })
    }

    fn planned(req: &AppendRequest, at: DateTime<Utc>) -> (Vec<RecordedEvent>, Vec<String>) {
        let mut heads = HashMap::new();
        let mut planner = Planner {
            heads: &mut heads,
            seen: Seen::default(),
            position: 7,
            recorded_at: at,
        };
        let plan = planner.plan(req);
        let rows =
            Rows::of(std::slice::from_ref(req), std::slice::from_ref(&plan), 7).expect("rows");
        let Plan::Write(events) = plan else {
            panic!("not written");
        };
        let payloads = rows.payload.iter().map(|p| p.0.to_string()).collect();
        (events, payloads)
    }

    /// Given the same command, when it was validated (its payloads written in the caller's
    /// task) and when it was not, then the appender plans the same events, hashes and rows.
    /// (`1.0` is `1.0` in the column's text and `1` in the hashed canonical text: the two are
    /// not interchangeable.)
    #[test]
    fn texts_written_before_the_appender_plan_what_it_would_have_written() {
        let at = Utc::now();
        let raw = request();
        let mut validated = raw.clone();
        validated.validate(&Limits::default()).expect("valid");
        assert_eq!(validated.texts.len(), 2);
        let (events, payloads) = planned(&validated, at);
        assert_eq!((events, payloads), planned(&raw, at));
        let (events, _) = planned(&validated, at);
        for e in &events {
            let text = e.canonical_content();
            let prev = e.prev_hash.as_deref().map(|h| {
                let bytes: [u8; 32] = hex::decode(h).expect("hex").try_into().expect("32");
                bytes
            });
            assert_eq!(hex::encode(chain_hash(prev.as_ref(), &text)), e.hash);
        }
    }
}
