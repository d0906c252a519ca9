//! The OpenAPI 3.1 description of the `/v1` routes an operator and the console read (the log,
//! streams, chain verification, the pipeline's state), served at `/v1/openapi.json` and fuzzed
//! with the contexts' documents.

use axum::Json;
use axum::Router;
use axum::routing::get;
use serde_json::{Value, json};

/// `GET /v1/openapi.json`, open to anyone (it says what the routes are, not what they hold).
pub fn router() -> Router {
    Router::new().route("/v1/openapi.json", get(|| async { Json(document()) }))
}

fn query(name: &str, schema: Value, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": false, "schema": schema,
           "description": description})
}

/// A stream name's context or category.
const WORD: &str = "^[a-z0-9_-]{1,64}$";

/// A stream as `context/category/key` (a key of at most 256 characters: 1,024 bytes at most).
const STREAM: &str = "^[a-z0-9_-]{1,64}/[a-z0-9_-]{1,64}/.{1,256}$";

/// The times the routes read: `2026-11-27`, `2026-11-27T10:03` (UTC) or RFC 3339 in UTC.
const TIME: &str = "^(19|20)[0-9]{2}-(0[1-9]|1[0-2])-(0[1-9]|1[0-9]|2[0-8])\
                    (T([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\\.[0-9]{1,6})?Z)?)?$";

fn path(name: &str, pattern: Option<&str>) -> Value {
    let schema = match pattern {
        Some(p) => json!({"type": "string", "pattern": p}),
        None => json!({"type": "string", "minLength": 1, "maxLength": 256}),
    };
    json!({"name": name, "in": "path", "required": true, "schema": schema})
}

fn limit() -> Value {
    query(
        "limit",
        json!({"type": "integer", "minimum": 1, "maximum": 1000}),
        "At most this many (default 100).",
    )
}

fn answers(ok: Value, not_found: bool) -> Value {
    let error = json!({"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}});
    let mut responses = json!({
        "200": {"description": "The answer.", "content": {"application/json": {"schema": ok}}},
        "400": error.clone(),
        "401": error.clone(),
        "503": error.clone(),
    });
    for (code, why) in [
        ("400", "A parameter is not what it should be (it is named)."),
        ("401", "No valid admin bearer token."),
        ("503", "The log or a read database is unavailable."),
    ] {
        responses[code]["description"] = json!(why);
    }
    if not_found {
        responses["404"] = error;
        responses["404"]["description"] = json!("No such stream (at that time).");
    }
    responses
}

fn page_of(items: &str) -> Value {
    json!({"type": "object", "required": [items, "next_after"],
           "properties": {items: {"type": "array", "items": {"type": "object"}}}})
}

fn get_op(summary: &str, parameters: Vec<Value>, ok: Value, not_found: bool) -> Value {
    json!({"get": {"summary": summary, "parameters": parameters,
                   "security": [{"admin": []}], "responses": answers(ok, not_found)}})
}

/// The document.
pub fn document() -> Value {
    let time = json!({"type": "string", "pattern": TIME});
    let text = json!({"type": "string"});
    let stream = json!({"type": "string", "pattern": STREAM});
    let position = json!({"type": "integer", "format": "int64"});
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Palimpsest /v1: the log, streams and the pipeline", "version": "1"},
        "paths": {
            "/v1/head": get_op("The log's head position and identity.", vec![],
                json!({"type": "object", "required": ["position", "log_id"]}), false),
            "/v1/events": get_op("Events after a position, filtered (all filters combine with AND).", vec![
                query("after", position.clone(), "Events after this position."),
                limit(),
                query("context", text.clone(), "Only this context's events."),
                query("stream", stream.clone(), "Only this stream's, as context/category/key."),
                query("type", text.clone(), "Only events of this type."),
                query("correlation_id", json!({"type": "string", "format": "uuid"}), "Only events with this correlation id."),
                query("since", time.clone(), "Recorded at or after this time (RFC 3339)."),
                query("until", time.clone(), "Recorded at or before this time."),
            ], page_of("events"), false),
            "/v1/streams": get_op("Streams whose name starts with a prefix, in name order.", vec![
                query("prefix", text.clone(), "Only streams whose context/category/key starts with this."),
                query("after", stream.clone(), "Streams after this one (the last page's next_after)."),
                limit(),
            ], page_of("streams"), false),
            "/v1/streams/{context}/{category}/{key}": get_op("A stream's events after a version, as it was at a time.", vec![
                path("context", Some(WORD)), path("category", Some(WORD)), path("key", None),
                query("after", position.clone(), "Events after this version."),
                limit(),
                query("at", time, "The stream as it was at this time."),
            ], json!({"type": "object", "required": ["stream", "events", "next_after"]}), true),
            "/v1/state/{context}/{category}/{key}": get_op("A stream's state as of a version or a time, folded by its context (null for a stream its context does not fold).", vec![
                path("context", Some(WORD)), path("category", Some(WORD)), path("key", None),
                query("version", json!({"type": "integer", "minimum": 1, "format": "int64"}), "Fold its first this many events."),
                query("at", json!({"type": "string", "pattern": TIME}), "Fold only the events recorded at or before this time."),
            ], json!({"type": "object", "required": ["stream", "version", "recorded_at", "state"]}), true),
            "/v1/audit/verify": get_op("Checks the hash chains (of one stream, or of the whole log).", vec![
                query("stream", stream, "Only this stream, as context/category/key."),
            ], json!({"type": "object", "required": ["ok", "report"], "properties": {"ok": {"type": "boolean"}}}), false),
            "/v1/operations": get_op("The pipeline: the log's head, the relay, every read model's checkpoint and lag.", vec![],
                json!({"type": "object", "required": ["log_id", "head", "durable", "relay", "relay_positions", "read_models"],
                       "properties": {"read_models": {"type": "array", "items": {
                           "type": "object", "required": ["name", "position", "lag", "updated_at", "stalled"]}}}}), false),
        },
        "components": {
            "securitySchemes": {"admin": {"type": "http", "scheme": "bearer"}},
            "schemas": {"Error": {"type": "object", "required": ["error"],
                                   "properties": {"error": {"type": "string"}}}},
        },
    })
}
