//! The OpenAPI 3.1 description of the routes, served at `/resources/openapi.json`.
//!
//! Documents are Deki's elements as JSON (attributes as `"@name"` strings, text beside them as
//! `"#text"`, a repeated child as an array and a single one as an object) or XML when `Accept`
//! asks for it; content routes answer the stored bytes with their MIME type.

use axum::Json;
use serde_json::{Value, json};

const API: &str = "/@api/deki";

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn error(description: &str) -> Value {
    json!({"description": description, "content": {"application/json": {"schema": r("Error")}}})
}

fn document_of(schema: &str) -> Value {
    json!({"description": "OK", "content": {
        "application/json": {"schema": r(schema)},
        "application/xml": {"schema": {"type": "string"}}
    }})
}

fn bytes() -> Value {
    json!({"description": "The content, with its MIME type and ETag", "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}},
        "headers": {"ETag": {"schema": {"type": "string"}, "description": "\"{res_id}.r{rev}_ts{timestamp}\""}}})
}

fn path(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "schema": {"type": "string"}, "description": description})
}

fn id(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1, "maximum": 4294967295u64}, "description": description})
}

fn query(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": false, "schema": {"type": "string"}, "description": description})
}

fn header(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "header", "required": false, "schema": {"type": "string"}, "description": description})
}

fn idempotency() -> Value {
    header(
        "Idempotency-Key",
        "A retried request with the same key is answered the first answer and appends nothing",
    )
}

fn if_match() -> Value {
    header(
        "If-Match",
        "The ETag of the head the write is based on; a stale one is 412",
    )
}

fn revision() -> Value {
    query("revision", "`head` (default) or a revision number")
}

fn raw_body(description: &str) -> Value {
    json!({"required": false, "description": description, "content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}})
}

/// The responses of a read.
fn read(ok: Value) -> Value {
    json!({"200": ok, "400": error("Malformed parameter"), "401": error("Unknown API key"),
        "403": error("Hidden revision or admin only"), "404": error("Not found or deleted"),
        "503": error("Read model unavailable")})
}

/// The responses of a write.
fn write(ok: Value) -> Value {
    json!({"200": ok, "400": error("Malformed request"), "401": error("An API key is required"),
        "403": error("Admin only"), "404": error("Not found or deleted"),
        "409": error("Conflict: stale revision, name taken, property exists, not deleted"),
        "412": error("If-Match / etag does not name the head"),
        "413": {"description": "Body too large"},
        "422": error("Idempotency-Key reused for another request"),
        "503": error("The event log is unavailable")})
}

fn op(summary: &str, parameters: Vec<Value>, responses: Value) -> Value {
    json!({"summary": summary, "parameters": parameters, "responses": responses,
        "security": [{"bearer": []}, {"authtoken": []}, {}]})
}

fn with_body(mut operation: Value, body: Value) -> Value {
    operation["requestBody"] = body;
    operation
}

fn file_paths(paths: &mut serde_json::Map<String, Value>) {
    let page = || id("pageid", "The page's id");
    let file = || id("fileid", "The file's id (res_id)");
    let name = || {
        path(
            "filename",
            "The file name (1-255 characters, no control characters)",
        )
    };
    paths.insert(
        format!("{API}/pages/{{pageid}}/files"),
        json!({
            "get": op("The page's files", vec![page()], read(document_of("Files")))
        }),
    );
    paths.insert(format!("{API}/pages/{{pageid}}/files/{{filename}}"), json!({
        "get": op("A file's content by name", vec![page(), name(), revision()], read(bytes())),
        "put": with_body(op("Upload a file (a new resource, or a new revision of the live file of that name)",
            vec![page(), name(), query("description", "Sets the file's description in the same changeset"),
                 query("revision", "The head revision the upload is based on; stale is 409"), query("etag", "The head's ETag"), if_match(), idempotency()],
            write(document_of("File"))), raw_body("The file's bytes; Content-Type is its MIME type")),
        "delete": op("Delete a file by name", vec![page(), name(), query("revision", "Expected head"), query("etag", "Expected ETag"), if_match(), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}"), json!({
        "get": op("A file's content", vec![file(), revision()], read(bytes())),
        "put": with_body(op("Upload a new revision of a live file by id (its name and page stay)",
            vec![file(), query("description", "Sets the file's description in the same changeset"),
                 query("revision", "The head revision the upload is based on; stale is 409"), query("etag", "The head's ETag"), if_match(), idempotency()],
            write(document_of("File"))), raw_body("The file's bytes; Content-Type is its MIME type")),
        "delete": op("Delete a file", vec![file(), query("revision", "Expected head"), query("etag", "Expected ETag"), if_match(), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}/info"), json!({
        "get": op("A file revision's description", vec![file(), revision()], read(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}/revisions"), json!({
        "get": op("The file's revisions", vec![file(), query("changefilter", "Comma-separated CONTENT, NAME, LANGUAGE, META, DELETEFLAG, PARENT")], read(document_of("Files"))),
        "post": op("Hide or show revisions (admin)", vec![file(), query("hide", "true (default) or false"), query("revisionids", "Comma-separated revision numbers"), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}/move"), json!({
        "post": op("Move and/or rename a file", vec![file(), query("to", "The target page id"), query("name", "The new name"), query("revision", "Expected head"), query("etag", "Expected ETag"), if_match(), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}/description"), json!({
        "put": with_body(op("Set the file's description", vec![file(), idempotency()], write(document_of("Property"))), raw_body("The description, UTF-8 text")),
        "delete": op("Remove the file's description", vec![file(), idempotency()], write(document_of("Property")))
    }));
    paths.insert(
        format!("{API}/archive/files"),
        json!({
            "get": op("Deleted files (admin)", vec![], read(document_of("Archive")))
        }),
    );
    paths.insert(format!("{API}/archive/files/restore/{{fileid}}"), json!({
        "post": op("Restore a deleted file (admin), renamed on a name clash", vec![file(), query("to", "The page to restore to (default: where it was)"), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/archive/files/{{fileid}}"), json!({
        "delete": op("Wipe a deleted file (admin)", vec![file(), idempotency()], write(document_of("Wiped")))
    }));
}

fn property_paths(paths: &mut serde_json::Map<String, Value>) {
    let parents: [(&str, Option<Value>); 4] = [
        ("/pages/{pageid}", Some(id("pageid", "The page's id"))),
        ("/files/{fileid}", Some(id("fileid", "The file's id"))),
        ("/users/{userid}", Some(id("userid", "The user's id"))),
        ("/site", None),
    ];
    for (prefix, parent) in parents {
        let with = |mut extra: Vec<Value>| {
            let mut all: Vec<Value> = parent.iter().cloned().collect();
            all.append(&mut extra);
            all
        };
        let key = || path("key", "The property's key (1-255 characters)");
        let abort = || query("abort", "never, modified (default for PUT) or exists");
        let etag = || query("etag", "The ETag of the head the write is based on");
        let batch = json!({"required": true, "content": {"application/json": {"schema": r("PropertyBatch")}}});
        paths.insert(format!("{API}{prefix}/properties"), json!({
            "get": op("The properties", with(vec![]), read(document_of("Properties"))),
            "post": with_body(op("Create a property named by the Slug header (409 if it exists)",
                with(vec![json!({"name": "Slug", "in": "header", "required": true, "schema": {"type": "string"}}), idempotency()]),
                write(document_of("Property"))), raw_body("The value; Content-Type is its MIME type")),
            "put": with_body(op("Set or delete several properties in one changeset", with(vec![abort(), idempotency()]), write(document_of("Properties"))), batch)
        }));
        paths.insert(format!("{API}{prefix}/properties/{{key}}"), json!({
            "get": op("A property's value", with(vec![key(), revision()]), read(bytes())),
            "put": with_body(op("Set a property", with(vec![key(), abort(), etag(), if_match(), idempotency()]), write(document_of("Property"))), raw_body("The value; Content-Type is its MIME type")),
            "delete": op("Delete a property", with(vec![key(), query("abort", "never (default), modified or exists"), etag(), if_match(), idempotency()]), write(document_of("Property")))
        }));
        paths.insert(format!("{API}{prefix}/properties/{{key}}/info"), json!({
            "get": op("A property's description", with(vec![key(), revision()]), read(document_of("Property")))
        }));
    }
}

fn one_or_many(schema: &str) -> Value {
    json!({"oneOf": [r(schema), {"type": "array", "items": r(schema)}]})
}

fn schemas() -> Value {
    let s = || json!({"type": "string"});
    let attr_ref = || json!({"type": "object", "properties": {"@id": s()}, "required": ["@id"]});
    let contents = json!({"type": "object", "properties": {"@type": s(), "@size": s(), "@href": s()}, "required": ["@type", "@size", "@href"]});
    json!({
        "Error": {"type": "object", "properties": {"error": s()}, "required": ["error"]},
        "File": {"type": "object", "properties": {
            "@id": s(), "@revision": s(), "@res-id": s(), "@href": s(), "@res-is-head": s(),
            "@res-is-deleted": s(), "@res-rev-is-hidden": s(), "@res-contents-id": s(),
            "@res-change-mask": s(), "@etag": s(), "filename": s(), "contents": contents.clone(),
            "date.created": s(), "user.createdby": attr_ref(), "revisions": {"type": "object"},
            "page.parent": attr_ref(), "change-description": s()
        }, "required": ["@id", "@revision", "@etag", "filename", "contents"]},
        "Files": {"type": "object", "properties": {"@count": s(), "@totalcount": s(), "file": one_or_many("File")}, "required": ["@count"]},
        "Archive": {"type": "object", "properties": {"@count": s(), "file.archive": one_or_many("File")}, "required": ["@count"]},
        "Property": {"type": "object", "properties": {
            "@name": s(), "@href": s(), "@etag": s(), "@revision": s(), "@res-id": s(),
            "@res-is-head": s(), "@res-rev-is-hidden": s(), "contents": contents,
            "date.modified": s(), "user.modified": attr_ref(), "change-description": s()
        }, "required": ["@name", "@etag", "@revision", "contents"]},
        "Properties": {"type": "object", "properties": {"@count": s(), "@href": s(), "property": one_or_many("Property")}, "required": ["@count"]},
        "PropertyBatch": {"type": "object", "properties": {"property": {"oneOf": [
            r("PropertyEntry"), {"type": "array", "items": r("PropertyEntry"), "minItems": 1, "maxItems": 100}
        ]}}, "required": ["property"]},
        "PropertyEntry": {"type": "object", "properties": {
            "@name": s(), "@etag": s(),
            "contents": {"oneOf": [s(), {"type": "object", "properties": {"@type": s(), "#text": s()}}]}
        }, "required": ["@name"], "description": "With contents: set; without: delete"},
        "Wiped": {"type": "object", "properties": {"@id": s(), "@wiped": s()}, "required": ["@id"]}
    })
}

/// The document.
pub fn spec() -> Value {
    let mut paths = serde_json::Map::new();
    file_paths(&mut paths);
    property_paths(&mut paths);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Palimpsest resources: MindTouch Deki files and properties",
            "version": "1",
            "description": "Deki's REST API for files and properties with revisions, event-sourced. Writes need an API key (Authorization: Bearer, X-Authtoken, or ?authtoken=); admin routes need the admin token."
        },
        "servers": [{"url": "/resources"}],
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer"},
                "authtoken": {"type": "apiKey", "in": "header", "name": "X-Authtoken"}
            }
        }
    })
}

/// `GET /resources/openapi.json`.
pub async fn document() -> Json<Value> {
    Json(spec())
}
