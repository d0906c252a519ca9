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
    docs.as_admin("PUT", "/db", None).await;
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

/// The read model's rows, for comparing the live one with a replay.
async fn dump(docs: &Docs) -> Vec<Vec<Value>> {
    let mut out = Vec::new();
    for sql in [
        "SELECT * FROM docs.kv ORDER BY db, key",
        "SELECT * FROM docs.channels ORDER BY db, channel, key",
        "SELECT * FROM docs.access ORDER BY db, grantee, channel, key",
        "SELECT * FROM docs.role_access ORDER BY db, grantee, role, key",
        "SELECT * FROM docs.old_revs ORDER BY db, key, rev",
    ] {
        out.push(docs.rows(sql).await);
    }
    out
}

async fn events_of(docs: &Docs, event_type: &str) -> i64 {
    docs.rows(&format!(
        "SELECT count(*) AS n FROM log.events WHERE event_type = '{event_type}'"
    ))
    .await[0]["n"]
        .as_i64()
        .expect("count")
}

#[tokio::test]
async fn purge_removes_documents_from_the_read_model_and_the_log_keeps_them() {
    let docs = Docs::start().await;
    assert_eq!(docs.admin("PUT", "/_admin/db", "{}").await.0, 201);
    for id in ["a", "b"] {
        let body = json!({"channels": ["c"], "id": id}).to_string();
        assert_eq!(docs.admin("PUT", &format!("/db/{id}"), &body).await.0, 201);
    }
    let (_, current) = docs.admin("GET", "/db/a", "").await;
    let rev: Value = serde_json::from_str(&current).expect("json");
    let body = json!({"_rev": rev["_rev"], "channels": ["c"], "n": 2}).to_string();
    assert_eq!(docs.admin("PUT", "/db/a", &body).await.0, 201);
    assert_eq!(
        docs.call("POST", "/_admin/db/_purge", Some(json!({"a": ["*"]})))
            .await
            .0,
        401,
        "admin only"
    );
    let asked = json!({"a": ["*"], "b": ["1-abc"], "nope": ["*"]}).to_string();
    let (status, purged) = docs.admin("POST", "/_admin/db/_purge", &asked).await;
    assert_eq!(status, 200, "{purged}");
    assert_eq!(
        serde_json::from_str::<Value>(&purged).expect("json"),
        json!({"purged": {"a": ["*"]}})
    );
    assert_eq!(docs.admin("GET", "/db/a", "").await.0, 404);
    assert_eq!(docs.admin("GET", "/db/b", "").await.0, 200);
    let (_, changes) = docs.admin("GET", "/db/_changes", "").await;
    let changes: Value = serde_json::from_str(&changes).expect("json");
    let ids: Vec<&str> = changes["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids, ["b"]);
    assert_eq!(events_of(&docs, "DocumentPurged").await, 1);
    assert_eq!(
        events_of(&docs, "RevisionStored").await,
        3,
        "the log keeps the history"
    );
    let (status, again) = docs.admin("PUT", "/db/a", r#"{"fresh":true}"#).await;
    assert_eq!(status, 201, "{again}");
    assert!(again.contains("\"1-"), "a new tree: {again}");
    let (_, bad) = docs.admin("POST", "/_admin/db/_purge", "[]").await;
    assert!(bad.contains("bad_request"), "{bad}");
    let live = dump(&docs).await;
    docs.rebuild().await;
    assert_eq!(dump(&docs).await, live);
    docs.stop().await;
}

#[tokio::test]
async fn resync_reroutes_the_documents_the_new_sync_function_routes_differently() {
    let docs = Docs::start().await;
    let config = json!({"sync": "function(doc) { channel(doc.tag); }"});
    assert_eq!(
        docs.admin("PUT", "/_admin/db", &config.to_string()).await.0,
        201
    );
    for (id, tag) in [("x", "red"), ("y", "blue")] {
        let body = json!({"tag": tag}).to_string();
        assert_eq!(docs.admin("PUT", &format!("/db/{id}"), &body).await.0, 201);
    }
    // More documents than one resync command takes: the call runs several.
    let many: Vec<Value> = (0..250)
        .map(|i| json!({"_id": format!("m{i:03}"), "tag": "green"}))
        .collect();
    let (status, _) = docs
        .admin("POST", "/db/_bulk_docs", &json!({"docs": many}).to_string())
        .await;
    assert_eq!(status, 201);
    let warm = json!({"password": "pw-ann", "admin_channels": ["warm"]}).to_string();
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_user/ann", &warm).await.0,
        200
    );
    let source = "function(doc) { channel(doc.tag == 'red' ? 'warm' : 'cold'); }";
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_config/sync", source).await.0,
        200
    );
    let (_, before) = docs
        .as_user("ann", "pw-ann", "GET", "/db/_changes", None)
        .await;
    assert_eq!(
        before["results"],
        json!([]),
        "the new function ran on nothing yet"
    );
    let (status, status_body) = docs.admin("POST", "/_admin/db/_resync", "").await;
    assert_eq!(status, 200, "{status_body}");
    let answer: Value = serde_json::from_str(&status_body).expect("json");
    assert_eq!(
        (
            answer["status"].clone(),
            answer["docs_changed"].clone(),
            answer["docs_processed"].clone()
        ),
        (json!("completed"), json!(252), json!(252))
    );
    let (_, after) = docs
        .as_user("ann", "pw-ann", "GET", "/db/_changes", None)
        .await;
    let ids: Vec<&str> = after["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids, ["x"]);
    let (_, raw) = docs.admin("GET", "/_admin/db/_raw/x", "").await;
    let raw: Value = serde_json::from_str(&raw).expect("json");
    assert_eq!(raw["_sync"]["channels"]["warm"], Value::Null);
    assert!(raw["_sync"]["channels"]["red"]["seq"].is_i64(), "{raw}");
    let head = docs.head().await;
    let (_, again) = docs.admin("POST", "/_admin/db/_resync", "").await;
    let again: Value = serde_json::from_str(&again).expect("json");
    assert_eq!(again["docs_changed"], 0);
    assert_eq!(docs.head().await, head, "nothing to change appends nothing");
    assert_eq!(events_of(&docs, "DocumentResynced").await, 252);
    let live = dump(&docs).await;
    docs.rebuild().await;
    assert_eq!(dump(&docs).await, live);
    docs.stop().await;
}

#[tokio::test]
async fn roles_granted_by_a_document_open_their_channels_until_the_document_revokes_them() {
    let docs = Docs::start().await;
    let config =
        json!({"sync": "function(doc) { channel(doc.channels); role(doc.member, doc.role); }"});
    assert_eq!(
        docs.admin("PUT", "/_admin/db", &config.to_string()).await.0,
        201
    );
    let editor = json!({"admin_channels": ["ed"]}).to_string();
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_role/editor", &editor)
            .await
            .0,
        200
    );
    let ann = json!({"password": "pw-ann", "admin_channels": ["own"]}).to_string();
    assert_eq!(docs.admin("PUT", "/_admin/db/_user/ann", &ann).await.0, 200);
    let body = json!({"channels": ["ed"]}).to_string();
    assert_eq!(docs.admin("PUT", "/db/e1", &body).await.0, 201);
    let ann_reads = |path: &'static str| {
        let docs = &docs;
        async move { docs.as_user("ann", "pw-ann", "GET", path, None).await }
    };
    assert_eq!(ann_reads("/db/e1").await.0, 403);
    let grant = json!({"member": "ann", "role": "role:editor"}).to_string();
    let (status, created) = docs.admin("PUT", "/db/grant", &grant).await;
    assert_eq!(status, 201, "{created}");
    let rev = serde_json::from_str::<Value>(&created).expect("json")["rev"].clone();
    assert_eq!(ann_reads("/db/e1").await.0, 200);
    let (_, user) = docs.admin("GET", "/_admin/db/_user/ann", "").await;
    let user: Value = serde_json::from_str(&user).expect("json");
    assert_eq!(user["admin_roles"], json!([]));
    assert_eq!(user["roles"], json!(["editor"]));
    assert_eq!(user["all_channels"], json!(["!", "ed", "own"]));
    let (_, changes) = ann_reads("/db/_changes").await;
    assert_eq!(changes["results"][0]["id"], "e1", "{changes}");
    let (_, raw) = docs.admin("GET", "/_admin/db/_raw/grant", "").await;
    assert!(
        raw.contains(r#""role_access":{"ann":["role:editor"]}"#),
        "{raw}"
    );
    let since = changes["last_seq"].as_i64().expect("last_seq");
    // Revocation: the granting document changes; then (granted again) it is deleted.
    let changed = json!({"_rev": rev, "member": "bob", "role": "role:editor"}).to_string();
    let (_, changed) = docs.admin("PUT", "/db/grant", &changed).await;
    let (status, gone) = ann_reads("/db/e1").await;
    assert_eq!((status, gone["_removed"].clone()), (200, json!(true)));
    let path = format!("/db/_changes?since={since}");
    let (_, changes) = docs.as_user("ann", "pw-ann", "GET", &path, None).await;
    assert_eq!(
        changes["results"].as_array().map(Vec::len),
        Some(1),
        "{changes}"
    );
    assert_eq!(changes["results"][0]["id"], "e1");
    assert_eq!(changes["results"][0]["removed"], json!(["ed"]));
    let after = changes["last_seq"].as_i64().expect("last_seq");
    assert!(after > since);
    let path = format!("/db/_changes?since={after}");
    let (_, once) = docs.as_user("ann", "pw-ann", "GET", &path, None).await;
    assert_eq!(once["results"], json!([]), "removed appears once: {once}");
    let (_, bulk) = docs
        .as_user(
            "ann",
            "pw-ann",
            "POST",
            "/db/_bulk_get",
            Some(json!({"docs": [{"id": "e1"}]})),
        )
        .await;
    assert_eq!(
        bulk["results"][0]["docs"][0]["ok"]["_removed"], true,
        "{bulk}"
    );
    let rev = serde_json::from_str::<Value>(&changed).expect("json")["rev"].clone();
    let again = json!({"_rev": rev, "member": "ann", "role": "role:editor"}).to_string();
    let (_, again) = docs.admin("PUT", "/db/grant", &again).await;
    assert_eq!(ann_reads("/db/e1").await.0, 200);
    let rev = serde_json::from_str::<Value>(&again).expect("json")["rev"]
        .as_str()
        .expect("rev")
        .to_owned();
    assert_eq!(
        docs.admin("DELETE", &format!("/db/grant?rev={rev}"), "")
            .await
            .0,
        200
    );
    let (status, gone) = ann_reads("/db/e1").await;
    assert_eq!(
        (status, gone["_removed"].clone()),
        (200, json!(true)),
        "deleting the grant revokes it"
    );
    // bob held the role in between and lost it too; cy never had it, so never had its documents.
    let pw = json!({"password": "pw-x"}).to_string();
    for user in ["bob", "cy"] {
        let path = format!("/_admin/db/_user/{user}");
        assert_eq!(docs.admin("PUT", &path, &pw).await.0, 200);
    }
    let (_, bob) = docs.as_user("bob", "pw-x", "GET", "/db/e1", None).await;
    assert_eq!(bob["_removed"], true, "{bob}");
    let (status, _) = docs.as_user("cy", "pw-x", "GET", "/db/e1", None).await;
    assert_eq!(status, 403);
    // The revoked grants are rows a replay writes the same.
    let live = dump(&docs).await;
    assert!(
        live[3].iter().any(|row| row["revoked_seq"].is_i64()),
        "{live:?}"
    );
    docs.rebuild().await;
    assert_eq!(dump(&docs).await, live);
    docs.stop().await;
}

#[tokio::test]
async fn open_revs_answers_multipart_to_a_replicator_that_names_it() {
    let docs = Docs::start().await;
    let (rev1, rev2) = attached(&docs).await;
    let path =
        format!("/db/a?open_revs=[\"{rev2}\",\"9-zzz\"]&attachments=true&atts_since=[\"{rev1}\"]");
    let client = reqwest::Client::new();
    let json: Value = client
        .get(docs.url(&path))
        .header("accept", "application/json")
        .send()
        .await
        .expect("json")
        .json()
        .await
        .expect("json body");
    let response = client
        .get(docs.url(&path))
        .header("accept", "multipart/mixed")
        .send()
        .await
        .expect("multipart");
    let content_type = response.headers()["content-type"]
        .to_str()
        .expect("type")
        .to_owned();
    assert!(
        content_type.starts_with("multipart/mixed"),
        "{content_type}"
    );
    let body = response.bytes().await.expect("bytes");
    let (items, followed) = as_json_items(&content_type, &body);
    assert_eq!(followed, ["two.bin"], "atts_since holds one.txt back");
    let expected: Vec<Value> = json
        .as_array()
        .expect("items")
        .iter()
        .map(|item| match item.get("missing") {
            Some(_) => json!({"error": item}),
            None => item.clone(),
        })
        .collect();
    assert_eq!(items, expected);
    // `*/*` (any client that does not say) keeps JSON.
    let (_, plain) = docs.call("GET", &path, None).await;
    assert_eq!(plain, json);
    docs.stop().await;
}
