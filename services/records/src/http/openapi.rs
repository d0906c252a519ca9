//! The OpenAPI 3.1 description of the records API, served at `/records/openapi.json`: one path
//! per function of `POST /records/api/<function>`, each with its arguments and its result.

use axum::Json;
use serde_json::{Map, Value, json};

/// An organisation code as `class::is_org_code` accepts it.
const ORG_CODE: &str = "^[A-Za-z0-9_.-]{1,64}$";
/// A class name as `class::is_class_name` accepts it.
const CLASS_NAME: &str = "^[A-Z][A-Za-z0-9_]{0,62}$";

/// A class name.
fn class() -> Value {
    json!({"type": "string", "pattern": CLASS_NAME})
}
/// The `data` of the singleton classes' writes: `clazz` is the class itself.
fn special_data(clazz: &str) -> Value {
    let required: &[&str] = if clazz == "Org" {
        &["clazz", "org"]
    } else {
        &["clazz"]
    };
    json!({"type": "object", "additionalProperties": true, "required": required,
        "properties": {"clazz": {"const": clazz}, "org": org()}})
}
fn s() -> Value {
    json!({"type": "string"})
}
fn i() -> Value {
    json!({"type": "integer", "format": "int64"})
}
fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}
fn obj(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}
fn org() -> Value {
    json!({"type": "string", "pattern": ORG_CODE, "description": "The organisation; an org token's own when absent (the administrator must name it)."})
}
fn limit() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": crate::read::page::MAX_LIMIT, "description": "Answer at most this many rows, in key order (a page); every row when absent."})
}
fn after() -> Value {
    obj(
        json!({"t": {"type": "integer", "format": "int64", "minimum": 0, "description": "The listing's time, as the previous page's `next` gave it (not ahead of now)."}, "org": s(), "pk": s()}),
        &["t", "pk"],
    )
}
fn since() -> Value {
    json!({"type": "integer", "format": "int64", "description": "Answer only what is newer than this version (incremental sync)."})
}

/// One function as the document describes it: name, summary, arguments schema, result schema,
/// whether it writes.
type Function = (&'static str, &'static str, Value, Value, bool);

/// Every function, by family (the document's paths are keyed by name: their order is the
/// map's, not this list's).
fn functions() -> Vec<Function> {
    [
        reads(),
        writes(),
        administration(),
        purges(),
        ftp(),
        tasks(),
        transfer(),
    ]
    .concat()
}

/// A document, or `null` when there is none.
fn nullable_doc() -> Value {
    json!({"oneOf": [r("Document"), {"type": "null"}]})
}

/// A purge's answer: how many it purged.
fn purged() -> Value {
    obj(json!({"purged": i()}), &["purged"])
}

/// The arguments of an index filter (`ix`, `comp`, `val`, `v`), with `extra` ones.
fn index_args(extra: Value) -> Value {
    let mut props = json!({"ix": {"oneOf": [s(), {"type": "integer", "minimum": 0}], "description": "index name or number"},
        "comp": {"enum": ["=", "<", "<=", ">", ">=", "in"]}, "val": {"description": "value in clear (a list for `in` on a single-valued index)"}, "v": since()});
    if let (Value::Object(p), Value::Object(e)) = (&mut props, extra) {
        p.extend(e);
    }
    props
}

/// The read functions: documents, Hdr and organisations, by key, class, sub-collection or index.
fn reads() -> Vec<Function> {
    vec![
        (
            "getDoc",
            "A document (or its zombie) by pk; null when absent or not newer than v.",
            obj(
                json!({"org": org(), "cl": class(), "pk": s(), "v": since()}),
                &["cl", "pk"],
            ),
            nullable_doc(),
            false,
        ),
        (
            "listDocs",
            "The class's documents newer than v.",
            obj(
                json!({"org": org(), "cl": class(), "v": since(), "limit": limit(), "after": after()}),
                &["cl"],
            ),
            r("List"),
            false,
        ),
        (
            "listDocsSk",
            "A sub-collection's plus and del rows newer than v, the newest per pk.",
            obj(
                json!({"org": org(), "cl": class(), "ik": {"type": "integer", "minimum": 0}, "val": {"oneOf": [s(), {"type": "array", "items": s()}]}, "v": since(), "limit": limit(), "after": after()}),
                &["cl", "ik", "val"],
            ),
            r("List"),
            false,
        ),
        (
            "listDocsIdx",
            "Documents whose index compares with val (G-scope indexes: administrator).",
            obj(
                index_args(
                    json!({"org": org(), "cl": class(), "limit": limit(), "after": after()}),
                ),
                &["cl", "ix", "comp", "val"],
            ),
            r("List"),
            false,
        ),
        (
            "getHdr",
            "The service's singleton Hdr.",
            obj(json!({"v": since()}), &[]),
            nullable_doc(),
            false,
        ),
        (
            "getOrg",
            "An organisation's document.",
            obj(json!({"org": org(), "v": since()}), &[]),
            nullable_doc(),
            false,
        ),
        (
            "listOrgs",
            "Every organisation's document newer than v (administrator).",
            obj(
                json!({"v": since(), "limit": limit(), "after": after()}),
                &[],
            ),
            r("List"),
            false,
        ),
        (
            "listOrgsIdx",
            "Organisations by an index of Org (administrator).",
            obj(
                index_args(json!({"limit": limit(), "after": after()})),
                &["ix", "comp", "val"],
            ),
            r("List"),
            false,
        ),
    ]
}

/// The write functions: documents, Hdr and organisations, one at a time or in one operation.
fn writes() -> Vec<Function> {
    vec![
        (
            "insertDoc",
            "Creates a document (it must not exist, zombies included).",
            obj(json!({"org": org(), "data": r("Data")}), &["data"]),
            r("Document"),
            true,
        ),
        (
            "updateDoc",
            "Replaces a document's data; v is the version read.",
            obj(
                json!({"org": org(), "data": r("Data"), "v": i()}),
                &["data", "v"],
            ),
            r("Document"),
            true,
        ),
        (
            "deleteDoc",
            "Deletes a document: a zombie for a SYNC class (answered), a purge for NOSYNC (null).",
            obj(
                json!({"org": org(), "cl": class(), "pk": s()}),
                &["cl", "pk"],
            ),
            nullable_doc(),
            true,
        ),
        (
            "insertHdr",
            "Creates Hdr (administrator).",
            obj(json!({"data": special_data("Hdr")}), &["data"]),
            r("Document"),
            true,
        ),
        (
            "updateHdr",
            "Updates Hdr (administrator).",
            obj(
                json!({"data": special_data("Hdr"), "v": i()}),
                &["data", "v"],
            ),
            r("Document"),
            true,
        ),
        (
            "insertOrg",
            "Creates an organisation's document, pk data.org (administrator).",
            obj(json!({"data": special_data("Org")}), &["data"]),
            r("Document"),
            true,
        ),
        (
            "updateOrg",
            "Updates an organisation's document (administrator).",
            obj(
                json!({"data": special_data("Org"), "v": i()}),
                &["data", "v"],
            ),
            r("Document"),
            true,
        ),
        (
            "operation",
            "Several writes at one version in one atomic append.",
            obj(
                json!({"org": org(), "writes": {"type": "array", "minItems": 1, "maxItems": 1000, "items": r("Write")}}),
                &["writes"],
            ),
            json!({"type": "array", "items": nullable_doc()}),
            true,
        ),
    ]
}

/// The administrator's functions on the store itself: classes, tokens, the site key.
fn administration() -> Vec<Function> {
    vec![
        (
            "declareClass",
            "Declares a class (administrator); the same again is answered as is.",
            r("ClassDeclaration"),
            r("ClassDeclaration"),
            true,
        ),
        (
            "issueOrgToken",
            "A new bearer token scoped to an organisation (administrator).",
            obj(json!({"org": org()}), &["org"]),
            obj(json!({"token": s()}), &["token"]),
            true,
        ),
        (
            "rotateKey",
            "Reseals every document and task sealed with a previous site key with the current one (administrator).",
            obj(json!({}), &[]),
            obj(json!({"resealed": i()}), &["resealed"]),
            true,
        ),
    ]
}

/// The purges of documents, zombies and `del` rows (administrator).
fn purges() -> Vec<Function> {
    vec![
        (
            "purgeAllDocs",
            "Purges every document of a class in an org (administrator).",
            obj(json!({"org": org(), "cl": class()}), &["org", "cl"]),
            purged(),
            true,
        ),
        (
            "purgeOrg",
            "Purges an org's zombies and del rows older than z, or all its documents without z (administrator).",
            obj(json!({"org": org(), "z": i()}), &["org"]),
            purged(),
            true,
        ),
        (
            "purgeOrgs",
            "Purges zombies and del rows older than z in every org (administrator).",
            obj(json!({"z": i()}), &["z"]),
            purged(),
            true,
        ),
        (
            "purgeDlvDocs",
            "Purges an org's documents selected by an index (administrator); lsp restricts to these pks.",
            obj(
                index_args(
                    json!({"org": org(), "cl": class(), "lsp": {"type": "array", "items": s()}}),
                ),
                &["org", "cl", "ix", "comp", "val"],
            ),
            purged(),
            true,
        ),
    ]
}

/// The storage paths listed for purge (FTP).
fn ftp() -> Vec<Function> {
    vec![
        (
            "setFTP",
            "Lists a storage path for purge after day dp.",
            obj(
                json!({"org": org(), "path": {"type": "string", "pattern": "^[^\\u0000-\\u001f\\u007f]{1,1024}$"}, "dp": i()}),
                &["path", "dp"],
            ),
            obj(json!({"changed": i()}), &["changed"]),
            true,
        ),
        (
            "purgeFTP",
            "Unlists a storage path.",
            obj(json!({"org": org(), "path": s()}), &["path"]),
            obj(json!({"changed": i()}), &["changed"]),
            true,
        ),
        (
            "listFTP",
            "Paths due for purge at day dp (administrator).",
            obj(json!({"dp": i()}), &["dp"]),
            obj(
                json!({"rows": {"type": "array", "items": obj(json!({"org": s(), "path": s(), "p": i()}), &["org", "path", "p"])}}),
                &["rows"],
            ),
            false,
        ),
        (
            "purgeAllFTP",
            "Unlists every path due at day dp (administrator).",
            obj(json!({"dp": i()}), &["dp"]),
            purged(),
            true,
        ),
    ]
}

/// The scheduled tasks.
fn tasks() -> Vec<Function> {
    vec![
        (
            "setTask",
            "Creates or replaces the task [org, sha16(process/pk…)], due at data.startTime.",
            obj(
                json!({"org": org(), "data": obj(json!({"process": s(), "pk": {"type": "array", "items": s()}, "startTime": {"type": "string", "pattern": "^[0-9]{17}$"}, "nb": i()}), &["process", "pk", "startTime"])}),
                &["data"],
            ),
            obj(json!({"k0": s()}), &["k0"]),
            true,
        ),
        (
            "nextTask",
            "The first task due at or before time (administrator); null when none.",
            obj(
                json!({"time": {"type": "string", "pattern": "^[0-9]{17}$"}}),
                &["time"],
            ),
            json!({"oneOf": [obj(json!({"org": s(), "k0": s(), "i0": s(), "data": {"type": "object"}}), &["org", "k0", "i0", "data"]), {"type": "null"}]}),
            false,
        ),
    ]
}

/// Moving an organisation's documents out and in (administrator).
fn transfer() -> Vec<Function> {
    vec![
        (
            "exportOrg",
            "An org's live documents as clear data, of one class when cl is given (administrator). With clear, the audit dump: each document as its row (the row form the host holds) with data in clear, never stored by the server. With treat, each document's data goes through its class's registered treatment (BADREQUEST when cl names a class without one).",
            obj(
                json!({"org": org(), "cl": class(), "clear": {"type": "boolean", "description": "answer rows (the audit dump) instead of docs"}, "treat": {"type": "boolean", "description": "apply the classes' treatments"}}),
                &["org"],
            ),
            json!({"oneOf": [
                obj(json!({"docs": {"type": "array", "items": r("Document")}}), &["docs"]),
                obj(json!({"rows": {"type": "array", "items": r("ClearRow")}}), &["rows"])]}),
            false,
        ),
        (
            "importOrg",
            "Inserts exported documents (docs), or the data of an audit dump's rows (rows), into an org, re-keyed to it and sealed (administrator). With treat, each document's data goes through its class's registered treatment first; a refusal imports nothing.",
            import_args(),
            obj(json!({"imported": i()}), &["imported"]),
            true,
        ),
    ]
}

/// `importOrg`'s arguments: the documents as `docs` or as an audit dump's `rows`, one of them.
fn import_args() -> Value {
    let mut args = obj(
        json!({"org": s(), "docs": {"type": "array", "items": r("Data")}, "rows": {"type": "array", "items": {"type": "object", "additionalProperties": true, "required": ["data"], "properties": {"data": r("Data")}, "description": "a row of an audit dump (ClearRow): only its data is read"}}, "treat": {"type": "boolean", "description": "apply the classes' treatments"}}),
        &["org"],
    );
    args["oneOf"] = json!([
        {"required": ["docs"], "properties": {"docs": {"type": "array"}}},
        {"required": ["rows"], "properties": {"rows": {"type": "array"}}}]);
    args
}

fn error() -> Value {
    json!({"description": "Refused", "content": {"application/json": {"schema": r("Error")}}})
}

/// The arguments with each optional one also `null` (read as absent).
fn optional_may_be_null(mut args: Value) -> Value {
    let required: Vec<Value> = args["required"].as_array().cloned().unwrap_or_default();
    if let Some(props) = args.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, schema) in props.iter_mut() {
            if !required.contains(&Value::String(name.clone())) {
                *schema = json!({"anyOf": [schema.take(), {"type": "null"}]});
            }
        }
    }
    args
}

fn path(summary: &str, args: Value, result: Value, writes: bool) -> Value {
    let mut parameters = Vec::new();
    if writes {
        parameters.push(palimpsest_web::command::idempotency_key_parameter());
    }
    // An empty body reads as `{}`: it is required only when some argument is.
    let body_required = args["required"].as_array().is_some_and(|r| !r.is_empty());
    let args = optional_may_be_null(args);
    let mut responses = Map::new();
    responses.insert("200".into(), json!({"description": "OK", "content": {"application/json": {"schema": obj(json!({"result": result}), &["result"])}}}));
    for code in ["401", "403", "404", "409", "413", "415", "422", "503"] {
        responses.insert(code.into(), error());
    }
    // A malformed Idempotency-Key is refused by the platform before the function runs.
    responses.insert("400".into(), json!({"description": "Refused, or a malformed Idempotency-Key",
        "content": {"application/json": {"schema": {"anyOf": [r("Error"), palimpsest_web::command::platform_error_schema()]}}}}));
    json!({"post": {"summary": summary, "parameters": parameters,
        "requestBody": {"required": body_required, "content": {"application/json": {"schema": args}}},
        "responses": responses}})
}

fn schemas() -> Value {
    json!({
        "Error": obj(json!({"error": obj(json!({"code": {"enum": ["REGVER", "NOTFOUND", "EXISTS", "CONFLICT", "UNIQUE", "FORBIDDEN", "BADREQUEST", "INTERNAL", "UNAVAILABLE"]}, "message": s()}), &["code", "message"])}), &["error"]),
        "Data": {"type": "object", "required": ["clazz"], "additionalProperties": true,
            "properties": {"clazz": class()}, "description": "A document's data: clazz, its key properties p1 p2 …, its indexed and other properties."},
        "Document": {"type": "object", "additionalProperties": true, "required": ["clazz", "v", "x", "pk"],
            "properties": {"clazz": s(), "org": s(), "v": i(), "x": {"enum": [0, 1]}, "pk": s()},
            "description": "The stored data, decrypted, with clazz, org, v, x and the row's pk."},
        "Row": obj(json!({"pk": s(), "v": i(), "x": {"enum": [0, 1, 2]}, "del": {"enum": [0, 1]}, "org": s(), "data": r("Document")}), &["pk", "v", "x", "del"]),
        "ClearRow": {"type": "object", "additionalProperties": true, "required": ["data"],
            "properties": {"org": s(), "pk": s(), "v": i(), "x": {"enum": [0]}, "z": {"type": "null"}, "ck": s(), "del": {"enum": [0]}, "data": r("Data")},
            "description": "A row of the audit dump: org, pk, v, x, z, ck, del and the collection and index columns as the host holds them, data in clear. On import only data is read."},
        "List": obj(json!({"rows": {"type": "array", "items": r("Row")}, "v": {"type": "integer", "format": "int64", "description": "the version to store next: this read's time minus DELTA (the first page's time for every page of one listing)"}, "next": {"oneOf": [after(), {"type": "null"}], "description": "pass as `after` for the next page; null on the last"}}), &["rows", "v", "next"]),
        "Write": {"oneOf": [
            obj(json!({"op": {"const": "insert"}, "data": r("Data")}), &["op", "data"]),
            obj(json!({"op": {"const": "update"}, "data": r("Data"), "v": i()}), &["op", "data", "v"]),
            obj(json!({"op": {"const": "delete"}, "cl": class(), "pk": s()}), &["op", "cl", "pk"])]},
        "ClassDeclaration": {"type": "object", "additionalProperties": false, "required": ["clazz", "sync"], "properties": {
            "clazz": class(), "sync": {"type": "boolean"}, "pk": {"type": "array", "items": s()},
            "collections": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["name", "props"],
                "properties": {"name": s(), "props": {"type": "array", "items": s()}, "list": {"type": "boolean"}}}},
            "indexes": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["name", "type"],
                "properties": {"name": s(), "type": {"enum": ["uniq", "hash", "string", "int", "float", "list"]}, "scope": {"enum": ["G", "O"]}}}}}}
    })
}

/// The document, built from the same table of functions the route serves.
pub fn spec() -> Value {
    let mut paths = Map::new();
    for (name, summary, args, result, writes) in functions() {
        paths.insert(format!("/api/{name}"), path(summary, args, result, writes));
    }
    paths.insert("/feed".into(), json!({"get": {"summary": "A class's or a sub-collection's changes as Server-Sent Events: each `rows` event is a list answer.",
        "parameters": [
            {"name": "cl", "in": "query", "required": true, "schema": class()},
            {"name": "org", "in": "query", "required": false, "schema": org()},
            {"name": "ik", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 0}},
            {"name": "val", "in": "query", "required": false, "schema": s()},
            {"name": "v", "in": "query", "required": false, "schema": i()}],
        "responses": {"200": {"description": "event stream", "content": {"text/event-stream": {"schema": s()}}},
            "400": error(), "401": error(), "403": error(), "503": error()}}}));
    paths.insert("/history/{org}/{clazz}/{pk}".into(), json!({"get": {"summary": "One document as it was after its first `version` events (all of them when absent), data opened: the administrator's read of its history (not a function of the records API). Answered no-store.",
        "parameters": [
            {"name": "org", "in": "path", "required": true, "schema": {"type": "string", "pattern": ORG_CODE}},
            {"name": "clazz", "in": "path", "required": true, "schema": class()},
            {"name": "pk", "in": "path", "required": true, "schema": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}},
            {"name": "version", "in": "query", "required": false, "schema": {"type": "integer", "minimum": 1}}],
        "responses": {"200": {"description": "the document then", "content": {"application/json": {"schema":
                obj(json!({"version": i(), "versions": i(), "x": i(), "del_rows": i(),
                    "row": {"type": ["object", "null"]}}), &["version", "versions", "row", "x", "del_rows"])}}},
            "400": error(), "401": error(), "403": error(), "404": error(), "503": error()}}}));
    json!({
        "openapi": "3.1.0",
        "info": {"title": "Palimpsest records", "version": "1",
            "description": "The organisation document store's generic API: POST /records/api/<function> with the spec's argument names; answers {\"result\": …} or {\"error\": {\"code\", \"message\"}}."},
        "servers": [{"url": "/records"}],
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {"schemas": schemas(), "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer",
            "description": "The admin token, or an organisation's token from issueOrgToken."}}}
    })
}

/// `GET /records/openapi.json`.
pub async fn document() -> Json<Value> {
    Json(spec())
}

/// The functions the document describes, to check it against the route's.
pub fn described() -> Vec<&'static str> {
    functions().into_iter().map(|f| f.0).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::api::FUNCTIONS;

    #[test]
    fn the_document_describes_every_function_served_and_no_other() {
        let mut served: Vec<&str> = FUNCTIONS.to_vec();
        let mut documented = described();
        served.sort_unstable();
        documented.sort_unstable();
        assert_eq!(served, documented);
    }
}
