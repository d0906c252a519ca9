//! The machine-readable contract: JSON Schema (2020-12) of the envelope and of every event
//! type's payload, generated from the Rust types with `schemars`, never written by hand.
//!
//! [`registry`] lists every kind of stream (context, category, payload enum). Each payload enum
//! is serde-tagged by event type, so its schema is split into one schema per variant: the
//! payload of that event type at the enum's [`DomainEvent::SCHEMA_VERSION`]. [`catalogue`]
//! gives every file as kept in `events/schemas/` (`cargo run -p palimpsest-events --example
//! write-schemas` writes them; a test fails when they differ) and served at `/v1/schemas/…`.
//!
//! The schemas follow the Deserialize contract: they accept what the types read, every form
//! the log ever wrote included (readers ignore unknown fields, so no schema forbids them).

pub mod compat;

use crate::{DomainEvent, RecordedEvent, atlas, docs, pads, records, resources};
use schemars::{JsonSchema, SchemaGenerator, generate::SchemaSettings};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};

/// The JSON Schema dialect of every file.
pub const DIALECT: &str = "https://json-schema.org/draft/2020-12/schema";
/// The envelope's file, relative to the schema folder.
pub const ENVELOPE_PATH: &str = "envelope.v1.json";
/// The index's file, relative to the schema folder.
pub const INDEX_PATH: &str = "index.json";

/// One kind of stream: where its events are and the payload enum they decode to.
pub struct StreamKind {
    /// The bounded context (`pads`).
    pub context: &'static str,
    /// The kind of stream in it (`pad`).
    pub category: &'static str,
    /// The payload enum's schema version.
    pub schema_version: i32,
    /// The payload enum's whole schema (a `oneOf` of `{type, data}` objects).
    enum_schema: fn() -> Value,
}

/// The schema of one event type's payload at one schema version.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSchema {
    /// The bounded context.
    pub context: &'static str,
    /// The kind of stream it is appended to.
    pub category: &'static str,
    /// The envelope's `event_type`.
    pub event_type: String,
    /// The envelope's `schema_version`.
    pub schema_version: i32,
    /// The standalone schema of the envelope's `payload`.
    pub schema: Value,
}

impl EventSchema {
    /// Its file, relative to the schema folder: `<context>/<EventType>.v<version>.json`.
    pub fn path(&self) -> String {
        file_path(self.context, &self.event_type, self.schema_version)
    }
}

/// `<context>/<EventType>.v<version>.json`.
pub fn file_path(context: &str, event_type: &str, schema_version: i32) -> String {
    format!("{context}/{event_type}.v{schema_version}.json")
}

fn kind<T: DomainEvent + JsonSchema>(context: &'static str, category: &'static str) -> StreamKind {
    StreamKind {
        context,
        category,
        schema_version: T::SCHEMA_VERSION,
        enum_schema: || generator().root_schema_for::<T>().to_value(),
    }
}

fn generator() -> SchemaGenerator {
    SchemaSettings::draft2020_12().into_generator()
}

/// Every kind of stream of every context, with its payload enum: the one list the schemas, the
/// AsyncAPI document and the harness's validation come from. A new payload enum goes here.
pub fn registry() -> Vec<StreamKind> {
    vec![
        kind::<pads::PadEvent>(pads::CONTEXT, pads::PAD),
        kind::<pads::GroupEvent>(pads::CONTEXT, pads::GROUP),
        kind::<pads::AuthorEvent>(pads::CONTEXT, pads::AUTHOR),
        kind::<pads::SessionEvent>(pads::CONTEXT, pads::SESSION),
        kind::<pads::TokenEvent>(pads::CONTEXT, pads::TOKEN),
        kind::<pads::AuthorMapperEvent>(pads::CONTEXT, pads::AUTHOR_MAPPER),
        kind::<pads::GroupMapperEvent>(pads::CONTEXT, pads::GROUP_MAPPER),
        kind::<atlas::SectionEvent>("atlas", "section"),
        kind::<atlas::EntityEvent>("atlas", "entity"),
        kind::<atlas::GeometryEvent>("atlas", "geometry"),
        kind::<atlas::PublicationEvent>("atlas", "publication"),
        kind::<atlas::UserEvent>("atlas", "user"),
        kind::<docs::DatabaseEvent>("docs", "database"),
        kind::<docs::DocumentEvent>("docs", "document"),
        kind::<docs::LocalEvent>("docs", "local"),
        kind::<docs::AttachmentEvent>("docs", "attachment"),
        kind::<docs::UserEvent>("docs", "user"),
        kind::<docs::RoleEvent>("docs", "role"),
        kind::<records::ClassEvent>("records", "class"),
        kind::<records::DocumentEvent>("records", "doc"),
        kind::<records::UniqueEvent>("records", "unique"),
        kind::<records::TokenEvent>("records", "token"),
        kind::<records::FtpEvent>("records", "ftp"),
        kind::<records::TaskEvent>("records", "task"),
        kind::<resources::ResourceEvent>("resources", "resource"),
        kind::<resources::ContentEvent>("resources", "content"),
        kind::<resources::NameEvent>("resources", "name"),
        kind::<resources::IdsEvent>("resources", "ids"),
    ]
}

/// The contexts whose events the schemas cover, in the registry's order.
pub fn contexts() -> Vec<&'static str> {
    let mut seen = Vec::new();
    for k in registry() {
        if !seen.contains(&k.context) {
            seen.push(k.context);
        }
    }
    seen
}

impl StreamKind {
    /// One schema per event type of this kind's payload enum.
    pub fn event_schemas(&self) -> Vec<EventSchema> {
        let whole = (self.enum_schema)();
        let defs = whole.get("$defs").cloned().unwrap_or(Value::Null);
        let variants = whole.get("oneOf").and_then(Value::as_array);
        variants
            .into_iter()
            .flatten()
            .filter_map(|variant| self.split(variant, &defs))
            .collect()
    }

    /// The schema of one `{type, data}` variant's `data`, standing alone.
    fn split(&self, variant: &Value, defs: &Value) -> Option<EventSchema> {
        let event_type = variant.pointer("/properties/type/const")?.as_str()?;
        let data = variant
            .pointer("/properties/data")
            .cloned()
            .unwrap_or(json!({"type": "null"}));
        let body = inline_root_ref(data, defs);
        let mut schema = Map::new();
        schema.insert("$schema".into(), json!(DIALECT));
        schema.insert("title".into(), json!(event_type));
        if let Some(description) = variant.get("description") {
            schema.insert("description".into(), description.clone());
        }
        if let Value::Object(fields) = body {
            for (k, v) in fields {
                schema.entry(k).or_insert(v);
            }
        }
        let used = reachable_defs(&Value::Object(schema.clone()), defs);
        if !used.is_empty() {
            schema.insert("$defs".into(), Value::Object(used));
        }
        Some(EventSchema {
            context: self.context,
            category: self.category,
            event_type: event_type.to_owned(),
            schema_version: self.schema_version,
            schema: Value::Object(schema),
        })
    }
}

/// A schema that is only a `$ref` to a definition becomes that definition itself.
fn inline_root_ref(schema: Value, defs: &Value) -> Value {
    let target = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .and_then(|name| defs.get(name));
    match target {
        Some(def) if schema.as_object().is_some_and(|o| o.len() == 1) => def.clone(),
        _ => schema,
    }
}

/// The definitions `schema` refers to, directly or through other definitions.
fn reachable_defs(schema: &Value, defs: &Value) -> Map<String, Value> {
    let mut names = BTreeSet::new();
    let mut pending = refs_in(schema);
    while let Some(name) = pending.pop() {
        if names.insert(name.clone())
            && let Some(def) = defs.get(&name)
        {
            pending.extend(refs_in(def));
        }
    }
    names
        .into_iter()
        .filter_map(|n| defs.get(&n).map(|d| (n, d.clone())))
        .collect()
}

/// The names of the `#/$defs/…` references anywhere in `value`.
fn refs_in(value: &Value) -> Vec<String> {
    match value {
        Value::Object(map) => map
            .iter()
            .flat_map(|(k, v)| match (k.as_str(), v) {
                ("$ref", Value::String(r)) => r
                    .strip_prefix("#/$defs/")
                    .map(|n| vec![n.to_owned()])
                    .unwrap_or_default(),
                _ => refs_in(v),
            })
            .collect(),
        Value::Array(items) => items.iter().flat_map(refs_in).collect(),
        _ => Vec::new(),
    }
}

/// Every event type's schema, in the registry's order.
pub fn event_schemas() -> Vec<EventSchema> {
    registry()
        .iter()
        .flat_map(StreamKind::event_schemas)
        .collect()
}

/// The schema of the envelope as published (NATS messages, `/v1/events`).
pub fn envelope_schema() -> Value {
    let mut schema = generator().root_schema_for::<RecordedEvent>().to_value();
    if let Value::Object(map) = &mut schema {
        map.insert("title".into(), json!("Envelope"));
        map.insert(
            "description".into(),
            json!("An event as the log recorded it: what NATS messages and /v1/events carry."),
        );
    }
    schema
}

/// The index: one entry per event type and schema version (`context`, `category`,
/// `event_type`, `schema_version`, `path`), the envelope first.
pub fn index(events: &[EventSchema]) -> Value {
    let envelope = json!({
        "context": null, "category": null, "event_type": null,
        "schema_version": 1, "path": ENVELOPE_PATH,
    });
    let entries = events.iter().map(|e| {
        json!({
            "context": e.context,
            "category": e.category,
            "event_type": e.event_type,
            "schema_version": e.schema_version,
            "path": e.path(),
        })
    });
    Value::Array(std::iter::once(envelope).chain(entries).collect())
}

/// Every file of the schema folder by its relative path: the envelope, each event type, the
/// index.
pub fn catalogue() -> BTreeMap<String, Value> {
    let events = event_schemas();
    let mut files = BTreeMap::new();
    files.insert(ENVELOPE_PATH.to_owned(), envelope_schema());
    files.insert(INDEX_PATH.to_owned(), index(&events));
    for e in events {
        files.insert(e.path(), e.schema);
    }
    files
}

/// Every generated file under `events/`, by path relative to it, as text: `schemas/…` and
/// `asyncapi.yaml`. The example `write-schemas` writes them; a test compares them.
pub fn generated_files() -> BTreeMap<String, String> {
    let mut files: BTreeMap<String, String> = catalogue()
        .iter()
        .map(|(path, value)| (format!("schemas/{path}"), file_text(value)))
        .collect();
    let yaml = format!(
        "# Generated from the Rust types (palimpsest-events); do not edit.\n\
         # Regenerate: cargo run -p palimpsest-events --example write-schemas\n{}",
        crate::asyncapi::to_yaml(&crate::asyncapi::document())
    );
    files.insert("asyncapi.yaml".to_owned(), yaml);
    files
}

/// A file's text as kept in the repository: pretty JSON and a final line break.
pub fn file_text(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_type_of_a_context_has_one_schema() {
        let events = event_schemas();
        let paths: BTreeSet<String> = events.iter().map(EventSchema::path).collect();
        assert_eq!(
            paths.len(),
            events.len(),
            "an event type twice in a context"
        );
        let revision = events
            .iter()
            .find(|e| e.event_type == "RevisionAppended")
            .expect("pads' RevisionAppended");
        assert_eq!(revision.context, "pads");
        assert_eq!(revision.schema["type"], "object");
        assert!(revision.schema["required"].as_array().is_some());
    }

    #[test]
    fn a_tuple_variant_is_its_struct_with_the_definitions_it_uses() {
        let events = event_schemas();
        let committed = events
            .iter()
            .find(|e| e.event_type == "SectionCommitted")
            .expect("SectionCommitted");
        assert!(committed.schema["properties"]["snapshot_hash"].is_object());
        assert!(committed.schema["$defs"]["Timestamp"].is_object());
    }
}
