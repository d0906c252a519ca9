//! The OpenAPI 3.1 description of the atlas routes, served at `/atlas/openapi.json`.

use axum::Json;
use serde_json::{Value, json};

fn error() -> Value {
    json!({"description": "Error", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}})
}

fn ok(schema: Value) -> Value {
    json!({"description": "OK", "content": {"application/json": {"schema": schema}}})
}

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn path_id(what: &str) -> Value {
    json!({"name": "id", "in": "path", "required": true, "schema": {"type": "string"}, "description": format!("The {what}'s id")})
}

fn query(name: &str, ty: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": false, "schema": {"type": ty}, "description": description})
}

fn body(props: Value, required: &[&str]) -> Value {
    json!({"required": !required.is_empty(), "content": {"application/json": {"schema": {"type": "object", "properties": props, "required": required}}}})
}

fn time_as_of() -> Value {
    query(
        "time_as_of",
        "string",
        "RFC 3339 time or YYYY-MM-DD: answer from the published map as it was then",
    )
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

fn write(summary: &str, req: Value, status: &str, answer: Value) -> Value {
    json!({"summary": summary, "requestBody": req, "responses": {
        status: ok(answer), "400": error(), "404": error(), "409": error()}})
}

/// The document.
pub fn spec() -> Value {
    let actor = |name: &str| json!({name: {"type": "string"}});
    let expectations = json!({"expected_version": {"type": "integer"}, "expected_head_commit_id": {"type": ["string", "null"]}});
    let mut commit_props = json!({"snapshot": r("Snapshot"), "created_by": {"type": "string"}, "title": {"type": "string"}, "note": {"type": "string"}});
    let mut restore_props = json!({"commit_id": {"type": "string"}, "created_by": {"type": "string"}, "title": {"type": "string"}, "note": {"type": "string"}});
    let mut submit_props =
        json!({"submitted_by": {"type": "string"}, "commit_id": {"type": "string"}});
    for props in [&mut commit_props, &mut restore_props, &mut submit_props] {
        if let (Some(p), Some(e)) = (props.as_object_mut(), expectations.as_object()) {
            p.extend(e.clone());
        }
    }
    let review = body(
        json!({"reviewed_by": {"type": "string"}, "review_note": {"type": "string"}}),
        &[],
    );
    let with_state = |key: &str, schema: &str| json!({"type": "object", "properties": {key: r(schema), "state": r("SectionState")}});
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Palimpsest atlas (Ultimate History Map)", "version": "1",
                 "description": "Published entities and geometries, and the section review workflow. Served under /atlas."},
        "servers": [{"url": "/atlas"}],
        "paths": {
            "/entities": {"get": {"summary": "Live entities, q matching name or slug",
                "parameters": [query("q", "string", "substring of name or slug"), query("limit", "integer", "at most"), query("offset", "integer", "skip"), time_as_of()],
                "responses": {"200": ok(json!({"type": "array", "items": r("Entity")})), "400": error()}}},
            "/entities/search": {"get": {"summary": "Live entities whose name matches q",
                "parameters": [query("q", "string", "substring of name"), query("limit", "integer", "default 20, max 100"), time_as_of()],
                "responses": {"200": ok(json!({"type": "array", "items": r("Entity")})), "400": error()}}},
            "/entities/{id}": {"get": {"summary": "One live entity with geometry_count", "parameters": [path_id("entity"), time_as_of()],
                "responses": {"200": ok(r("Entity")), "404": error()}}},
            "/entities/{id}/history": {"get": {"summary": "Every published version of the entity", "parameters": [path_id("entity")],
                "responses": {"200": ok(json!({"type": "array", "items": r("Change")})), "404": error()}}},
            "/geometries": {"get": {"summary": "Live geometries meeting a bbox, as GeoJSON",
                "parameters": [
                    {"name": "minLng", "in": "query", "required": true, "schema": {"type": "number"}},
                    {"name": "minLat", "in": "query", "required": true, "schema": {"type": "number"}},
                    {"name": "maxLng", "in": "query", "required": true, "schema": {"type": "number"}},
                    {"name": "maxLat", "in": "query", "required": true, "schema": {"type": "number"}},
                    query("time", "integer", "a year the geometry must cover"),
                    query("entity_id", "string", "only geometries linked to this live entity"), time_as_of()],
                "responses": {"200": ok(r("FeatureCollection")), "400": error()}}},
            "/geometries/{id}/history": {"get": {"summary": "Every published version of the geometry", "parameters": [path_id("geometry")],
                "responses": {"200": ok(json!({"type": "array", "items": r("Change")})), "404": error()}}},
            "/sections": {
                "post": {"summary": "Create a section (status editing)",
                    "requestBody": body(json!({"title": {"type": "string"}, "description": {"type": "string"}, "user_id": {"type": "string"}, "created_by": {"type": "string"}}), &["title"]),
                    "responses": {"201": ok(r("Section")), "400": error()}},
                "get": {"summary": "Sections with their state", "parameters": [{"name": "status", "in": "query", "required": false,
                        "schema": {"enum": ["editing", "submitted", "approved", "rejected", "conflicted"]},
                        "description": "only this status; any other value is a 400"}],
                    "responses": {"200": ok(json!({"type": "array", "items": r("Section")})), "400": error()}}},
            "/sections/{id}": {"get": {"summary": "One section with its state", "parameters": [path_id("section")],
                "responses": {"200": ok(r("Section")), "404": error()}}},
            "/sections/{id}/editor": {"get": {"summary": "Open the editor; with user_id, take the lock",
                "parameters": [path_id("section"), query("user_id", "string", "take the lock for this user")],
                "responses": {"200": ok(r("Editor")), "404": error(), "409": error()}}},
            "/sections/{id}/lock": {"post": {"parameters": [path_id("section")],
                "summary": "Take or renew the 15-minute lock (free, own or lapsed)",
                "requestBody": body(actor("user_id"), &["user_id"]),
                "responses": {"200": ok(json!({"type": "object", "properties": {"state": r("SectionState")}})), "400": error(), "404": error(), "409": error()}}},
            "/sections/{id}/unlock": {"post": {"parameters": [path_id("section")],
                "summary": "Release the lock unless another user holds it",
                "requestBody": body(actor("user_id"), &[]),
                "responses": {"200": ok(json!({"type": "object", "properties": {"state": r("SectionState")}})), "404": error(), "409": error()}}},
            "/sections/{id}/commits": {
                "post": {"parameters": [path_id("section")], "summary": "Commit a full snapshot (editing/rejected/conflicted, lock valid)",
                    "requestBody": body(commit_props, &["snapshot", "created_by"]),
                    "responses": {"201": ok(with_state("commit", "Commit")), "400": error(), "404": error(), "409": error()}},
                "get": {"parameters": [path_id("section")], "summary": "The section's commits",
                    "responses": {"200": ok(json!({"type": "array", "items": r("Commit")})), "404": error()}}},
            "/sections/{id}/restore": {"post": write("Restore an older commit as a new head",
                body(restore_props, &["commit_id", "created_by"]), "201", with_state("commit", "Commit"))},
            "/sections/{id}/submit": {"post": write("Submit the head (or commit_id) for review (409 while another user holds a live lock); releases the lock",
                body(submit_props, &["submitted_by"]), "201", with_state("submission", "Submission"))},
            "/sections/{id}/submissions": {"get": {"parameters": [path_id("section")], "summary": "The section's submissions, newest first",
                "responses": {"200": ok(json!({"type": "array", "items": r("Submission")})), "404": error()}}},
            "/submissions/{id}/approve": {"post": {"parameters": [path_id("submission")],
                "summary": "Approve a pending submission: publish its snapshot atomically, or mark it conflicted (409)",
                "requestBody": review.clone(),
                "responses": {"200": ok(with_state("submission", "Submission")), "404": error(),
                    "409": {"description": "Conflict: the submission is now conflicted (body has error, submission, state), or it was not pending",
                            "content": {"application/json": {"schema": {"type": "object", "properties": {"error": {"type": "string"}, "submission": r("Submission"), "state": r("SectionState")}}}}}}}},
            "/submissions/{id}/reject": {"post": {"parameters": [path_id("submission")],
                "summary": "Reject a pending submission", "requestBody": review,
                "responses": {"200": ok(with_state("submission", "Submission")), "404": error(), "409": error()}}}
        },
        "components": {"schemas": schemas()}
    })
}

/// `GET /openapi.json`: the routes, every write documented with the platform's
/// `Idempotency-Key`.
pub async fn document() -> Json<Value> {
    Json(palimpsest_web::command::document_commands(spec()))
}
