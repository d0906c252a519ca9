//! What every context's OpenAPI document says about the command path: each write operation
//! takes an `Idempotency-Key` header, and answers 422 when the key was used for another
//! request. Contexts pass their document through [`document_commands`] so none forgets it.

use serde_json::{Value, json};

/// What a valid key looks like on the wire: optional whitespace, then 1-200 visible ASCII
/// characters (spaces only inside), then optional whitespace.
const KEY_PATTERN: &str = "^[ \\t]*[!-~]([ -~]{0,198}[!-~])?[ \\t]*$";

/// The HTTP methods whose operations are commands.
const WRITE_METHODS: [&str; 4] = ["post", "put", "patch", "delete"];

/// Adds the `Idempotency-Key` header and the 422 answer to every write operation of `spec`.
pub fn document_commands(mut spec: Value) -> Value {
    let Some(paths) = spec.get_mut("paths").and_then(Value::as_object_mut) else {
        return spec;
    };
    for item in paths.values_mut() {
        for method in WRITE_METHODS {
            if let Some(operation) = item.get_mut(method).and_then(Value::as_object_mut) {
                document_operation(operation);
            }
        }
    }
    spec
}

/// The `Idempotency-Key` header parameter as [`fingerprint_requests`](super::fingerprint_requests)
/// accepts it (1-200 visible ASCII characters, spaces inside, surrounding spaces and tabs
/// dropped as HTTP's optional whitespace), for every document: a key outside this is refused
/// with 400 before any context sees the request.
pub fn idempotency_key_parameter() -> Value {
    json!({
        "name": "Idempotency-Key",
        "in": "header",
        "required": false,
        "description": "Names this command so it can be retried safely: a repeat with the same key and the same request answers the first answer again and appends nothing; the same key with another request is a 422.",
        "schema": {"type": "string", "pattern": KEY_PATTERN}
    })
}

/// The body of an error the platform answers by itself, before a context's handler (a malformed
/// `Idempotency-Key`, a body over the limit, a timeout): `{"error": message}`.
pub fn platform_error_schema() -> Value {
    json!({"type": "object", "required": ["error"], "properties": {"error": {"type": "string"}}})
}

fn document_operation(operation: &mut serde_json::Map<String, Value>) {
    let parameters = operation
        .entry("parameters")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Value::Array(list) = parameters
        && !list.iter().any(|p| p["name"] == "Idempotency-Key")
    {
        list.push(idempotency_key_parameter());
    }
    let responses = operation
        .entry("responses")
        .or_insert_with(|| Value::Object(Default::default()));
    if let Value::Object(map) = responses {
        map.entry("400").or_insert_with(|| {
            json!({
                "description": "The request was malformed (for example its Idempotency-Key)",
                "content": {"application/json": {"schema": {}}}
            })
        });
        map.entry("422").or_insert_with(|| {
            json!({
                "description": "The Idempotency-Key was already used for a different request",
                "content": {"application/json": {"schema": platform_error_schema()}}
            })
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_write_operation_documents_the_key_and_reads_stay_as_they_are() {
        let spec = document_commands(json!({"paths": {
            "/a": {"get": {"responses": {}}, "post": {"responses": {"200": {}}}},
            "/b": {"delete": {"parameters": [{"name": "id", "in": "path"}]}}
        }}));
        assert!(spec["paths"]["/a"]["get"].get("parameters").is_none());
        assert_eq!(
            spec["paths"]["/a"]["post"]["parameters"][0]["name"],
            "Idempotency-Key"
        );
        assert!(spec["paths"]["/a"]["post"]["responses"]["422"].is_object());
        assert_eq!(
            spec["paths"]["/b"]["delete"]["parameters"][1]["in"],
            "header"
        );
    }
}
