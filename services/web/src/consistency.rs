//! What one request must see: the log position its reads must reflect.
//!
//! A read model may be read from a streaming replica (`--read-replica-url`), which replays the
//! read database some time after it commits. A client that wrote must still read its write: a
//! write's answer says where its events are (header [`POSITION_HEADER`]), the client names that
//! position on its next requests (the same header), and the request's reads take a replica
//! connection only once that replica has replayed the read model's checkpoint past it
//! ([`crate::read_pool`]). A request's own appends raise what it must see, so a route that
//! reads after it wrote reads its write too.
//!
//! The request's needs live in a task-local value set by [`track`] around the routes: the
//! handlers and the command runner reach it without a parameter in every signature. Work
//! outside a request (background tasks) has none and reads the primary.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// The header carrying a log position: on a write's answer, where its events are; on a
/// request, the position its reads must reflect.
pub const POSITION_HEADER: &str = "palimpsest-position";

/// The methods whose operations may read (all of them may name a position).
const METHODS: [&str; 6] = ["get", "head", "post", "put", "patch", "delete"];

/// The methods whose operations are commands (their answers may name a position).
const WRITE_METHODS: [&str; 4] = ["post", "put", "patch", "delete"];

/// Documents [`POSITION_HEADER`] in a context's OpenAPI document, as [`track`] serves it: every
/// operation may name the position its reads must reflect, and a write's successful answer
/// names the position it appended. Each context passes the document it serves through this, so
/// a client generated from any of them knows the header.
pub fn document_positions(mut spec: Value) -> Value {
    let Some(paths) = spec.get_mut("paths").and_then(Value::as_object_mut) else {
        return spec;
    };
    for item in paths.values_mut() {
        for method in METHODS {
            let Some(operation) = item.get_mut(method).and_then(Value::as_object_mut) else {
                continue;
            };
            if let Value::Array(list) = operation
                .entry("parameters")
                .or_insert_with(|| Value::Array(Vec::new()))
            {
                list.push(position_parameter());
            }
            if WRITE_METHODS.contains(&method)
                && let Some(responses) = operation
                    .get_mut("responses")
                    .and_then(Value::as_object_mut)
            {
                document_answers(responses);
            }
        }
    }
    spec
}

/// The request header: the position this request's reads must reflect.
fn position_parameter() -> Value {
    json!({
        "name": "Palimpsest-Position",
        "in": "header",
        "required": false,
        "description": "A log position this request's reads must reflect (the one a write's answer named): read from a replica only once it has replayed that far, else from the primary. Anything but a position is ignored.",
        "schema": {"type": "string", "pattern": "^[0-9]{1,18}$"}
    })
}

/// The answer header on each successful answer written out in place (a `$ref` answer is
/// shared and left as it is).
fn document_answers(responses: &mut serde_json::Map<String, Value>) {
    for (status, answer) in responses.iter_mut() {
        if !status.starts_with('2') {
            continue;
        }
        let Some(answer) = answer.as_object_mut().filter(|a| !a.contains_key("$ref")) else {
            continue;
        };
        if let Value::Object(headers) = answer
            .entry("headers")
            .or_insert_with(|| Value::Object(Default::default()))
        {
            headers.insert(
                "Palimpsest-Position".into(),
                json!({
                    "description": "The last log position this write appended (absent when it appended nothing): name it on later requests to read this write from any replica.",
                    "schema": {"type": "integer", "minimum": 1}
                }),
            );
        }
    }
}

/// What the current request must see, and what it appended.
#[derive(Debug, Default)]
struct Needs {
    /// The position its reads must reflect (0: nothing in particular).
    position: AtomicI64,
    /// The last position it appended (0: none).
    appended: AtomicI64,
}

tokio::task_local! {
    static NEEDS: Arc<Needs>;
}

/// Runs the request in a scope holding the position it names, and answers the position it
/// appended (if it did) in [`POSITION_HEADER`]. A header that is not a position is ignored:
/// the request then names none.
pub async fn track(request: Request, next: Next) -> Response {
    let named = request
        .headers()
        .get(POSITION_HEADER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or(0);
    let needs = Arc::new(Needs {
        position: AtomicI64::new(named.max(0)),
        appended: AtomicI64::new(0),
    });
    let mut response = NEEDS.scope(needs.clone(), next.run(request)).await;
    let appended = needs.appended.load(Ordering::Acquire);
    if appended > 0 {
        response
            .headers_mut()
            .insert(POSITION_HEADER, HeaderValue::from(appended));
    }
    response
}

/// The position the current request's reads must reflect; `None` outside a request.
pub fn needed() -> Option<i64> {
    NEEDS
        .try_with(|needs| needs.position.load(Ordering::Acquire))
        .ok()
}

/// Records that the current request appended up to `position`: its later reads must reflect
/// it, and its answer tells the client. Outside a request, nothing.
pub fn appended(position: i64) {
    // Outside a request (a background task, a tool) there is no one to tell.
    let _outside = NEEDS.try_with(|needs| {
        needs.position.fetch_max(position, Ordering::AcqRel);
        needs.appended.fetch_max(position, Ordering::AcqRel);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_operation_may_name_a_position_and_a_write_answers_one() {
        let spec = document_positions(json!({"paths": {
            "/a": {"get": {"responses": {"200": {}}}, "post": {"responses": {"201": {}, "409": {}}}},
            "/b": {"put": {"responses": {"200": {"$ref": "#/components/responses/Ok"}}}}
        }}));
        let a = &spec["paths"]["/a"];
        assert_eq!(a["get"]["parameters"][0]["name"], "Palimpsest-Position");
        assert!(a["get"]["responses"]["200"].get("headers").is_none());
        assert!(a["post"]["responses"]["201"]["headers"]["Palimpsest-Position"].is_object());
        assert!(a["post"]["responses"]["409"].get("headers").is_none());
        let shared = &spec["paths"]["/b"]["put"]["responses"]["200"];
        assert!(
            shared.get("headers").is_none(),
            "a $ref answer is left alone"
        );
    }
}
