//! The OpenAPI 3.1 description of the routes, served at `/resources/openapi.json`.
//!
//! Documents are Deki's elements as JSON (attributes as `"@name"` strings, text beside them as
//! `"#text"`, a repeated child as an array and a single one as an object) or XML when `Accept`
//! asks for it; content routes answer the stored bytes with their MIME type.

use axum::Json;
use serde_json::{Value, json};

const API: &str = "/@api/deki";

/// A file name or property key as `params::name` reads it: 1-255 characters, none of them a
/// control character (Unicode `Cc`).
const NAME_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]{1,255}$";

/// `revision=` as `params::revision` reads it: blank or `head` (any case) for the head, else a
/// positive revision number.
const REVISION_PATTERN: &str = "^([Hh][Ee][Aa][Dd]|0*[1-9][0-9]{0,8})?$";

/// A header naming a property (`Slug`): what HTTP leaves after dropping surrounding
/// whitespace must be 1-255 visible ASCII characters, spaces inside.
const SLUG_PATTERN: &str = "^[ \\t]*[!-~]([ -~]{0,253}[!-~])?[ \\t]*$";

/// A header the server reads as text (`If-Match`): visible ASCII, spaces and tabs.
const HEADER_TEXT_PATTERN: &str = "^[\\t -~]*$";

/// Text the store keeps (a property's or description's text): anything but U+0000.
const NO_NUL_PATTERN: &str = "^[^\\u0000]*$";

/// A MIME type given in a batch (`contents/@type`): no control characters and at most 255
/// bytes of UTF-8 (63 characters always fit).
const MIME_PATTERN: &str = "^[^\\u0000-\\u001f\\u007f-\\u009f]{0,63}$";

/// Comma-separated revision numbers (`revisionids=`).
const REVISION_IDS_PATTERN: &str = "^0*[1-9][0-9]{0,8}(,0*[1-9][0-9]{0,8})*$";

/// Comma-separated change kinds (`changefilter=`), any case, blanks skipped.
const CHANGE_FILTER_PATTERN: &str = "^((CONTENT|NAME|LANGUAGE|META|DELETEFLAG|PARENT)?,)*(CONTENT|NAME|LANGUAGE|META|DELETEFLAG|PARENT)?$";

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
    json!({"name": name, "in": "path", "required": true, "schema": {"type": "string", "pattern": NAME_PATTERN}, "description": description})
}

fn id(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "required": true, "schema": {"type": "integer", "minimum": 1, "maximum": 4294967295u64}, "description": description})
}

fn query(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "required": false, "schema": {"type": "string"}, "description": description})
}

/// A query parameter whose values are constrained by `schema`.
fn query_of(name: &str, description: &str, schema: Value) -> Value {
    json!({"name": name, "in": "query", "required": false, "schema": schema, "description": description})
}

fn pattern(pattern: &str) -> Value {
    json!({"type": "string", "pattern": pattern})
}

/// A query parameter naming a page (`to=`).
fn page_query(name: &str, description: &str) -> Value {
    query_of(
        name,
        description,
        json!({"type": "integer", "minimum": 1, "maximum": 4294967295u64}),
    )
}

fn idempotency() -> Value {
    palimpsest_web::command::idempotency_key_parameter()
}

fn if_match() -> Value {
    json!({"name": "If-Match", "in": "header", "required": false, "schema": pattern(HEADER_TEXT_PATTERN),
        "description": "The ETag of the head the write is based on; a stale one is 412"})
}

fn revision() -> Value {
    expected_revision("`head` (default) or a revision number")
}

fn expected_revision(description: &str) -> Value {
    query_of("revision", description, pattern(REVISION_PATTERN))
}

/// Bytes with their MIME type. The server stores any `Content-Type` and answers reads with it;
/// the document names a few binary and text ones, since a fuzzer that sent `text/x-yaml` would
/// then try to parse the stored bytes it reads back as YAML.
fn raw_body(description: &str) -> Value {
    let binary = || json!({"schema": {"type": "string", "format": "binary"}});
    json!({"required": false, "description": format!("{description} (any MIME type)"), "content": {
        "application/octet-stream": binary(), "image/png": binary(), "text/plain": binary()
    }})
}

/// The responses of a read open to anyone (pages' files and properties, files' properties).
fn read(ok: Value) -> Value {
    json!({"200": ok, "400": error("Malformed parameter"), "401": error("Unknown API key"),
        "403": error("A hidden revision (the administrator's to see)"), "404": error("Not found or deleted"),
        "503": error("Read model unavailable")})
}

/// The responses of a read that needs a key: `who` may make it.
fn guarded_read(ok: Value, who: &str) -> Value {
    let mut responses = read(ok);
    responses["401"] = error("No API key, or an unknown one");
    responses["403"] = error(&format!("Only {who} may read this (or a hidden revision)"));
    responses
}

/// The responses of a write.
fn write(ok: Value) -> Value {
    json!({"200": ok, "400": error("Malformed request"), "401": error("No API key, or an unknown one"),
        "403": error("The caller may not: the file (or its properties), the page property or the user's properties are another user's, or only the administrator may (the site's properties, the archive, hidden revisions)"),
        "404": error("Not found or deleted"),
        "409": error("Conflict: stale revision, name taken, property exists, not deleted"),
        "412": error("If-Match / etag does not name the head"),
        "413": {"description": "Body too large"},
        "422": error("Idempotency-Key reused for another request"),
        "503": error("The event log is unavailable")})
}

/// An operation anyone may call (a key, if sent, must be valid).
fn op(summary: &str, parameters: Vec<Value>, responses: Value) -> Value {
    json!({"summary": summary, "parameters": parameters, "responses": responses,
        "security": [{"bearer": []}, {"authtoken": []}, {}]})
}

/// An operation that needs a key or the admin token (every write, and the reads
/// [`guarded_read`] describes): without one it is 401.
fn keyed(summary: &str, parameters: Vec<Value>, responses: Value) -> Value {
    let mut operation = op(summary, parameters, responses);
    operation["security"] = json!([{"bearer": []}, {"authtoken": []}]);
    operation
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
        "put": with_body(keyed("Upload a file (a new resource, or a new revision of the live file of that name)",
            vec![page(), name(), query("description", "Sets the file's description in the same changeset"),
                 expected_revision("The head revision the upload is based on; stale is 409"), query("etag", "The head's ETag"), if_match(), idempotency()],
            write(document_of("File"))), raw_body("The file's bytes; Content-Type is its MIME type")),
        "delete": keyed("Delete a file by name", vec![page(), name(), expected_revision("Expected head"), query("etag", "Expected ETag"), if_match(), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}"), json!({
        "get": op("A file's content", vec![file(), revision()], read(bytes())),
        "put": with_body(keyed("Upload a new revision of a live file by id (its name and page stay)",
            vec![file(), query("description", "Sets the file's description in the same changeset"),
                 expected_revision("The head revision the upload is based on; stale is 409"), query("etag", "The head's ETag"), if_match(), idempotency()],
            write(document_of("File"))), raw_body("The file's bytes; Content-Type is its MIME type")),
        "delete": keyed("Delete a file", vec![file(), expected_revision("Expected head"), query("etag", "Expected ETag"), if_match(), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}/info"), json!({
        "get": op("A file revision's description", vec![file(), revision()], read(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}/revisions"), json!({
        "get": op("The file's revisions", vec![file(), query_of("changefilter", "Comma-separated CONTENT, NAME, LANGUAGE, META, DELETEFLAG, PARENT", pattern(CHANGE_FILTER_PATTERN))], read(document_of("Files"))),
        "post": keyed("Hide or show revisions (admin)", vec![file(), query_of("hide", "true (default) or false", json!({"enum": ["true", "false", "1", "0"]})),
            json!({"name": "revisionids", "in": "query", "required": true, "schema": pattern(REVISION_IDS_PATTERN), "description": "Comma-separated revision numbers"}), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}/move"), json!({
        "post": keyed("Move and/or rename a file", vec![file(), page_query("to", "The target page id"), query_of("name", "The new name", pattern(NAME_PATTERN)), expected_revision("Expected head"), query("etag", "Expected ETag"), if_match(), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/files/{{fileid}}/description"), json!({
        "put": with_body(keyed("Set the file's description", vec![file(), idempotency()], write(document_of("Property"))), json!({"required": false, "description": "The description, UTF-8 text without U+0000", "content": {"text/plain": {"schema": pattern(NO_NUL_PATTERN)}}})),
        "delete": keyed("Remove the file's description", vec![file(), idempotency()], write(document_of("Property")))
    }));
    paths.insert(
        format!("{API}/archive/files"),
        json!({
            "get": keyed("Deleted files (admin)", vec![], guarded_read(document_of("Archive"), "the administrator"))
        }),
    );
    paths.insert(format!("{API}/archive/files/restore/{{fileid}}"), json!({
        "post": keyed("Restore a deleted file (admin), renamed on a name clash", vec![file(), page_query("to", "The page to restore to (default: where it was)"), idempotency()], write(document_of("File")))
    }));
    paths.insert(format!("{API}/archive/files/{{fileid}}"), json!({
        "delete": keyed("Wipe a deleted file (admin)", vec![file(), idempotency()], write(document_of("Wiped")))
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
        // A user's properties are that user's and the administrator's to read, the site's the
        // administrator's; the others anyone's.
        let who = match prefix {
            "/users/{userid}" => Some("that user and the administrator"),
            "/site" => Some("the administrator"),
            _ => None,
        };
        let reader = |summary: &str, parameters: Vec<Value>, responses: Value| match who {
            Some(_) => keyed(summary, parameters, responses),
            None => op(summary, parameters, responses),
        };
        let readable = |ok: Value| match who {
            Some(who) => guarded_read(ok, who),
            None => read(ok),
        };
        let key = || path("key", "The property's key (1-255 characters)");
        let aborts = || json!({"enum": ["never", "modified", "exists"]});
        let abort = || {
            query_of(
                "abort",
                "never, modified (default for PUT) or exists",
                aborts(),
            )
        };
        let etag = || query("etag", "The ETag of the head the write is based on");
        let batch = json!({"required": true,
            "description": "The batch as JSON, or as Deki's XML document with `Content-Type: application/xml` (or `text/xml`): `<properties><property name=\"…\" etag=\"…\"><contents type=\"…\">…</contents></property></properties>`, a property without `<contents>` deleted",
            "content": {"application/json": {"schema": r("PropertyBatch")}}});
        paths.insert(format!("{API}{prefix}/properties"), json!({
            "get": reader("The properties", with(vec![]), readable(document_of("Properties"))),
            "post": with_body(keyed("Create a property named by the Slug header (409 if it exists)",
                with(vec![json!({"name": "Slug", "in": "header", "required": true, "schema": pattern(SLUG_PATTERN)}), idempotency()]),
                write(document_of("Property"))), raw_body("The value; Content-Type is its MIME type")),
            "put": with_body(keyed("Set or delete several properties in one changeset", with(vec![abort(), idempotency()]), write(document_of("Properties"))), batch)
        }));
        paths.insert(format!("{API}{prefix}/properties/{{key}}"), json!({
            "get": reader("A property's value", with(vec![key(), revision()]), readable(bytes())),
            "put": with_body(keyed("Set a property", with(vec![key(), abort(), etag(), if_match(), idempotency()]), write(document_of("Property"))), raw_body("The value; Content-Type is its MIME type")),
            "delete": keyed("Delete a property", with(vec![key(), query_of("abort", "never (default), modified or exists", aborts()), etag(), if_match(), idempotency()]), write(document_of("Property")))
        }));
        paths.insert(format!("{API}{prefix}/properties/{{key}}/info"), json!({
            "get": reader("A property's description", with(vec![key(), revision()]), readable(document_of("Property")))
        }));
    }
}

/// `schema` (a string's), or null: the batch reads a null field as an absent one.
fn or_null(mut schema: Value) -> Value {
    schema["type"] = json!(["string", "null"]);
    schema
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
            "@name": pattern(NAME_PATTERN), "@etag": or_null(s()),
            "contents": {"oneOf": [pattern(NO_NUL_PATTERN), {"type": "null"}, {"type": "object", "properties": {
                "@type": or_null(pattern(MIME_PATTERN)), "#text": or_null(pattern(NO_NUL_PATTERN))
            }}]}
        }, "required": ["@name"], "description": "With contents: set; without (or null): delete. A null `@etag`, `@type` or `#text` is as if absent"},
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
            "description": "Deki's REST API for files and properties with revisions, event-sourced. Writes need an API key (Authorization: Bearer, X-Authtoken, or ?authtoken=), checked before the body is read; admin routes need the admin token. A file, its description and its properties are written by the user who created the file; a page's property by the user who created it; a user's properties are read and written by that user; the site's properties by the administrator, who may write everything. Anyone with a key may add a file or a property to a page."
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the route needs a key: every write, and the reads of a user's or the site's
    /// properties and of the archive.
    fn needs_key(path: &str, method: &str) -> bool {
        method != "get"
            || path.starts_with(&format!("{API}/users/"))
            || path.starts_with(&format!("{API}/site/"))
            || path.starts_with(&format!("{API}/archive/"))
    }

    #[test]
    fn every_operation_says_whether_it_needs_a_key_and_answers_401_and_403() {
        let spec = spec();
        let paths = spec["paths"].as_object().expect("paths");
        for (path, operations) in paths {
            for (method, operation) in operations.as_object().expect("operations") {
                let anonymous = operation["security"]
                    .as_array()
                    .expect("security")
                    .iter()
                    .any(|scheme| scheme.as_object().is_some_and(|s| s.is_empty()));
                assert_eq!(anonymous, !needs_key(path, method), "{method} {path}");
                for status in ["401", "403"] {
                    assert!(
                        operation["responses"][status].is_object(),
                        "{method} {path} documents {status}"
                    );
                }
            }
        }
    }
}
