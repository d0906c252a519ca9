//! The replication wire beyond the basics: `_bulk_get` as multipart, `atts_since`, roles granted
//! by documents, and the admin `_purge` and `_resync`.

mod common;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::Docs;
use serde_json::{Value, json};
use std::collections::HashMap;

/// One part of a multipart body: its headers (lower-case names) and its bytes.
type Part = (HashMap<String, String>, Vec<u8>);

fn find(haystack: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    (from..=haystack.len().saturating_sub(needle.len()))
        .find(|&i| haystack[i..].starts_with(needle))
}

/// The parts of a multipart body delimited by `boundary` (RFC 2046: a delimiter is CRLF, `--`
/// and the boundary; the first may start the body; the last is followed by `--`).
fn parts(body: &[u8], boundary: &str) -> Vec<Part> {
    let mut text = b"\r\n".to_vec();
    text.extend_from_slice(body);
    let delimiter = format!("\r\n--{boundary}").into_bytes();
    let mut at = find(&text, &delimiter, 0).expect("a first delimiter") + delimiter.len();
    let mut out = Vec::new();
    while !text[at..].starts_with(b"--") {
        let end = find(&text, &delimiter, at).expect("a closing delimiter");
        let part = &text[at..end];
        let part = part
            .strip_prefix(b"\r\n")
            .expect("CRLF after the delimiter");
        let split = find(part, b"\r\n\r\n", 0).expect("headers end");
        let headers = String::from_utf8(part[..split].to_vec())
            .expect("headers")
            .split("\r\n")
            .filter_map(|line| line.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        out.push((headers, part[split + 4..].to_vec()));
        at = end + delimiter.len();
    }
    out
}

/// The boundary parameter of a multipart content type.
fn boundary_of(content_type: &str) -> String {
    content_type
        .split(';')
        .filter_map(|p| p.trim().strip_prefix("boundary="))
        .map(|b| b.trim_matches('"').to_owned())
        .next()
        .expect("a boundary")
}

/// A multipart `_bulk_get` answer read back into the JSON form's `docs` items, attachments that
/// followed put back inline as base64 `data`; also the names of the attachments that followed.
fn as_json_items(content_type: &str, body: &[u8]) -> (Vec<Value>, Vec<String>) {
    let mut items = Vec::new();
    let mut followed = Vec::new();
    for (headers, bytes) in parts(body, &boundary_of(content_type)) {
        let kind = headers["content-type"].clone();
        if kind.starts_with("multipart/related") {
            let inner = parts(&bytes, &boundary_of(&kind));
            assert_eq!(inner[0].0["content-type"], "application/json");
            let mut doc: Value = serde_json::from_slice(&inner[0].1).expect("json part");
            assert_eq!(headers["x-doc-id"], doc["_id"].as_str().expect("id"));
            assert_eq!(headers["x-rev-id"], doc["_rev"].as_str().expect("rev"));
            let following: Vec<String> = doc["_attachments"]
                .as_object()
                .expect("attachments")
                .iter()
                .filter(|(_, a)| a["follows"] == true)
                .map(|(name, _)| name.clone())
                .collect();
            assert_eq!(following.len(), inner.len() - 1, "one part per follows");
            for (name, (att_headers, data)) in following.iter().zip(&inner[1..]) {
                assert_eq!(
                    att_headers["content-disposition"],
                    format!("attachment; filename=\"{name}\"")
                );
                assert_eq!(att_headers["content-length"], data.len().to_string());
                let att = &mut doc["_attachments"][name];
                assert_eq!(att_headers["content-type"], att["content_type"]);
                let entry = att.as_object_mut().expect("entry");
                entry.remove("follows");
                entry.insert("data".into(), json!(STANDARD.encode(data)));
                followed.push(name.clone());
            }
            items.push(json!({"ok": doc}));
        } else if kind == "application/json; error=\"true\"" {
            let error: Value = serde_json::from_slice(&bytes).expect("error json");
            items.push(json!({"error": error}));
        } else {
            assert_eq!(kind, "application/json");
            let doc: Value = serde_json::from_slice(&bytes).expect("json");
            items.push(json!({"ok": doc}));
        }
    }
    (items, followed)
}

/// A `_bulk_get` as JSON and as multipart; both answers.
async fn bulk_get(docs: &Docs, query: &str, body: &Value) -> (Value, String, Vec<u8>) {
    let client = reqwest::Client::new();
    let url = docs.url(&format!("/db/_bulk_get{query}"));
    let json: Value = client
        .post(&url)
        .header("accept", "application/json")
        .json(body)
        .send()
        .await
        .expect("json")
        .json()
        .await
        .expect("json body");
    let response = client
        .post(&url)
        .header("accept", "multipart/mixed")
        .json(body)
        .send()
        .await
        .expect("multipart");
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response.headers()["content-type"]
        .to_str()
        .expect("type")
        .to_owned();
    assert!(
        content_type.starts_with("multipart/mixed"),
        "{content_type}"
    );
    let bytes = response.bytes().await.expect("bytes").to_vec();
    (json, content_type, bytes)
}

/// `a`: `one.txt` added at generation 1, `two.bin` (binary) at generation 2; `plain`: none.
async fn attached(docs: &Docs) -> (String, String) {
    docs.call("PUT", "/db", None).await;
    let one = json!({"_attachments": {"one.txt": {"content_type": "text/plain", "data": STANDARD.encode("first")}}});
    let (status, created) = docs.call("PUT", "/db/a", Some(one)).await;
    assert_eq!(status, 201, "{created}");
    let rev1 = created["rev"].as_str().expect("rev").to_owned();
    let two = json!({"_rev": rev1, "n": 2, "_attachments": {
        "one.txt": {"stub": true},
        "two.bin": {"content_type": "application/octet-stream", "data": STANDARD.encode([0u8, 13, 10, 45, 45, 255])}
    }});
    let (status, updated) = docs.call("PUT", "/db/a", Some(two)).await;
    assert_eq!(status, 201, "{updated}");
    assert_eq!(
        docs.call("PUT", "/db/plain", Some(json!({"p": true})))
            .await
            .0,
        201
    );
    (rev1, updated["rev"].as_str().expect("rev").to_owned())
}

#[tokio::test]
async fn bulk_get_answers_multipart_as_couchdb_and_it_carries_what_the_json_form_does() {
    let docs = Docs::start().await;
    let (rev1, rev2) = attached(&docs).await;
    let asked = json!({"docs": [
        {"id": "a", "rev": rev2},
        {"id": "plain"},
        {"id": "nope", "rev": "1-abc"},
        {"id": "a", "rev": "9-zzz"},
        {"id": "a", "rev": rev1},
        {"rev": "1-abc"},
    ]});
    let (json, content_type, body) = bulk_get(&docs, "?revs=true&attachments=true", &asked).await;
    let (items, followed) = as_json_items(&content_type, &body);
    let expected: Vec<Value> = json["results"]
        .as_array()
        .expect("results")
        .iter()
        .flat_map(|r| r["docs"].as_array().expect("docs").clone())
        .map(|mut item| {
            // A multipart error part for a missing revision names no id, as CouchDB's.
            if item["error"]["error"] == "not_found"
                && let Some(error) = item["error"].as_object_mut()
            {
                error.remove("id");
            }
            item
        })
        .collect();
    assert_eq!(items, expected);
    assert_eq!(followed, ["one.txt", "two.bin"]);
    let a = &json["results"][0]["docs"][0]["ok"];
    assert_eq!(a["_revisions"]["start"], 2);
    assert_eq!(a["_attachments"]["two.bin"]["data"], "AA0KLS3/");
    assert_eq!(json["results"][2]["docs"][0]["error"]["error"], "not_found");
    assert_eq!(json["results"][3]["docs"][0]["error"]["rev"], "9-zzz");
    assert_eq!(
        json["results"][4]["docs"][0]["error"]["error"], "not_found",
        "the read model keeps the bodies of leaves only"
    );
    assert_eq!(
        json["results"][5]["docs"][0]["error"]["error"],
        "bad_request"
    );
    // Without attachments=true every attachment is a stub and every part plain JSON.
    let (json, content_type, body) = bulk_get(&docs, "", &asked).await;
    let (items, followed) = as_json_items(&content_type, &body);
    assert!(followed.is_empty());
    assert_eq!(
        items[0]["ok"]["_attachments"]["one.txt"]["stub"],
        json!(true)
    );
    assert_eq!(items[0], json["results"][0]["docs"][0]);
    docs.stop().await;
}

#[tokio::test]
async fn bulk_get_honours_latest_atts_since_and_refuses_what_couchdb_refuses() {
    let docs = Docs::start().await;
    let (rev1, rev2) = attached(&docs).await;
    // atts_since: the client holds rev1, so only the attachment added after it comes whole.
    let asked = json!({"docs": [{"id": "a", "rev": rev2, "atts_since": [rev1, "1-nothere"]}]});
    let (json, content_type, body) = bulk_get(&docs, "", &asked).await;
    let atts = &json["results"][0]["docs"][0]["ok"]["_attachments"];
    assert_eq!(atts["one.txt"]["stub"], true, "{json}");
    assert!(atts["one.txt"].get("data").is_none());
    assert_eq!(atts["two.bin"]["data"], "AA0KLS3/");
    let (_, followed) = as_json_items(&content_type, &body);
    assert_eq!(followed, ["two.bin"]);
    // latest: a superseded revision answers with its leaf.
    let (json, _, _) = bulk_get(
        &docs,
        "?latest=true",
        &json!({"docs": [{"id": "a", "rev": rev1}]}),
    )
    .await;
    assert_eq!(json["results"][0]["docs"][0]["ok"]["_rev"], rev2);
    let (json, _, _) = bulk_get(
        &docs,
        "",
        &json!({"docs": [{"id": "a", "rev": rev2, "atts_since": "x"}]}),
    )
    .await;
    assert_eq!(
        json["results"][0]["docs"][0]["error"]["reason"],
        "att_since value must be array of revs."
    );
    let (status, refused) = docs
        .call(
            "POST",
            "/db/_bulk_get?rev=1-a",
            Some(json!({"docs": [{"id": "a"}]})),
        )
        .await;
    assert_eq!(
        (status, refused["error"].clone()),
        (400, json!("bad_request"))
    );
    docs.stop().await;
}

#[tokio::test]
async fn a_document_read_with_atts_since_carries_only_the_newer_attachments() {
    let docs = Docs::start().await;
    let (rev1, rev2) = attached(&docs).await;
    let (status, got) = docs
        .call("GET", &format!("/db/a?atts_since=[\"{rev1}\"]"), None)
        .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["_attachments"]["one.txt"]["stub"], true);
    assert_eq!(got["_attachments"]["two.bin"]["data"], "AA0KLS3/");
    // A held revision off the path (or none held) sends everything.
    let (_, all) = docs.call("GET", "/db/a?atts_since=[\"1-abc\"]", None).await;
    assert_eq!(
        all["_attachments"]["one.txt"]["data"],
        STANDARD.encode("first")
    );
    let (_, held) = docs
        .call("GET", &format!("/db/a?atts_since=[\"{rev2}\"]"), None)
        .await;
    assert_eq!(held["_attachments"]["two.bin"]["stub"], true);
    let (_, open) = docs
        .call(
            "GET",
            &format!("/db/a?open_revs=[\"{rev2}\"]&atts_since=[\"{rev1}\"]"),
            None,
        )
        .await;
    let atts = &open[0]["ok"]["_attachments"];
    assert_eq!(atts["one.txt"]["stub"], true, "{open}");
    assert_eq!(atts["two.bin"]["data"], "AA0KLS3/");
    assert_eq!(docs.call("GET", "/db/a?atts_since=nope", None).await.0, 400);
    docs.stop().await;
}
