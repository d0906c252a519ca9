//! The event envelope: what an event is before it is written, and what it is once recorded.

use crate::{StreamName, canonical, recorded_at};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use uuid::Uuid;

/// Who and what caused a command, carried by every event it appended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Metadata {
    /// The user or service that issued the command, as the context names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actor: Option<String>,
    /// Ties together every event caused by one request, across commands.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub correlation_id: Option<Uuid>,
    /// The event or message that directly caused this command.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub causation_id: Option<Uuid>,
    /// A client-chosen key: a command retried with the same key appends nothing and returns the
    /// first result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
}

/// The version a command expects a stream to be at; checked in the append's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case", tag = "kind", content = "version")]
pub enum ExpectedVersion {
    /// No check: append whatever the stream's version.
    Any,
    /// The stream must not exist yet (no event in it).
    NoStream,
    /// The stream must exist and its last event must have this version.
    Exact(i64),
}

impl ExpectedVersion {
    /// Whether a stream whose last version is `actual` (0 when it has no event) satisfies this.
    pub fn accepts(self, actual: i64) -> bool {
        match self {
            ExpectedVersion::Any => true,
            ExpectedVersion::NoStream => actual == 0,
            ExpectedVersion::Exact(v) => v == actual,
        }
    }
}

/// An event a command wants to append: its type and payload, not yet placed in a stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct NewEvent {
    /// Unique forever; uuid v7 so ids sort by creation time.
    pub event_id: Uuid,
    /// The payload's type name, e.g. `SectionCommitted`.
    pub event_type: String,
    /// The payload schema's version, raised when a payload type changes shape.
    pub schema_version: i32,
    /// The payload, as the context's payload type serialises it.
    pub payload: Value,
}

impl NewEvent {
    /// A new event with a fresh uuid v7.
    pub fn new(event_type: impl Into<String>, schema_version: i32, payload: Value) -> Self {
        NewEvent {
            event_id: Uuid::now_v7(),
            event_type: event_type.into(),
            schema_version,
            payload,
        }
    }
}

/// An event as the log recorded it: the envelope every reader, the relay and NATS consumers see.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RecordedEvent {
    /// Unique forever; NATS' `Nats-Msg-Id`.
    pub event_id: Uuid,
    /// The stream the event belongs to.
    pub stream: StreamName,
    /// Its version in the stream: 1 for the stream's first event, then +1 each.
    pub version: i64,
    /// Its place in the whole log: gapless from 1, equal to its JetStream sequence.
    pub position: i64,
    /// The payload's type name.
    pub event_type: String,
    /// The payload schema's version.
    pub schema_version: i32,
    /// The payload.
    pub payload: Value,
    /// Who and what caused it.
    pub metadata: Metadata,
    /// When the log recorded it (microsecond precision, UTC), written as the hash covers it:
    /// always six fractional digits ([`recorded_at::text`]); read from any RFC 3339 form.
    #[serde(serialize_with = "recorded_at::serialize")]
    #[schemars(pattern(recorded_at::PATTERN))]
    pub recorded_at: DateTime<Utc>,
    /// The previous event's hash in this stream (hex); `None` for the first event.
    pub prev_hash: Option<String>,
    /// `sha256(previous hash ‖ canonical content)` as lower-case hex; see [`RecordedEvent::canonical_content`].
    pub hash: String,
}

impl RecordedEvent {
    /// The text a stream's hash chain covers: the canonical JSON of every field that never
    /// changes after insert (the global position is left out: the chain is per stream).
    pub fn canonical_content(&self) -> String {
        content_for_hash(
            self.event_id,
            &self.stream,
            self.version,
            &self.event_type,
            self.schema_version,
            &self.payload,
            &self.metadata,
            self.recorded_at,
        )
    }
}

/// The canonical (JCS) text hashed for an event, shared by the log (when it writes) and the auditor
/// (when it checks), so the two can never disagree on the form.
#[allow(clippy::too_many_arguments)]
pub fn content_for_hash(
    event_id: Uuid,
    stream: &StreamName,
    version: i64,
    event_type: &str,
    schema_version: i32,
    payload: &Value,
    metadata: &Metadata,
    recorded_at: DateTime<Utc>,
) -> String {
    let fields = HashedFields {
        event_type,
        schema_version,
        payload: &canonical::to_canonical_string(payload),
        metadata: &canonical_metadata(metadata),
    };
    fields.content(event_id, stream, version, recorded_at)
}

/// The canonical text of an event's metadata, as [`content_for_hash`] covers it.
pub fn canonical_metadata(metadata: &Metadata) -> String {
    canonical::to_canonical_string(&json!(metadata))
}

/// What the hash of an event covers that is known before the log places it: its type and
/// schema version, and its payload and metadata already in canonical text. A writer makes
/// these where the command was decided, so the log's appender (one task for the whole
/// process) only assembles the text around them.
pub struct HashedFields<'a> {
    /// The event's type.
    pub event_type: &'a str,
    /// The payload's schema version.
    pub schema_version: i32,
    /// The payload's canonical text ([`canonical::to_canonical_string`]).
    pub payload: &'a str,
    /// The metadata's canonical text ([`canonical_metadata`]).
    pub metadata: &'a str,
}

impl HashedFields<'_> {
    /// [`content_for_hash`] of these fields, placed at `version` of `stream` at `recorded_at`.
    pub fn content(
        &self,
        event_id: Uuid,
        stream: &StreamName,
        version: i64,
        recorded_at: DateTime<Utc>,
    ) -> String {
        // The keys below are written in their canonical (sorted) order, so the text is the
        // canonical form of the object {event_id, event_type, metadata, payload, recorded_at,
        // schema_version, stream, version} without building it (this runs for every append).
        let mut out = String::with_capacity(160 + self.payload.len() + self.metadata.len());
        out.push_str("{\"event_id\":\"");
        out.push_str(&event_id.hyphenated().to_string());
        out.push_str("\",\"event_type\":");
        canonical::write_string(&mut out, self.event_type);
        out.push_str(",\"metadata\":");
        out.push_str(self.metadata);
        out.push_str(",\"payload\":");
        out.push_str(self.payload);
        out.push_str(",\"recorded_at\":\"");
        out.push_str(&recorded_at::text(recorded_at));
        out.push_str("\",\"schema_version\":");
        out.push_str(&self.schema_version.to_string());
        out.push_str(",\"stream\":{\"category\":");
        canonical::write_string(&mut out, &stream.category);
        out.push_str(",\"context\":");
        canonical::write_string(&mut out, &stream.context);
        out.push_str(",\"key\":");
        canonical::write_string(&mut out, &stream.key);
        out.push_str("},\"version\":");
        out.push_str(&version.to_string());
        out.push('}');
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hashed_text_is_the_canonical_form_of_the_envelope_fields() {
        let stream = StreamName::new("pads", "pad", "g.x$p\"q").expect("stream");
        let metadata = Metadata {
            actor: Some("ann".into()),
            ..Default::default()
        };
        let at = DateTime::parse_from_rfc3339("2026-11-23T09:00:00.123456Z")
            .expect("time")
            .with_timezone(&Utc);
        let id = Uuid::now_v7();
        let payload = json!({"b": 1, "a": [true, null, 1.5]});
        let direct = content_for_hash(id, &stream, 7, "PadEdited", 2, &payload, &metadata, at);
        let via_value = canonical::to_canonical_string(&json!({
            "event_id": id,
            "stream": stream,
            "version": 7,
            "event_type": "PadEdited",
            "schema_version": 2,
            "payload": payload,
            "metadata": metadata,
            "recorded_at": "2026-11-23T09:00:00.123456Z",
        }));
        assert_eq!(direct, via_value);
    }

    /// An event of `stream` recorded at `at`, chained from `prev`, hashed as the log hashes it.
    fn recorded(prev: Option<[u8; 32]>, version: i64, at: &str) -> RecordedEvent {
        let stream = StreamName::new("atlas", "section", "s-1").expect("stream");
        let metadata = Metadata {
            actor: Some("admin".into()),
            correlation_id: Some(Uuid::now_v7()),
            ..Default::default()
        };
        let recorded_at = DateTime::parse_from_rfc3339(at)
            .expect("time")
            .with_timezone(&Utc);
        let payload = json!({"title": "Hà Nội \"1010\"", "area": 3.0, "ratio": 1e-7, "n": 1e21});
        let event_id = Uuid::now_v7();
        let content = content_for_hash(
            event_id,
            &stream,
            version,
            "SectionCreated",
            1,
            &payload,
            &metadata,
            recorded_at,
        );
        RecordedEvent {
            event_id,
            stream,
            version,
            position: version,
            event_type: "SectionCreated".into(),
            schema_version: 1,
            payload,
            metadata,
            recorded_at,
            prev_hash: prev.map(hex::encode),
            hash: hex::encode(canonical::chain_hash(prev.as_ref(), &content)),
        }
    }

    /// The hash of a published event recomputed from its JSON alone, as an outside verifier
    /// does: every field but `position`, `prev_hash` and `hash`, in canonical form, chained from
    /// the bytes of `prev_hash` (32 zero bytes when it is null).
    fn hash_from_published(published: &str) -> String {
        let mut event: Value = serde_json::from_str(published).expect("published json");
        let fields = event.as_object_mut().expect("an object");
        let hash = fields.remove("hash");
        fields.remove("position");
        let prev: Option<[u8; 32]> = match fields.remove("prev_hash") {
            Some(Value::String(h)) => {
                Some(hex::decode(h).expect("hex").try_into().expect("32 bytes"))
            }
            _ => None,
        };
        assert!(hash.is_some(), "the published event carries its hash");
        hex::encode(canonical::chain_hash(
            prev.as_ref(),
            &canonical::to_canonical_string(&event),
        ))
    }

    #[test]
    fn a_published_event_gives_back_its_hash_whatever_its_microseconds() {
        let mut prev = None;
        let times = [
            "2026-11-27T15:00:00.123456Z",
            "2026-11-27T15:00:00.250000Z",
            "2026-11-27T15:00:01.000000Z",
            "2026-11-27T15:00:01.000100Z",
        ];
        for (i, at) in times.into_iter().enumerate() {
            let event = recorded(prev, i as i64 + 1, at);
            let published = serde_json::to_string(&event).expect("json");
            let value: Value = serde_json::from_str(&published).expect("json");
            assert_eq!(value["recorded_at"], json!(at), "six digits, as hashed");
            assert_eq!(hash_from_published(&published), event.hash, "{published}");
            let back: RecordedEvent = serde_json::from_str(&published).expect("decodes");
            assert_eq!(back, event);
            prev = Some(
                hex::decode(&event.hash)
                    .expect("hex")
                    .try_into()
                    .expect("32 bytes"),
            );
        }
    }

    #[test]
    fn an_envelope_published_with_fewer_digits_still_decodes_and_verifies() {
        let event = recorded(None, 1, "2026-11-27T15:00:00.250000Z");
        let published = serde_json::to_string(&event).expect("json");
        for older in ["2026-11-27T15:00:00.250Z", "2026-11-27T16:00:00.25+01:00"] {
            let old = published.replace("2026-11-27T15:00:00.250000Z", older);
            let back: RecordedEvent = serde_json::from_str(&old).expect("any RFC 3339 decodes");
            assert_eq!(back.recorded_at, event.recorded_at, "{older}");
            let recomputed = canonical::chain_hash(None, &back.canonical_content());
            assert_eq!(hex::encode(recomputed), event.hash, "{older}");
        }
    }
}
