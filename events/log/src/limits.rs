//! What the log accepts: only events that every reader downstream can carry.
//!
//! An event, once appended, must be published by the relay and applied by every projector;
//! one that cannot be stops them for good (they never skip an event). So the log refuses,
//! before anything is written:
//! - stream keys with control characters (NATS header lines cannot hold a line break, Postgres
//!   `text` cannot hold U+0000);
//! - U+0000 anywhere in a payload or metadata text (the log's `json` column accepts `\u0000`, but
//!   the `text` and `jsonb` columns of read models do not; a context that must keep NUL encodes
//!   it itself);
//! - an event larger than [`Limits::max_event_bytes`] as the relay publishes it (the default
//!   stays below NATS' default `max_payload` of 1 MiB; the relay reads the server's value at
//!   start and warns when the limit is above it), and an append larger than
//!   [`Limits::max_append_bytes`].

use palimpsest_events::{Metadata, NewEvent, StreamName, StreamNameError};
use serde_json::Value;

/// The default most bytes of one event as published: below NATS' default 1 MiB `max_payload`,
/// with room for the headers.
pub const DEFAULT_MAX_EVENT_BYTES: usize = 900 * 1024;

/// The default most bytes of one append (all its events).
pub const DEFAULT_MAX_APPEND_BYTES: usize = 8 * 1024 * 1024;

/// What the envelope and the NATS headers add to a payload, at most (ids, positions, hashes,
/// times, field names; the stream name and type are counted apart).
const ENVELOPE_BYTES: usize = 1024;

/// The sizes the log accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes of one event as the relay publishes it (envelope, payload and headers).
    pub max_event_bytes: usize,
    /// Most bytes of one append, all its events together.
    pub max_append_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_event_bytes: DEFAULT_MAX_EVENT_BYTES,
            max_append_bytes: DEFAULT_MAX_APPEND_BYTES,
        }
    }
}

/// Why the log refused an append that downstream readers could not carry. Nothing was written;
/// the client can change its request (a 4xx).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A stream name the relay cannot carry.
    #[error("stream {stream}: {reason}")]
    StreamKey {
        /// The stream, as `context/category/key` (control characters escaped).
        stream: String,
        /// What is wrong with its key.
        reason: StreamNameError,
    },
    /// U+0000 in text a read model would have to store.
    #[error("stream {stream}: {field} contains U+0000, which read models cannot store")]
    Nul {
        /// The stream of the event.
        stream: String,
        /// Where: `payload/title`, `metadata/actor`, ... (a JSON pointer below the envelope).
        field: String,
    },
    /// One event is larger than the relay may publish.
    #[error("an event of stream {stream} is {size} bytes; an event may be at most {max} bytes")]
    EventTooLarge {
        /// The stream of the event.
        stream: String,
        /// Its size as published, estimated from above.
        size: usize,
        /// The limit.
        max: usize,
    },
    /// The append as a whole is too large.
    #[error("the append is {size} bytes; an append may be at most {max} bytes")]
    AppendTooLarge {
        /// The total size of its events.
        size: usize,
        /// The limit.
        max: usize,
    },
}

impl Refusal {
    /// Whether the refusal is about size (HTTP 413) rather than content (HTTP 400).
    pub fn is_too_large(&self) -> bool {
        matches!(
            self,
            Refusal::EventTooLarge { .. } | Refusal::AppendTooLarge { .. }
        )
    }
}

fn shown(stream: &StreamName) -> String {
    palimpsest_events::subject::stream_header(stream)
}

/// Checks a stream name; see [`StreamName::check_carriable`].
pub fn check_stream(stream: &StreamName) -> Result<(), Refusal> {
    stream
        .check_carriable()
        .map_err(|reason| Refusal::StreamKey {
            stream: shown(stream),
            reason,
        })
}

/// Checks the metadata's texts for U+0000.
pub fn check_metadata(stream: &StreamName, metadata: &Metadata) -> Result<(), Refusal> {
    for (field, text) in [
        ("metadata/actor", &metadata.actor),
        ("metadata/idempotency_key", &metadata.idempotency_key),
    ] {
        if text.as_deref().is_some_and(|t| t.contains('\0')) {
            return Err(Refusal::Nul {
                stream: shown(stream),
                field: field.into(),
            });
        }
    }
    Ok(())
}

/// Checks one event and returns its size as published (an upper estimate).
pub fn check_event(
    stream: &StreamName,
    event: &NewEvent,
    metadata: &Metadata,
    limits: &Limits,
) -> Result<usize, Refusal> {
    check_sized(stream, event, metadata, limits, json_len(&event.payload))
}

/// [`check_event`] of an event whose payload's JSON text is `payload_len` bytes long.
pub(crate) fn check_sized(
    stream: &StreamName,
    event: &NewEvent,
    metadata: &Metadata,
    limits: &Limits,
    payload_len: usize,
) -> Result<usize, Refusal> {
    if let Some(path) = nul_path(&event.payload) {
        return Err(Refusal::Nul {
            stream: shown(stream),
            field: format!("payload{path}"),
        });
    }
    // The stream name appears in the envelope and (escaped) in a header; metadata once.
    let stream_bytes = 3 * (stream.context.len() + stream.category.len() + stream.key.len());
    let size = ENVELOPE_BYTES
        + stream_bytes
        + 2 * event.event_type.len()
        + payload_len
        + metadata.actor.as_ref().map_or(0, |a| 2 * a.len())
        + metadata.idempotency_key.as_ref().map_or(0, |k| 2 * k.len());
    if size > limits.max_event_bytes {
        return Err(Refusal::EventTooLarge {
            stream: shown(stream),
            size,
            max: limits.max_event_bytes,
        });
    }
    Ok(size)
}

/// The path (`/a/0/b`) of the first string or object key holding U+0000, if any.
pub fn nul_path(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if s.contains('\0') => Some(String::new()),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, v)| nul_path(v).map(|p| format!("/{i}{p}"))),
        Value::Object(map) => map.iter().find_map(|(k, v)| {
            if k.contains('\0') {
                Some(format!("/{}", k.replace('\0', "\\u0000")))
            } else {
                nul_path(v).map(|p| format!("/{k}{p}"))
            }
        }),
        _ => None,
    }
}

/// The length of `value` as compact JSON, without building the text (contexts that refuse a
/// payload before it reaches the log measure it the same way).
pub fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, value) {
        Ok(()) => count.0,
        // A Value always serialises; count it as too large rather than let it through.
        Err(_) => usize::MAX / 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stream() -> StreamName {
        StreamName::new("atlas", "section", "s1").expect("stream")
    }

    #[test]
    fn a_payload_is_counted_as_its_compact_json_text() {
        let value = json!({"data": "é\"x", "n": [1, 2.5, null], "nested": {"k": true}});
        assert_eq!(json_len(&value), value.to_string().len());
    }

    #[test]
    fn nul_is_found_in_nested_strings_and_keys() {
        assert_eq!(nul_path(&json!({"a": [1, "x\u{0}"]})), Some("/a/1".into()));
        assert_eq!(nul_path(&json!({"k\u{0}": 1})), Some("/k\\u0000".into()));
        assert_eq!(nul_path(&json!({"a": ["fine", {"b": "ok"}]})), None);
    }

    #[test]
    fn an_event_over_the_limit_is_refused_and_one_under_it_is_not() {
        let limits = Limits {
            max_event_bytes: 4096,
            max_append_bytes: 1 << 20,
        };
        let small = NewEvent::new("T", 1, json!({"text": "a".repeat(2000)}));
        let big = NewEvent::new("T", 1, json!({"text": "a".repeat(4096)}));
        let meta = Metadata::default();
        assert!(check_event(&stream(), &small, &meta, &limits).is_ok());
        let refused = check_event(&stream(), &big, &meta, &limits).expect_err("too big");
        assert!(refused.is_too_large(), "{refused}");
    }

    #[test]
    fn the_estimate_is_never_below_what_the_relay_publishes() {
        let event = NewEvent::new("SectionCreated", 1, json!({"title": "é\"\\ x".repeat(300)}));
        let meta = Metadata {
            actor: Some("ann".into()),
            ..Metadata::default()
        };
        let size = check_event(&stream(), &event, &meta, &Limits::default()).expect("ok");
        let recorded = palimpsest_events::RecordedEvent {
            event_id: event.event_id,
            stream: stream(),
            version: i64::MAX,
            position: i64::MAX,
            event_type: event.event_type.clone(),
            schema_version: i32::MAX,
            payload: event.payload.clone(),
            metadata: meta,
            recorded_at: chrono::Utc::now(),
            prev_hash: Some("0".repeat(64)),
            hash: "0".repeat(64),
        };
        let published = serde_json::to_vec(&recorded).expect("json").len() + 300;
        assert!(size >= published, "{size} < {published}");
    }
}
