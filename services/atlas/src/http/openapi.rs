//! The OpenAPI 3.1 description of the atlas routes, served at `/atlas/openapi.json`.

use axum::Json;
use serde_json::{Value, json};

fn error() -> Value {
    json!({"description": "Error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

/// The answers every operation may give besides its own: 400 (a NUL in the path or query, a
/// malformed parameter), and the platform's limits (413 body too large, 408 body too slow,
/// 503 request timeout), all `{"error"}`.
fn responses(own: Value) -> Value {
    let mut all = json!({"400": error(), "408": error(), "413": error(), "503": error()});
    if let (Some(all), Value::Object(own)) = (all.as_object_mut(), own) {
        all.extend(own);
    }
    all
}

/// The answers of a write: those of every operation, 415 for a body that is not JSON and 422
/// for an `Idempotency-Key` first used with another body.
fn write_responses(own: Value) -> Value {
    let mut all = responses(own);
    if let Some(all) = all.as_object_mut() {
        all.insert("415".into(), error());
        all.insert("422".into(), error());
    }
    all
}

/// A required text that must not be blank.
fn text() -> Value {
    json!({"type": "string", "minLength": 1, "pattern": "^[^\\u0000]*\\S[^\\u0000]*$"})
}

/// An optional text; `null` counts as absent.
fn optional_text() -> Value {
    json!({"type": ["string", "null"], "pattern": NO_NUL})
}

/// A required user id: non-blank text, or an integer (clients of the original send numbers).
fn user_id() -> Value {
    json!({"type": ["string", "integer"], "pattern": "^[^\\u0000]*\\S[^\\u0000]*$", "minimum": i64::MIN, "maximum": u64::MAX})
}

/// An optional user id: text or an integer; blank text and `null` count as absent.
fn optional_user_id() -> Value {
    json!({"type": ["string", "integer", "null"], "pattern": NO_NUL, "minimum": i64::MIN, "maximum": u64::MAX})
}

/// An integer query parameter: a 64-bit integer; blank counts as absent.
fn integer_query(name: &str, minimum: i64, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": false, "description": description,
        "schema": {"anyOf": [{"type": "integer", "minimum": minimum, "maximum": i64::MAX},
                             {"type": "string", "pattern": "^\\s*$"}]}})
}

/// A required number query parameter (finite: JSON has no infinities).
fn number_query(name: &str) -> Value {
    json!({"name": name, "in": "query", "required": true, "schema": {"type": "number"}})
}

fn ok(schema: Value) -> Value {
    json!({"description": "OK", "content": {"application/json": {"schema": schema}}})
}

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

/// Text without U+0000: a path or query with `%00` is refused with 400.
const NO_NUL: &str = "^[^\\u0000]*$";

fn path_id(what: &str) -> Value {
    json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string", "minLength": 1, "pattern": NO_NUL}, "description": format!("The {what}'s id")})
}

fn query(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": false, "schema": {"type": "string", "pattern": NO_NUL}, "description": description})
}

fn body(props: Value, required: &[&str]) -> Value {
    json!({"required": !required.is_empty(), "content": {"application/json": {"schema": {"type": "object", "properties": props, "required": required}}}})
}

fn time_as_of() -> Value {
    json!({"name": "time_as_of", "in": "query", "required": false,
        "description": "RFC 3339 time or YYYY-MM-DD (not before 4713 BC): answer from the published map as it was then; blank counts as absent",
        "schema": {"anyOf": [{"type": "string", "format": "date-time"}, {"type": "string", "format": "date"},
                             {"type": "string", "pattern": "^\\s*$"}]}})
}

fn nullable(ty: &str) -> Value {
    json!({"type": [ty, "null"]})
}

fn schemas() -> Value {
    let s = || json!({"type": "string"});
    let i = || json!({"type": "integer"});
    json!({
        "Error": {"type": "object", "properties": {"error": s()}, "required": ["error"]},
        "Entity": {"type": "object", "properties": {
            "id": s(), "name": s(), "slug": nullable("string"), "description": nullable("string"),
            "type_id": s(), "status": nullable("integer"), "is_deleted": i(),
            "created_at": nullable("string"), "updated_at": nullable("string"),
            "geometry_count": i(), "hash": {"type": "string", "description": "sha256:<hex>; send back as base_hash"}}},
        "SectionState": {"type": "object", "properties": {
            "section_id": s(), "status": {"enum": ["editing", "submitted", "approved", "rejected", "conflicted"],
                "description": "The spec's four statuses, plus `conflicted` (our addition): an approval that met a conflict leaves the section here, and like `rejected` it takes a new commit or restore, so its editor can recover. The spec marks only the submission conflicted, which would leave the section `submitted` with nothing pending and no way to move."},
            "head_commit_id": nullable("string"), "version": {"type": "integer", "description": "moves on each commit and restore only (spec §4.3): what expected_version is checked against"}, "locked_by": nullable("string"),
            "locked_at": nullable("string"), "lock_expires_at": nullable("string"), "updated_at": s()}},
        "Section": {"type": "object", "properties": {
            "id": s(), "title": s(), "description": nullable("string"), "user_id": nullable("string"),
            "created_by": nullable("string"), "created_at": s(), "updated_at": s(), "state": r("SectionState")}},
        "Commit": {"type": "object", "properties": {
            "id": s(), "section_id": s(), "parent_commit_id": nullable("string"), "commit_no": i(),
            "kind": {"enum": ["manual", "restore"]}, "restored_from_commit_id": nullable("string"),
            "created_by": s(), "created_at": s(), "title": nullable("string"), "note": nullable("string"),
            "snapshot_json": {"type": "string", "description": "RFC 8785 canonical JSON of the snapshot"},
            "snapshot_hash": {"type": "string", "description": "sha256:<hex> of snapshot_json"}}},
        "Submission": {"type": "object", "properties": {
            "id": s(), "section_id": s(), "commit_id": s(), "submitted_by": s(), "submitted_at": s(),
            "status": {"enum": ["pending", "approved", "rejected", "conflicted"]},
            "reviewed_by": nullable("string"), "reviewed_at": nullable("string"),
            "review_note": {"type": ["string", "null"], "description": "the reviewer's note, or the conflict message"},
            "snapshot_json": s(), "snapshot_hash": s()}},
        "Editor": {"type": "object", "properties": {
            "section": r("Section"), "state": r("SectionState"),
            "head_commit": {"oneOf": [r("Commit"), {"type": "null"}]}, "snapshot": {"description": "the head commit's snapshot, or null"}}},
        "Snapshot": {"type": "object", "description": "A full editor snapshot, stored whole.", "properties": {
            "schema_version": i(), "section": {"type": "object"}, "editor_feature_collection": {"type": "object"},
            "entities": {"type": "array", "items": {"type": "object", "required": ["id", "operation"], "properties": {
                "operation": {"enum": ["create", "update", "replace", "delete", "reference"]}, "id": s(), "name": s(),
                "slug": nullable("string"), "description": nullable("string"), "type_id": s(), "status": i(),
                "base_updated_at": s(), "base_hash": s()}}},
            "geometries": {"type": "array", "items": {"type": "object", "required": ["id", "operation"], "properties": {
                "operation": {"enum": ["create", "update", "replace", "delete", "reference"]}, "id": s(),
                "type": nullable("string"), "draw_geometry": {"type": "object"}, "geometry": {"type": "object"},
                "binding": {"type": "array", "items": s()}, "time_start": nullable("integer"), "time_end": nullable("integer"),
                "bbox": {"type": ["object", "null"], "properties": {"min_lng": {"type": "number"}, "min_lat": {"type": "number"}, "max_lng": {"type": "number"}, "max_lat": {"type": "number"}}},
                "base_updated_at": s(), "base_hash": s()}}},
            "link_scopes": {"type": "array", "items": {"type": "object", "required": ["geometry_id", "entity_ids"], "properties": {
                "operation": {"enum": ["replace", "reference"]}, "geometry_id": s(),
                "entity_ids": {"type": "array", "items": s(), "minItems": 1}, "base_links_hash": s()}}}}},
        "FeatureCollection": {"type": "object", "properties": {
            "type": {"const": "FeatureCollection"},
            "features": {"type": "array", "items": {"type": "object", "properties": {
                "type": {"const": "Feature"}, "id": s(), "geometry": {"type": "object"},
                "properties": {"type": "object", "properties": {
                    "id": s(), "type": {"type": ["string", "null"], "description": "geometries.type, or the primary entity's type_id when missing, 'line' or 'path'"},
                    "binding": {"type": "array", "items": s()}, "time_start": nullable("integer"), "time_end": nullable("integer"),
                    "bbox": {"type": ["object", "null"]}, "entity_ids": {"type": "array", "items": s()},
                    "entities": {"type": "array", "items": {"type": "object"}}, "created_at": nullable("string"),
                    "updated_at": nullable("string"), "hash": s(), "links_hash": s()}}}}}}},
        "Change": {"type": "object", "properties": {
            "version": i(), "position": i(), "change": s(), "detail": nullable("string"), "submission_id": s(),
            "section_id": s(), "reviewed_by": nullable("string"), "changed_at": s(), "valid_from": s(),
            "valid_to": nullable("string"), "entity": {"type": "object"}, "geometry": {"type": "object"}}}
    })
}

fn write(summary: &str, what: &str, req: Value, status: &str, answer: Value) -> Value {
    json!({"summary": summary, "parameters": [path_id(what)], "requestBody": req,
        "responses": write_responses(json!({status: ok(answer), "404": error(), "409": error()}))})
}

/// The document.
pub fn spec() -> Value {
    let actor = |name: &str| json!({name: optional_user_id()});
    let expectations = json!({"expected_version": {"type": ["integer", "null"], "minimum": i64::MIN, "maximum": i64::MAX}, "expected_head_commit_id": optional_text()});
    let mut commit_props = json!({"snapshot": r("Snapshot"), "created_by": optional_user_id(), "title": optional_text(), "note": optional_text()});
    let mut restore_props = json!({"commit_id": user_id(), "created_by": optional_user_id(), "title": optional_text(), "note": optional_text()});
    let mut submit_props =
        json!({"submitted_by": optional_user_id(), "commit_id": optional_user_id()});
    for props in [&mut commit_props, &mut restore_props, &mut submit_props] {
        if let (Some(p), Some(e)) = (props.as_object_mut(), expectations.as_object()) {
            p.extend(e.clone());
        }
    }
    let review = body(
        json!({"reviewed_by": optional_user_id(), "review_note": optional_text()}),
        &[],
    );
    let with_state = |key: &str, schema: &str| json!({"type": "object", "properties": {key: r(schema), "state": r("SectionState")}});
    let mut doc = json!({
        "openapi": "3.1.0",
        "info": {"title": "Palimpsest atlas (Ultimate History Map)", "version": "1",
                 "description": "Published entities and geometries, and the section review workflow. Served under /atlas. The published map's reads are public; the section workflow needs a user's bearer token (issued by the administrator under /admin/users) or the admin token, and acts as the caller: a body or query naming another user (user_id, actor, created_by, locked_by, unlocked_by, submitted_by, reviewed_by) is refused with 403, the caller's own name is accepted."},
        "servers": [{"url": "/atlas"}],
        "paths": {
            "/entities": {"get": {"summary": "Live entities, q matching name or slug",
                "parameters": [query("q", "substring of name or slug"), integer_query("limit", 0, "at most"), integer_query("offset", i64::MIN, "skip (negative counts as 0)"), time_as_of()],
                "responses": responses(json!({"200": ok(json!({"type": "array", "items": r("Entity")}))}))}},
            "/entities/search": {"get": {"summary": "Live entities whose name matches q",
                "parameters": [query("q", "substring of name"), integer_query("limit", i64::MIN, "default 20, clamped to 1..=100"), time_as_of()],
                "responses": responses(json!({"200": ok(json!({"type": "array", "items": r("Entity")}))}))}},
            "/entities/{id}": {"get": {"summary": "One live entity with geometry_count", "parameters": [path_id("entity"), time_as_of()],
                "responses": responses(json!({"200": ok(r("Entity")), "404": error()}))}},
            "/entities/{id}/history": {"get": {"summary": "Every published version of the entity", "parameters": [path_id("entity")],
                "responses": responses(json!({"200": ok(json!({"type": "array", "items": r("Change")})), "404": error()}))}},
            "/geometries": {"get": {"summary": "Live geometries meeting a bbox, as GeoJSON",
                "parameters": [
                    number_query("minLng"), number_query("minLat"), number_query("maxLng"), number_query("maxLat"),
                    integer_query("time", i64::MIN, "a year the geometry must cover"),
                    query("entity_id", "only geometries linked to this live entity"), time_as_of()],
                "responses": responses(json!({"200": ok(r("FeatureCollection"))}))}},
            "/geometries/{id}/history": {"get": {"summary": "Every published version of the geometry", "parameters": [path_id("geometry")],
                "responses": responses(json!({"200": ok(json!({"type": "array", "items": r("Change")})), "404": error()}))}},
            "/sections": {
                "post": {"summary": "Create a section (status editing)",
                    "requestBody": body(json!({"title": text(), "description": optional_text(), "user_id": optional_user_id(), "created_by": optional_user_id()}), &["title"]),
                    "responses": write_responses(json!({"201": ok(r("Section"))}))},
                "get": {"summary": "Sections with their state", "parameters": [{"name": "status", "in": "query", "required": false,
                        "schema": {"enum": ["editing", "submitted", "approved", "rejected", "conflicted"]},
                        "description": "only this status; any other value is a 400"}],
                    "responses": responses(json!({"200": ok(json!({"type": "array", "items": r("Section")}))}))}},
            "/sections/{id}": {"get": {"summary": "One section with its state", "parameters": [path_id("section")],
                "responses": responses(json!({"200": ok(r("Section")), "404": error()}))}},
            "/sections/{id}/editor": {"get": {"summary": "Open the editor; with user_id, take the lock",
                "parameters": [path_id("section"), query("user_id", "take the lock for the caller (an editor); must be the caller's own id")],
                "responses": responses(json!({"200": ok(r("Editor")), "404": error(), "409": error()}))}},
            "/sections/{id}/lock": {"post": {"parameters": [path_id("section")],
                "summary": "Take or renew the 15-minute lock (free, own or lapsed)",
                "requestBody": body(actor("user_id"), &[]),
                "responses": write_responses(json!({"200": ok(json!({"type": "object", "properties": {"state": r("SectionState")}})), "404": error(), "409": error()}))}},
            "/sections/{id}/unlock": {"post": {"parameters": [path_id("section")],
                "summary": "Release the lock unless another user holds it",
                "requestBody": body(json!({"user_id": optional_user_id()}), &[]),
                "responses": write_responses(json!({"200": ok(json!({"type": "object", "properties": {"state": r("SectionState")}})), "404": error(), "409": error()}))}},
            "/sections/{id}/commits": {
                "post": {"parameters": [path_id("section")], "summary": "Commit a full snapshot (editing/rejected/conflicted, lock valid)",
                    "requestBody": body(commit_props, &["snapshot"]),
                    "responses": write_responses(json!({"201": ok(with_state("commit", "Commit")), "404": error(), "409": error()}))},
                "get": {"parameters": [path_id("section")], "summary": "The section's commits",
                    "responses": responses(json!({"200": ok(json!({"type": "array", "items": r("Commit")})), "404": error()}))}},
            "/sections/{id}/restore": {"post": write("Restore an older commit as a new head", "section",
                body(restore_props, &["commit_id"]), "201", with_state("commit", "Commit"))},
            "/sections/{id}/submit": {"post": write("Submit the head (or commit_id) for review (409 while another user holds a live lock); releases the lock", "section",
                body(submit_props, &[]), "201", with_state("submission", "Submission"))},
            "/sections/{id}/submissions": {"get": {"parameters": [path_id("section")], "summary": "The section's submissions, newest first",
                "responses": responses(json!({"200": ok(json!({"type": "array", "items": r("Submission")})), "404": error()}))}},
            "/submissions/{id}/approve": {"post": {"parameters": [path_id("submission")],
                "summary": "Approve a pending submission: publish its snapshot atomically, or mark it conflicted (409)",
                "requestBody": review.clone(),
                "responses": write_responses(json!({"200": ok(with_state("submission", "Submission")), "404": error(),
                    "409": {"description": "Conflict: the submission is now conflicted (body has error, submission, state), or it was not pending",
                            "content": {"application/json": {"schema": {"type": "object", "properties": {"error": {"type": "string"}, "submission": r("Submission"), "state": r("SectionState")}}}}}}))}},
            "/submissions/{id}/reject": {"post": {"parameters": [path_id("submission")],
                "summary": "Reject a pending submission", "requestBody": review,
                "responses": write_responses(json!({"200": ok(with_state("submission", "Submission")), "404": error(), "409": error()}))}}
        },
        "components": {"schemas": schemas(), "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
            "description": "A user's token (PUT /admin/users/{user_id} answers it once) or the platform's admin token."}}}
    });
    add_admin_routes(&mut doc);
    secure(&mut doc);
    doc
}

/// Each operation's security: the published map's reads (`/entities…`, `/geometries…`) and
/// this document are public; every other operation needs a bearer token and may answer 401
/// (none, unknown or revoked) and 403 (a role missing, another user named).
fn secure(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let public = path.starts_with("/entities") || path.starts_with("/geometries");
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for op in item.values_mut() {
            if public {
                op["security"] = json!([]);
                continue;
            }
            op["security"] = json!([{"bearer": []}]);
            if let Some(responses) = op["responses"].as_object_mut() {
                responses.insert("401".into(), error());
                responses.insert("403".into(), error());
            }
        }
    }
}

/// `/admin/users…`: the administrator issues, lists and revokes users.
fn add_admin_routes(doc: &mut Value) {
    let user = json!({"type": "object", "properties": {
        "user_id": {"type": "string"}, "roles": {"type": "array", "items": {"enum": ["editor", "reviewer"]}},
        "active": {"type": "boolean"}, "issued_at": nullable("string"), "revoked_at": nullable("string"),
        "token": {"type": "string", "description": "the new bearer token: only in the answer of the request that issued it (not in a replay of its Idempotency-Key); keep it, it is never shown again"}}});
    let user_path = json!({"name": "user_id", "in": "path", "required": true,
        "description": "1-64 letters, digits, `.`, `_`, `-` or `@`; not `admin`",
        "schema": {"type": "string", "minLength": 1, "pattern": NO_NUL}});
    let roles = body(
        json!({"roles": {"type": "array", "items": {"enum": ["editor", "reviewer"]}, "minItems": 1}}),
        &["roles"],
    );
    doc["paths"]["/admin/users"] = json!({"get": {"summary": "Every atlas user with its roles (administrator)",
        "responses": responses(json!({"200": ok(json!({"type": "array", "items": user.clone()}))}))}});
    doc["paths"]["/admin/users/{user_id}"] = json!({
        "put": {"summary": "Issue (or reissue, replacing the old token) a user's bearer token with roles (administrator)",
            "parameters": [user_path.clone()], "requestBody": roles,
            "responses": write_responses(json!({"201": ok(user.clone()), "200": ok(user.clone())}))},
        "delete": {"summary": "Revoke a user's token (administrator); it stops working before this answer",
            "parameters": [user_path],
            "responses": write_responses(json!({"200": ok(user), "404": error()}))}});
}

/// `GET /openapi.json`: the routes, every write documented with the platform's
/// `Idempotency-Key`.
pub async fn document() -> Json<Value> {
    Json(palimpsest_web::command::document_commands(spec()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_templated_path_declares_its_parameters_and_every_operation_its_400() {
        let doc = spec();
        let paths = doc["paths"].as_object().expect("paths");
        for (path, item) in paths {
            for (method, op) in item.as_object().expect("item") {
                let declared: Vec<&str> = op["parameters"]
                    .as_array()
                    .map(|ps| {
                        ps.iter()
                            .filter(|p| p["in"] == "path")
                            .filter_map(|p| p["name"].as_str())
                            .collect()
                    })
                    .unwrap_or_default();
                if path.contains("{id}") {
                    assert_eq!(declared, ["id"], "{method} {path}");
                }
                assert!(
                    op["responses"]["400"].is_object(),
                    "{method} {path}: no 400"
                );
                if path.starts_with("/sections") || path.starts_with("/submissions") {
                    assert!(
                        op["responses"]["401"].is_object() && op["responses"]["403"].is_object(),
                        "{method} {path}: no 401/403"
                    );
                }
                if method == "post" {
                    assert!(
                        op["responses"]["415"].is_object(),
                        "{method} {path}: no 415"
                    );
                }
            }
        }
    }
}
