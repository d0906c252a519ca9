//! How a context's typed events become envelopes and back.
//!
//! A context declares its payloads as one serde enum per stream kind; the variant name is the
//! envelope's `event_type` and the variant's fields are its `payload`. Consumers in other
//! languages read `event_type` and the JSON payload; Rust consumers decode with [`DomainEvent::decode`].

use crate::{NewEvent, RecordedEvent};
use serde::{Serialize, de::DeserializeOwned};
use serde_json::{Map, Value};

/// Why a recorded event could not be read as a context's payload type.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The event's type or payload does not match the Rust type.
    #[error("event {event_type} (schema {schema_version}) does not decode: {source}")]
    Payload {
        /// The envelope's event type.
        event_type: String,
        /// The envelope's schema version.
        schema_version: i32,
        /// serde's complaint.
        source: serde_json::Error,
    },
    /// Encoding side: the type must serialise as `{"type": ..., "data": ...}`.
    #[error("payload type must serialise as an adjacently tagged enum (type/data)")]
    NotTagged,
}

/// A context's event payload type. Implementors are serde enums declared with
/// `#[serde(tag = "type", content = "data")]`, so the variant name becomes the event type.
pub trait DomainEvent: Serialize + DeserializeOwned {
    /// The payload schema version written with new events.
    const SCHEMA_VERSION: i32 = 1;

    /// Turns the payload into an event ready to append.
    fn encode(&self) -> Result<NewEvent, DecodeError> {
        let value = serde_json::to_value(self).map_err(|_| DecodeError::NotTagged)?;
        let Value::Object(mut map) = value else {
            return Err(DecodeError::NotTagged);
        };
        let Some(Value::String(event_type)) = map.remove("type") else {
            return Err(DecodeError::NotTagged);
        };
        let payload = map.remove("data").unwrap_or(Value::Null);
        Ok(NewEvent::new(event_type, Self::SCHEMA_VERSION, payload))
    }

    /// Reads a recorded event as this payload type.
    fn decode(event: &RecordedEvent) -> Result<Self, DecodeError> {
        decode_parts(&event.event_type, event.schema_version, &event.payload)
    }
}

/// Decodes a payload given its type name, for callers that hold the parts rather than an envelope.
pub fn decode_parts<T: DeserializeOwned>(
    event_type: &str,
    schema_version: i32,
    payload: &Value,
) -> Result<T, DecodeError> {
    let mut map = Map::new();
    map.insert("type".into(), Value::String(event_type.to_owned()));
    if !payload.is_null() {
        map.insert("data".into(), payload.clone());
    }
    serde_json::from_value(Value::Object(map)).map_err(|source| DecodeError::Payload {
        event_type: event_type.to_owned(),
        schema_version,
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "type", content = "data")]
    enum Sample {
        Opened { by: String },
        Closed,
    }
    impl DomainEvent for Sample {}

    #[test]
    fn variant_name_becomes_event_type_and_back() {
        let e = Sample::Opened { by: "ann".into() }
            .encode()
            .expect("encode");
        assert_eq!(e.event_type, "Opened");
        assert_eq!(e.payload, serde_json::json!({"by": "ann"}));
        let back: Sample = decode_parts(&e.event_type, 1, &e.payload).expect("decode");
        assert_eq!(back, Sample::Opened { by: "ann".into() });
        let closed = Sample::Closed.encode().expect("encode");
        assert_eq!(closed.payload, Value::Null);
        assert_eq!(
            decode_parts::<Sample>("Closed", 1, &Value::Null).expect("decode"),
            Sample::Closed
        );
        assert!(decode_parts::<Sample>("Nope", 1, &Value::Null).is_err());
    }
}
