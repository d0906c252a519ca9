//! Issue #25's revision defects through HTTP: an attachment stub resolves only within the
//! document's own revision history (else 412 `missing_stub`), a `new_edits=false` revision meets
//! the sync function with the current winner as `oldDoc`, every read route returns a revision
//! only to a caller in that revision's channels, and bodies that would break a download or the
//! JavaScript engine (control characters in `content_type`, deep nesting) are refused with 400.
//! Each refusal is checked to append nothing.

mod common;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::Docs;
use md5::{Digest, Md5};
use serde_json::{Value, json};

/// Only the document's owner may change it, checked against the existing document
/// (`oldDoc`); a new one must name its writer as owner.
const OWNED: &str = "function(doc, oldDoc) { \
    if (oldDoc && !oldDoc._deleted) { requireUser(oldDoc.owner); } else { requireUser(doc.owner); } \
    channel(doc.channels); }";

/// Anyone may write anything (Sync Gateway's default): only reads are guarded.
const OPEN: &str = "function(doc) { channel(doc.channels); }";

/// Bob's secret, which Alice must never read.
const SECRET: &str = "bob's secret";

/// The app with database `db` (sync function `sync`), Alice in `ch-a` and Bob in `ch-b`.
async fn started(db: &str, sync: &str) -> Docs {
    let docs = Docs::start().await;
    add_database(&docs, db, sync).await;
    docs
}

async fn add_database(docs: &Docs, db: &str, sync: &str) {
    let config = json!({ "sync": sync }).to_string();
    let (status, answer) = docs.admin("PUT", &format!("/_admin/{db}"), &config).await;
    assert_eq!(status, 201, "{answer}");
    for (name, channel) in [("alice", "ch-a"), ("bob", "ch-b")] {
        let user = json!({"password": "pw", "admin_channels": [channel]}).to_string();
        let path = format!("/_admin/{db}/_user/{name}");
        assert_eq!(docs.admin("PUT", &path, &user).await.0, 200);
    }
}

/// A request as `name` (password `pw`).
async fn call(
    docs: &Docs,
    name: &str,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> (u16, Value) {
    docs.as_user(name, "pw", method, path, body).await
}

/// Bob's `doc-b` in `db`: owned by him, in `ch-b`, with a text attachment; its rev.
async fn bobs_document(docs: &Docs, db: &str) -> String {
    let body = json!({
        "owner": "bob", "channels": ["ch-b"], "secret": SECRET,
        "_attachments": {"note.txt": {"content_type": "text/plain", "data": STANDARD.encode(SECRET)}}
    });
    let (status, answer) = call(docs, "bob", "PUT", &format!("/{db}/doc-b"), Some(body)).await;
    assert_eq!(status, 201, "{answer}");
    answer["rev"].as_str().expect("rev").to_owned()
}

/// Alice's replicated branch for `doc-b`, generation 9, sharing no ancestor with Bob's.
fn alices_graft() -> (String, Value) {
    let rev = format!("9-{}", "a".repeat(32));
    let body = json!({"new_edits": false, "docs": [
        {"_id": "doc-b", "_rev": rev, "owner": "alice", "channels": ["ch-a"]}
    ]});
    (rev, body)
}

/// A request as Alice asking for `multipart/mixed` only; the answer's text.
async fn multipart(docs: &Docs, method: &str, path: &str, body: Option<Value>) -> String {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut request = reqwest::Client::new()
        .request(method, docs.url(path))
        .basic_auth("alice", Some("pw"))
        .header("accept", "multipart/mixed");
    if let Some(body) = body {
        request = request.json(&body);
    }
    let response = request.send().await.expect("request");
    assert_eq!(response.status(), 200, "{path}");
    let text = response.text().await.expect("body");
    assert!(
        text.contains("\"_id\":\"doc-b\""),
        "an answer for doc-b: {text}"
    );
    text
}

fn couch_md5(data: &[u8]) -> String {
    format!("md5-{}", STANDARD.encode(Md5::digest(data)))
}

#[tokio::test]
async fn a_graft_onto_another_users_document_meets_the_sync_function_with_the_winner() {
    let docs = started("db", OWNED).await;
    let bobs = bobs_document(&docs, "db").await;
    let before = docs.head().await;
    let (rev, graft) = alices_graft();
    let (status, answer) = call(&docs, "alice", "POST", "/db/_bulk_docs", Some(graft)).await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(answer[0]["error"], "forbidden", "{answer}");
    // The issue's own body (no owner) is refused as well, and so is the single-document form.
    let bare =
        json!({"new_edits": false, "docs": [{"_id": "doc-b", "_rev": rev, "channels": ["ch-a"]}]});
    let (_, answer) = call(&docs, "alice", "POST", "/db/_bulk_docs", Some(bare)).await;
    assert_eq!(answer[0]["error"], "forbidden", "{answer}");
    let single = json!({"_rev": rev, "owner": "alice", "channels": ["ch-a"]});
    let path = "/db/doc-b?new_edits=false";
    let (status, answer) = call(&docs, "alice", "PUT", path, Some(single)).await;
    assert_eq!(
        (status, answer["error"].clone()),
        (403, json!("forbidden")),
        "{answer}"
    );
    assert_eq!(docs.head().await, before, "nothing was appended");
    let (status, doc) = call(&docs, "bob", "GET", "/db/doc-b", None).await;
    assert_eq!(
        (status, doc["_rev"].as_str()),
        (200, Some(bobs.as_str())),
        "{doc}"
    );
    assert_eq!(doc["secret"], SECRET, "Bob still reads his body: {doc}");
    // Bob's own replicated revision on his branch still passes.
    let next = json!({"new_edits": false, "docs": [{
        "_id": "doc-b", "_rev": format!("2-{}", "b".repeat(32)), "owner": "bob", "channels": ["ch-b"],
        "_revisions": {"start": 2, "ids": ["b".repeat(32), bobs.split_once('-').expect("rev").1]}
    }]});
    let (status, answer) = call(&docs, "bob", "POST", "/db/_bulk_docs", Some(next)).await;
    assert_eq!((status, answer), (201, json!([])));
    docs.stop().await;
}

#[tokio::test]
async fn each_read_route_returns_a_revision_only_to_a_caller_in_its_channels() {
    let docs = started("db", OPEN).await;
    let bobs = bobs_document(&docs, "db").await;
    let (rev, graft) = alices_graft();
    let (status, answer) = call(&docs, "alice", "POST", "/db/_bulk_docs", Some(graft)).await;
    assert_eq!(
        (status, answer),
        (201, json!([])),
        "the open function lets anyone write"
    );
    let leaked = |answer: &Value| answer.to_string().contains(SECRET);

    let (status, all) = call(&docs, "alice", "GET", "/db/doc-b?open_revs=all", None).await;
    assert_eq!(status, 200);
    assert!(!leaked(&all), "open_revs=all: {all}");
    assert_eq!(
        all.as_array().map(Vec::len),
        Some(1),
        "only her own leaf: {all}"
    );
    assert_eq!(all[0]["ok"]["_rev"], json!(rev));

    let path = format!("/db/doc-b?rev={bobs}");
    let (status, one) = call(&docs, "alice", "GET", &path, None).await;
    assert_eq!(
        (status, one["_removed"].clone()),
        (200, json!(true)),
        "{one}"
    );
    assert!(!leaked(&one), "rev=: {one}");

    let path = format!("/db/doc-b?open_revs=[\"{bobs}\"]&revs=true");
    let (_, named) = call(&docs, "alice", "GET", &path, None).await;
    assert_eq!(named[0]["ok"]["_removed"], json!(true), "{named}");
    assert!(!leaked(&named), "open_revs=[…]: {named}");

    for entry in [json!({"id": "doc-b"}), json!({"id": "doc-b", "rev": bobs})] {
        let body = json!({ "docs": [entry] });
        let (status, bulk) = call(
            &docs,
            "alice",
            "POST",
            "/db/_bulk_get?attachments=true",
            Some(body),
        )
        .await;
        assert_eq!(status, 200);
        assert!(!leaked(&bulk), "_bulk_get: {bulk}");
        assert!(
            !bulk.to_string().contains(&STANDARD.encode(SECRET)),
            "{bulk}"
        );
    }

    // The multipart forms a replicator asks for (`open_revs` and `_bulk_get`).
    for (method, path, body) in [
        ("GET", "/db/doc-b?open_revs=all&attachments=true", None),
        (
            "GET",
            &*format!("/db/doc-b?open_revs=[\"{bobs}\"]&attachments=true"),
            None,
        ),
        (
            "POST",
            "/db/_bulk_get?attachments=true",
            Some(json!({"docs": [{"id": "doc-b"}]})),
        ),
    ] {
        let text = multipart(&docs, method, path, body).await;
        assert!(
            !text.contains(SECRET),
            "{method} {path} as multipart: {text}"
        );
    }

    let (_, changes) = call(&docs, "alice", "GET", "/db/_changes?style=all_docs", None).await;
    let row = changes["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|row| row["id"] == "doc-b")
        .cloned()
        .expect("doc-b is in ch-a now");
    assert_eq!(
        row["changes"],
        json!([{ "rev": rev }]),
        "Bob's leaf is not listed: {row}"
    );

    let path = format!("/db/doc-b/note.txt?rev={bobs}");
    let (status, attachment) = call(&docs, "alice", "GET", &path, None).await;
    assert_eq!(status, 404, "{attachment}");
    assert!(!leaked(&attachment));

    // Bob keeps reading his own revision, its attachment, and sees both leaves listed.
    let path = format!("/db/doc-b?rev={bobs}");
    let (status, his) = call(&docs, "bob", "GET", &path, None).await;
    assert_eq!(
        (status, his["secret"].as_str()),
        (200, Some(SECRET)),
        "{his}"
    );
    let (_, all) = call(&docs, "bob", "GET", "/db/doc-b?open_revs=all", None).await;
    assert_eq!(all.as_array().map(Vec::len), Some(1), "{all}");
    assert_eq!(all[0]["ok"]["secret"], SECRET, "{all}");
    let path = format!("/db/doc-b/note.txt?rev={bobs}");
    let (status, bytes) = call(&docs, "bob", "GET", &path, None).await;
    assert_eq!((status, bytes), (200, Value::String(SECRET.into())));
    let (_, both) = docs.admin("GET", "/db/doc-b?open_revs=all", "").await;
    assert!(
        both.contains(SECRET) && both.contains(&rev),
        "the admin reads both: {both}"
    );
    docs.stop().await;
}

#[tokio::test]
async fn a_stub_naming_an_attachment_outside_the_documents_history_is_missing_stub() {
    let docs = started("bobs", OPEN).await;
    add_database(&docs, "alices", OPEN).await;
    // Bob's 120 KB file in his database: above the inline size, it lives in the folder.
    let large: Vec<u8> = (0..120_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let digest = couch_md5(&large);
    let body = json!({"channels": ["ch-b"], "_attachments": {
        "big.bin": {"content_type": "application/octet-stream", "data": STANDARD.encode(&large)}
    }});
    let (status, answer) = call(&docs, "bob", "PUT", "/bobs/file", Some(body)).await;
    assert_eq!(status, 201, "{answer}");
    let before = docs.head().await;
    let stub = |digest: &str| json!({"stub": true, "digest": digest, "length": 120_000, "revpos": 1, "content_type": "application/octet-stream"});
    let tries = [
        (
            "another database's digest",
            "/alices/taken",
            stub(&digest),
            "alice",
        ),
        (
            "an unknown digest",
            "/alices/unknown",
            stub("md5-AAAAAAAAAAAAAAAAAAAAAA=="),
            "alice",
        ),
        (
            "another document's digest",
            "/bobs/copy",
            stub(&digest),
            "bob",
        ),
    ];
    for (what, path, entry, user) in tries {
        let body = json!({"channels": ["ch-a"], "_attachments": {"big.bin": entry}});
        let (status, answer) = call(&docs, user, "PUT", path, Some(body.clone())).await;
        assert_eq!(
            (status, answer["error"].clone()),
            (412, json!("missing_stub")),
            "{what}: {answer}"
        );
        let (status, _) = call(&docs, user, "GET", &format!("{path}/big.bin"), None).await;
        assert_eq!(status, 404, "{what}: nothing to download");
        let db = path.split('/').nth(1).expect("db");
        let bulk = json!({"docs": [{"_id": "bulk", "channels": ["ch-a"], "_attachments": body["_attachments"]}]});
        let (_, answer) = call(
            &docs,
            user,
            "POST",
            &format!("/{db}/_bulk_docs"),
            Some(bulk),
        )
        .await;
        assert_eq!(
            answer[0]["error"], "missing_stub",
            "{what} in _bulk_docs: {answer}"
        );
        let replicated = json!({"new_edits": false, "docs": [{"_id": "bulk", "_rev": format!("2-{}", "c".repeat(32)),
            "_revisions": {"start": 2, "ids": ["c".repeat(32), "d".repeat(32)]},
            "_attachments": body["_attachments"]}]});
        let (_, answer) = call(
            &docs,
            user,
            "POST",
            &format!("/{db}/_bulk_docs"),
            Some(replicated),
        )
        .await;
        assert_eq!(
            answer[0]["error"], "missing_stub",
            "{what} replicated: {answer}"
        );
    }
    assert_eq!(docs.head().await, before, "nothing was appended");
    docs.stop().await;
}

#[tokio::test]
async fn a_stub_of_the_parents_own_attachment_still_resolves() {
    let docs = started("db", OPEN).await;
    let body = json!({"channels": ["ch-b"], "_attachments": {
        "a.txt": {"content_type": "text/plain", "data": STANDARD.encode("hello")}
    }});
    let (_, created) = call(&docs, "bob", "PUT", "/db/doc", Some(body)).await;
    let rev1 = created["rev"].as_str().expect("rev").to_owned();
    let digest = couch_md5(b"hello");
    let kept = json!({"_rev": rev1, "channels": ["ch-b"], "_attachments": {"a.txt": {"stub": true, "digest": digest}}});
    let (status, updated) = call(&docs, "bob", "PUT", "/db/doc", Some(kept)).await;
    assert_eq!(status, 201, "{updated}");
    let rev2 = updated["rev"].as_str().expect("rev").to_owned();
    let wrong = json!({"_rev": rev2, "_attachments": {"a.txt": {"stub": true, "digest": couch_md5(b"other")}}});
    let (status, answer) = call(&docs, "bob", "PUT", "/db/doc", Some(wrong)).await;
    assert_eq!(
        (status, answer["error"].clone()),
        (412, json!("missing_stub")),
        "{answer}"
    );
    // A replicated child of a revision the server holds resolves its stub from it.
    let child = "e".repeat(32);
    let replicated = json!({"_rev": format!("3-{child}"), "channels": ["ch-b"],
        "_revisions": {"start": 3, "ids": [child, rev2.split_once('-').expect("rev").1]},
        "_attachments": {"a.txt": {"stub": true, "revpos": 1, "digest": digest}}});
    let (status, answer) = call(
        &docs,
        "bob",
        "PUT",
        "/db/doc?new_edits=false",
        Some(replicated),
    )
    .await;
    assert_eq!(status, 201, "{answer}");
    let (status, bytes) = call(&docs, "bob", "GET", "/db/doc/a.txt", None).await;
    assert_eq!((status, bytes), (200, Value::String("hello".into())));
    docs.stop().await;
}

#[tokio::test]
async fn a_content_type_with_control_characters_is_refused_and_other_downloads_work() {
    let docs = started("db", OPEN).await;
    let good = json!({"channels": ["ch-b"], "_attachments": {"ok.txt": {"content_type": "text/plain", "data": STANDARD.encode("fine")}}});
    assert_eq!(
        call(&docs, "bob", "PUT", "/db/good", Some(good)).await.0,
        201
    );
    let before = docs.head().await;
    for content_type in [
        "text/plain\r\nX-Injected: 1",
        "text/plain\u{0}",
        "text/pl\u{e4}in",
    ] {
        let att = json!({"content_type": content_type, "data": STANDARD.encode("bad")});
        let body = json!({"channels": ["ch-b"], "_attachments": {"bad.txt": att}});
        let (status, answer) = call(&docs, "bob", "PUT", "/db/bad", Some(body.clone())).await;
        assert_eq!(
            (status, answer["error"].clone()),
            (400, json!("bad_request")),
            "{content_type:?}: {answer}"
        );
        let bulk = json!({"docs": [{"_id": "bad", "channels": ["ch-b"], "_attachments": body["_attachments"]}]});
        let (_, answer) = call(&docs, "bob", "POST", "/db/_bulk_docs", Some(bulk)).await;
        assert_eq!(answer[0]["error"], "bad_request", "{answer}");
    }
    assert_eq!(docs.head().await, before, "nothing was appended");
    assert_eq!(
        call(&docs, "bob", "GET", "/db/bad/bad.txt", None).await.0,
        404
    );
    let (status, bytes) = call(&docs, "bob", "GET", "/db/good/ok.txt", None).await;
    assert_eq!((status, bytes), (200, Value::String("fine".into())));
    docs.stop().await;
}

fn nested(levels: usize) -> String {
    format!("{}{}", "[".repeat(levels), "]".repeat(levels))
}

#[tokio::test]
async fn a_body_nested_past_the_limit_is_a_400_and_one_within_it_is_stored() {
    // A function that walks the document, as the JavaScript engine does for every write.
    let walking = "function(doc) { JSON.stringify(doc); channel(doc.channels); }";
    let docs = started("db", walking).await;
    let before = docs.head().await;
    let deep = format!(r#"{{"channels":["ch-b"],"deep":{}}}"#, nested(20_000));
    let (status, answer) = docs.admin("PUT", "/db/deep", &deep).await;
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("deeper than"), "{answer}");
    let bulk = format!(r#"{{"docs":[{deep}]}}"#);
    let (status, answer) = docs.admin("POST", "/db/_bulk_docs", &bulk).await;
    assert_eq!(status, 400, "{answer}");
    let local = docs.admin("PUT", "/db/_local/deep", &deep).await;
    assert_eq!(local.0, 400, "{}", local.1);
    assert_eq!(docs.head().await, before, "nothing was appended");
    let limit = palimpsest_docs::body::MAX_DEPTH;
    let within = format!(r#"{{"channels":["ch-b"],"deep":{}}}"#, nested(limit - 1));
    let (status, answer) = docs.admin("PUT", "/db/within", &within).await;
    assert_eq!(status, 201, "{answer}");
    let (status, read) = call(&docs, "bob", "GET", "/db/within", None).await;
    assert_eq!(status, 200);
    assert_eq!(read["deep"].to_string(), nested(limit - 1));
    docs.stop().await;
}
