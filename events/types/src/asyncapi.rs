//! The AsyncAPI 3.0 document of the whole bus, generated from the same registry of types as the
//! JSON Schemas ([`crate::schema::registry`]): one channel per context and category with its
//! subject pattern, one message per event type (the envelope with that type's payload schema,
//! and the relay's headers), one `receive` operation per channel.
//!
//! Kept as `events/asyncapi.yaml` (written by `cargo run -p palimpsest-events --example
//! write-schemas`), served as `/v1/asyncapi.json`. Payload schemas are referenced relative to
//! the document (`schemas/<context>/<EventType>.v<N>.json`), which resolves to
//! `events/schemas/…` beside the file and to `/v1/schemas/…` beside the served document.

use crate::schema::{ENVELOPE_PATH, EventSchema, StreamKind, registry};
use crate::subject::DEFAULT_PREFIX as PREFIX;
use serde_json::{Map, Value, json};

/// The folder of the schemas, relative to the document.
const SCHEMAS: &str = "schemas";

/// The whole document.
pub fn document() -> Value {
    let kinds = registry();
    let mut channels = Map::new();
    let mut operations = Map::new();
    let mut messages = Map::new();
    for kind in &kinds {
        let id = channel_id(kind);
        let events = kind.event_schemas();
        channels.insert(id.clone(), channel(kind, &events));
        operations.insert(format!("receive-{id}"), operation(&id, &events));
        for e in &events {
            messages.insert(message_id(e), message(e));
        }
    }
    json!({
        "asyncapi": "3.0.0",
        "info": info(),
        "defaultContentType": "application/json",
        "servers": {"nats": server()},
        "channels": channels,
        "operations": operations,
        "components": {
            "messages": messages,
            "schemas": {"Headers": headers()},
        },
    })
}

fn info() -> Value {
    json!({
        "title": "Palimpsest events",
        "version": "1",
        "description": "Every event of the Palimpsest log, published by the relay to the \
            JetStream stream `PALIMPSEST` (subjects `{prefix}.>`) in log order: a message's \
            JetStream sequence is the event's log position. Each message is the event's \
            envelope (JSON); its `payload` follows the schema of its `event_type` and \
            `schema_version`. Consumer settings and decoding rules: events/README.md.",
    })
}

fn server() -> Value {
    json!({
        "host": "{host}",
        "protocol": "nats",
        "description": "A NATS server with JetStream; the stream is `PALIMPSEST` unless \
            PALIMPSEST_NATS_STREAM names another.",
        "variables": {
            "host": {"default": "127.0.0.1:4222", "description": "host:port of the NATS server"},
        },
    })
}

/// A channel's id: `<context>-<category>` (AsyncAPI ids allow no dot in every tool).
fn channel_id(kind: &StreamKind) -> String {
    format!("{}-{}", kind.context, kind.category)
}

/// A component message's id: `<context>-<EventType>` (event types repeat across contexts).
fn message_id(e: &EventSchema) -> String {
    format!("{}-{}", e.context, e.event_type)
}

fn channel(kind: &StreamKind, events: &[EventSchema]) -> Value {
    let messages: Map<String, Value> = events
        .iter()
        .map(|e| {
            let target = format!("#/components/messages/{}", message_id(e));
            (e.event_type.clone(), json!({"$ref": target}))
        })
        .collect();
    json!({
        "address": format!("{{prefix}}.{}.{}.{{key}}", kind.context, kind.category),
        "title": format!("{}/{}", kind.context, kind.category),
        "description": format!(
            "Events of the `{}/{}/<key>` streams, one subject per stream.",
            kind.context, kind.category
        ),
        "parameters": {
            "prefix": {
                "default": PREFIX,
                "description": "The deployment's subject prefix (PALIMPSEST_NATS_SUBJECT_PREFIX).",
            },
            "key": {
                "description": "The stream key, encoded: ASCII letters, digits and `-` as they \
                    are, every other UTF-8 byte as `_XX` (upper-case hex).",
            },
        },
        "messages": messages,
    })
}

fn operation(channel_id: &str, events: &[EventSchema]) -> Value {
    let messages: Vec<Value> = events
        .iter()
        .map(|e| json!({"$ref": format!("#/channels/{channel_id}/messages/{}", e.event_type)}))
        .collect();
    json!({
        "action": "receive",
        "channel": {"$ref": format!("#/channels/{channel_id}")},
        "summary": "Consume with a durable pull consumer, explicit ack; the ack floor is a log position.",
        "messages": messages,
    })
}

fn message(e: &EventSchema) -> Value {
    let summary = e
        .schema
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut message = json!({
        "name": e.event_type,
        "title": format!("{} ({}/{}, schema {})", e.event_type, e.context, e.category, e.schema_version),
        "contentType": "application/json",
        "headers": {"$ref": "#/components/schemas/Headers"},
        "correlationId": {"location": "$message.payload#/metadata/correlation_id"},
        "payload": envelope_of(e),
    });
    if !summary.is_empty() {
        message["summary"] = json!(summary);
    }
    message
}

/// The envelope with this event type, schema version and payload schema.
fn envelope_of(e: &EventSchema) -> Value {
    json!({
        "allOf": [
            {"$ref": format!("{SCHEMAS}/{ENVELOPE_PATH}")},
            {
                "type": "object",
                "properties": {
                    "stream": {"type": "object", "properties": {
                        "context": {"const": e.context},
                        "category": {"const": e.category},
                    }},
                    "event_type": {"const": e.event_type},
                    "schema_version": {"const": e.schema_version},
                    "payload": {"$ref": format!("{SCHEMAS}/{}", e.path())},
                },
            },
        ],
    })
}

/// The headers the relay sets on every message.
fn headers() -> Value {
    json!({
        "type": "object",
        "required": ["Nats-Msg-Id", "Palimpsest-Event-Type", "Palimpsest-Stream", "Palimpsest-Log-Id"],
        "properties": {
            "Nats-Msg-Id": {
                "type": "string", "format": "uuid",
                "description": "The event id (uuid v7); JetStream refuses a repeat.",
            },
            "Palimpsest-Event-Type": {"type": "string", "description": "The envelope's event_type."},
            "Palimpsest-Stream": {
                "type": "string",
                "description": "context/category/key, the key's `%` and control characters \
                    written %XX per UTF-8 byte; the payload's stream.key is the exact key.",
            },
            "Palimpsest-Log-Id": {
                "type": "string", "format": "uuid",
                "description": "The identity of the log the event belongs to: keep it with the ack floor.",
            },
        },
    })
}

/// `value` as YAML (block style; strings quoted as JSON when they are not plain words), the
/// form kept in `events/asyncapi.yaml`.
pub fn to_yaml(value: &Value) -> String {
    let mut out = String::new();
    write_yaml(&mut out, value, 0);
    out
}

fn write_yaml(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                out.push_str(&" ".repeat(indent));
                out.push_str(&scalar_text(&Value::String(k.clone())));
                out.push(':');
                write_child(out, v, indent);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&" ".repeat(indent));
                out.push('-');
                write_item(out, item, indent);
            }
        }
        other => {
            out.push_str(&scalar_text(other));
            out.push('\n');
        }
    }
}

/// A mapping's value: on the same line when scalar, indented below otherwise.
fn write_child(out: &mut String, v: &Value, indent: usize) {
    if is_block(v) {
        out.push('\n');
        write_yaml(out, v, indent + 2);
    } else {
        out.push(' ');
        write_yaml(out, v, 0);
    }
}

/// A sequence item: a mapping starts on the dash's line.
fn write_item(out: &mut String, item: &Value, indent: usize) {
    if !is_block(item) {
        out.push(' ');
        write_yaml(out, item, 0);
        return;
    }
    let mut nested = String::new();
    write_yaml(&mut nested, item, indent + 2);
    out.push(' ');
    out.push_str(nested.trim_start_matches(' '));
}

fn is_block(v: &Value) -> bool {
    match v {
        Value::Object(m) => !m.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    }
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::Object(_) => "{}".to_owned(),
        Value::Array(_) => "[]".to_owned(),
        Value::String(s) if plain(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A string YAML reads back as the same string without quotes.
fn plain(s: &str) -> bool {
    let reserved = ["true", "false", "null", "yes", "no", "on", "off", "y", "n"];
    let mut chars = s.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$');
    first_ok
        && chars.all(|c| c.is_ascii_alphanumeric() || "_$./-".contains(c))
        && !reserved.contains(&s.to_ascii_lowercase().as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_nests_maps_and_lists_and_quotes_what_is_not_a_plain_word() {
        let value = json!({
            "a": {"b": [1, {"c": "x y", "d": "ok"}, []], "e": "#/ref"},
            "f": "true", "g": {}, "h": null,
        });
        let expected = "a:\n  b:\n    - 1\n    - c: \"x y\"\n      d: ok\n    - []\n  e: \"#/ref\"\nf: \"true\"\ng: {}\nh: null\n";
        assert_eq!(to_yaml(&value), expected);
    }

    #[test]
    fn every_event_type_is_a_message_of_its_channel() {
        let doc = document();
        let pad = &doc["channels"]["pads-pad"];
        assert_eq!(pad["address"], "{prefix}.pads.pad.{key}");
        assert!(pad["messages"]["RevisionAppended"].is_object());
        let message = &doc["components"]["messages"]["pads-RevisionAppended"];
        assert_eq!(
            message["payload"]["allOf"][1]["properties"]["payload"]["$ref"],
            "schemas/pads/RevisionAppended.v1.json"
        );
    }
}
