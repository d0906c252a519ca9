//! `GET /pads/api/openapi.json`: the API description in the form Etherpad serves at
//! `/api/openapi.json` (OpenAPI 3.0.2; one path per function, `GET` and `POST` alike, operation
//! ids `<function>UsingGET`/`UsingPOST`, the function's parameters as query parameters, tags
//! `group`/`author`/`session`/`pad`, `{code, message, data}` answers), covering every function
//! of API version 1.3.0 that this server answers.
//!
//! Where it differs from Etherpad's, it does so to say what this server does:
//! - the security scheme is the `apikey` query parameter (Etherpad 2.5.3 declares only its
//!   OpenID Connect scheme, even when it runs with API keys);
//! - `data` schemas describe what each function answers here (Etherpad's describe a few
//!   answers wrongly, e.g. `getSessionInfo`, and leave most untyped), and `data` is nullable: a
//!   refusal is code 1 with status 200 and `data: null`, as in Etherpad;
//! - every write takes an optional `Idempotency-Key` header (a repeat returns the first answer),
//!   and may answer 409 (a concurrent change that kept conflicting), 422 (a key reused with
//!   another request) or 503; a malformed key is refused before the API with the platform's
//!   400 `{"error": …}`;
//! - parameters are strings without U+0000 (refused with code 1: the log cannot keep it);

use super::versions::{LATEST, functions};
use axum::Json;
use serde_json::{Map, Value, json};

/// The functions that only read (no `Idempotency-Key`, no 409/422).
const READS: &[&str] = &[
    "listPads",
    "listPadsOfAuthor",
    "getSessionInfo",
    "listSessionsOfGroup",
    "listSessionsOfAuthor",
    "getText",
    "getHTML",
    "getAttributePool",
    "getRevisionsCount",
    "getSavedRevisionsCount",
    "listSavedRevisions",
    "getRevisionChangeset",
    "getLastEdited",
    "getReadOnlyID",
    "getPadID",
    "getPublicStatus",
    "listAuthorsOfPad",
    "padUsersCount",
    "getAuthorName",
    "padUsers",
    "listAllPads",
    "listAllGroups",
    "getChatHistory",
    "getChatHead",
    "getStats",
    "checkToken",
    "createDiffHTML",
];

/// Every parameter is text without U+0000: the log cannot keep it, so a NUL is refused with
/// code 1 before anything is read or written.
const NO_NUL: &str = "^[^\\u0000]*$";

fn string() -> Value {
    json!({"type": "string"})
}

fn strings() -> Value {
    json!({"type": "array", "items": {"type": "string"}})
}

fn object(properties: Value) -> Value {
    json!({"type": "object", "properties": properties})
}

/// The tag Etherpad files `function` under (`pad` for those it leaves untagged).
fn tag(function: &str) -> &'static str {
    match function {
        "createGroup"
        | "createGroupIfNotExistsFor"
        | "deleteGroup"
        | "listPads"
        | "createGroupPad"
        | "listSessionsOfGroup"
        | "listAllGroups" => "group",
        "createAuthor"
        | "createAuthorIfNotExistsFor"
        | "listPadsOfAuthor"
        | "listSessionsOfAuthor"
        | "getAuthorName" => "author",
        "createSession" | "deleteSession" | "getSessionInfo" => "session",
        _ => "pad",
    }
}

/// What `data` holds when `function` answers code 0.
fn data(function: &str) -> Value {
    let session = object(
        json!({"groupID": string(), "authorID": string(), "validUntil": {"type": "integer"}}),
    );
    match function {
        "createGroup" | "createGroupIfNotExistsFor" => object(json!({"groupID": string()})),
        "createGroupPad" => object(json!({"padID": string()})),
        "createAuthor" | "createAuthorIfNotExistsFor" => object(json!({"authorID": string()})),
        "createSession" => object(json!({"sessionID": string()})),
        "getSessionInfo" => session,
        "listSessionsOfGroup" | "listSessionsOfAuthor" => {
            json!({"type": "object", "nullable": true, "additionalProperties": session})
        }
        "listPads" | "listPadsOfAuthor" | "listAllPads" => object(json!({"padIDs": strings()})),
        "listAllGroups" => object(json!({"groupIDs": strings()})),
        "listAuthorsOfPad" => object(json!({"authorIDs": strings()})),
        "getText" => object(json!({"text": string()})),
        "getHTML" => object(json!({"html": string()})),
        "createDiffHTML" => object(json!({"html": string(), "authors": strings()})),
        "getAttributePool" => object(json!({"pool": {"type": "object"}})),
        "getRevisionsCount" => object(json!({"revisions": {"type": "integer"}})),
        "getSavedRevisionsCount" => object(json!({"savedRevisions": {"type": "integer"}})),
        "listSavedRevisions" => {
            object(json!({"savedRevisions": {"type": "array", "items": {"type": "integer"}}}))
        }
        "getLastEdited" => object(json!({"lastEdited": {"type": "integer"}})),
        "getReadOnlyID" => object(json!({"readOnlyID": string()})),
        "getPadID" => object(json!({"padID": string()})),
        "getPublicStatus" => object(json!({"publicStatus": {"type": "boolean"}})),
        "padUsersCount" => object(json!({"padUsersCount": {"type": "integer"}})),
        "padUsers" => object(json!({"padUsers": {"type": "array", "items": {"type": "object"}}})),
        "getChatHistory" => object(
            json!({"messages": {"type": "array", "items": {"$ref": "#/components/schemas/Message"}}}),
        ),
        "getAuthorName" => {
            json!({"type": "string", "description": "the name itself, null if none"})
        }
        "getRevisionChangeset" => {
            json!({"type": "string", "description": "the revision's changeset itself (Z:…)"})
        }
        "getChatHead" => object(json!({"chatHead": {"type": "integer"}})),
        "getStats" => object(
            json!({"totalPads": {"type": "integer"}, "totalSessions": {"type": "integer"}, "totalActivePads": {"type": "integer"}}),
        ),
        _ => json!({"type": "object", "nullable": true, "example": null}),
    }
}

/// The answer envelope with `data` as given (nullable: refusals carry `data: null`).
fn envelope(data: Value, code: i64, message: &str, description: &str) -> Value {
    let mut data = data;
    if let Value::Object(m) = &mut data {
        m.insert("nullable".into(), json!(true));
    }
    json!({"description": description, "content": {"application/json": {"schema": {
        "type": "object",
        "properties": {
            "code": {"type": "integer", "example": code},
            "message": {"type": "string", "example": message},
            "data": data
        },
        "required": ["code", "message", "data"]
    }}}})
}

/// A 400 of a write: the API's refusal (code 1), or the platform's own `{"error": …}` when the
/// `Idempotency-Key` header is malformed (checked before the API reads the request).
fn malformed_key_or(api_error: Value) -> Value {
    let envelope = api_error["content"]["application/json"]["schema"].clone();
    json!({
        "description": "generic api error (code 1), or a malformed Idempotency-Key ({\"error\": message})",
        "content": {"application/json": {"schema": {
            "anyOf": [envelope, palimpsest_web::command::platform_error_schema()]
        }}}
    })
}

fn operation(function: &str, params: &[&str], method: &str) -> Value {
    let mut parameters: Vec<Value> = params
        .iter()
        .map(|p| json!({"$ref": format!("#/components/parameters/{p}")}))
        .collect();
    let error = || json!({"$ref": "#/components/responses/ApiError"});
    let mut responses = Map::new();
    responses.insert(
        "200".into(),
        envelope(
            data(function),
            0,
            "ok",
            "ok (code 0), or a refusal (code 1, data null)",
        ),
    );
    for (status, reference) in [
        ("400", "ApiError"),
        ("401", "Unauthorized"),
        ("404", "NotFound"),
        ("500", "InternalError"),
    ] {
        responses.insert(
            status.into(),
            json!({"$ref": format!("#/components/responses/{reference}")}),
        );
    }
    if !READS.contains(&function) {
        parameters.push(json!({"$ref": "#/components/parameters/Idempotency-Key"}));
        responses.insert(
            "400".into(),
            json!({"$ref": "#/components/responses/ApiErrorOrMalformedKey"}),
        );
        for status in ["409", "422", "503"] {
            responses.insert(status.into(), error());
        }
    }
    let mut op = json!({
        "operationId": format!("{function}Using{method}"),
        "summary": function,
        "tags": [tag(function)],
        "parameters": parameters,
        "responses": responses,
    });
    if let Some(text) = description(function) {
        op["description"] = json!(text);
    }
    op
}

/// What a function does where this server's answer needs saying.
fn description(function: &str) -> Option<&'static str> {
    match function {
        "createDiffHTML" => Some(
            "The changes from startRev to endRev (absent or 0: the head; both clamped to the head) \
             as HTML, as Etherpad 1.9.7 renders them: a <style> block with each author's colour, \
             then the lines, removed text in <span class=\"removed\">, each author's changes in \
             <span class=\"authora_…\">. authors lists the authors of the changes. A missing \
             startRev or an endRev before it is code 1 \"Invalid revision range. …\".",
        ),
        _ => None,
    }
}

fn components() -> Value {
    let mut parameters = Map::new();
    for (_, params) in functions(LATEST) {
        for p in params {
            parameters.insert(
                (*p).to_owned(),
                json!({"name": p, "in": "query", "schema": {"type": "string", "pattern": NO_NUL}}),
            );
        }
    }
    parameters.insert(
        "Idempotency-Key".into(),
        palimpsest_web::command::idempotency_key_parameter(),
    );
    let failure = |code: i64, message: &str, description: &str| {
        envelope(
            json!({"type": "object", "example": null}),
            code,
            message,
            description,
        )
    };
    json!({
        "parameters": parameters,
        "schemas": {
            "Message": object(json!({"text": string(), "userId": {"type": "string", "nullable": true},
                "time": {"description": "milliseconds, or the text the caller sent"},
                "userName": {"type": "string", "nullable": true}}))
        },
        "responses": {
            "ApiError": failure(1, "error message", "generic api error (code 1)"),
            "Unauthorized": failure(4, "no or wrong API Key", "no or wrong API key (code 4)"),
            "NotFound": failure(3, "no such function", "no such function or version (code 3)"),
            "InternalError": failure(2, "internal error", "internal api error (code 2)"),
            "ApiErrorOrMalformedKey": malformed_key_or(failure(1, "error message", "generic api error (code 1)")),
        },
        "securitySchemes": {"ApiKey": {"type": "apiKey", "in": "query", "name": "apikey"}}
    })
}

/// The document.
pub fn document() -> Value {
    let mut paths = Map::new();
    for (function, params) in functions(LATEST) {
        paths.insert(
            format!("/{function}"),
            json!({
                "get": operation(function, params, "GET"),
                "post": operation(function, params, "POST"),
            }),
        );
    }
    json!({
        "openapi": "3.0.2",
        "info": {
            "title": "Etherpad API",
            "description": "Etherpad's HTTP API as Palimpsest serves it: pads, groups, authors and sessions kept as events.",
            "version": LATEST,
        },
        "paths": paths,
        "components": components(),
        "security": [{"ApiKey": []}],
        "servers": [{"url": format!("/pads/api/{LATEST}")}],
    })
}

/// `GET /pads/api/openapi.json`.
pub async fn serve() -> Json<Value> {
    Json(document())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture() -> Value {
        serde_json::from_str(include_str!("../../tests/fixtures/etherpad/openapi.json"))
            .expect("fixture")
    }

    #[test]
    fn every_function_etherpad_lists_is_here_with_its_parameters_and_tag() {
        let ours = document();
        let theirs = fixture();
        for (path, item) in theirs["paths"].as_object().expect("paths") {
            let op = &ours["paths"][path]["get"];
            assert!(op.is_object(), "{path} missing");
            assert_eq!(op["operationId"], item["get"]["operationId"], "{path}");
            let names = |o: &Value, inline: bool| -> Vec<String> {
                o["parameters"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| {
                        if inline {
                            p["name"].as_str().map(str::to_owned)
                        } else {
                            p["$ref"]
                                .as_str()
                                .and_then(|r| r.rsplit('/').next())
                                .map(str::to_owned)
                        }
                    })
                    .filter(|n| n != "Idempotency-Key")
                    .collect()
            };
            assert_eq!(names(op, false), names(&item["get"], true), "{path}");
            if let Some(tags) = item["get"]["tags"].as_array() {
                assert_eq!(op["tags"].as_array(), Some(tags), "{path}");
            }
        }
        let count = ours["paths"].as_object().map(Map::len);
        assert_eq!(count, Some(functions(LATEST).len()));
        assert_eq!(
            count,
            theirs["paths"].as_object().map(Map::len),
            "no more, no fewer"
        );
    }
}
