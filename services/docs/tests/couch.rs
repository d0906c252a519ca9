//! The CouchDB surface through HTTP: databases, documents, conflicts, replication routes.

mod common;

use base64::Engine;
use common::Docs;
use serde_json::{Value, json};

#[tokio::test]
async fn databases_are_created_once_listed_and_deleted() {
    let docs = Docs::start().await;
    let (status, welcome) = docs.call("GET", "/", None).await;
    assert_eq!(status, 200);
    assert_eq!(welcome["couchdb"], "Welcome");
    assert!(welcome["uuid"].is_string());
    assert_eq!(docs.as_admin("PUT", "/db1", None).await.0, 201);
    let (status, again) = docs.as_admin("PUT", "/db1", None).await;
    assert_eq!(
        (status, again["error"].clone()),
        (412, json!("file_exists"))
    );
    assert_eq!(docs.as_admin("PUT", "/Bad", None).await.0, 400);
    let (status, missing) = docs.call("GET", "/nodb", None).await;
    assert_eq!(status, 404, "{missing}");
    let (status, info) = docs.call("GET", "/db1", None).await;
    assert_eq!(
        (status, info["db_name"].clone(), info["doc_count"].clone()),
        (200, json!("db1"), json!(0))
    );
    assert_eq!(
        docs.as_admin("GET", "/_all_dbs", None).await.1,
        json!(["db1"])
    );
    assert_eq!(
        docs.call("PUT", "/db1/a", Some(json!({"x": 1}))).await.0,
        201
    );
    assert_eq!(docs.as_admin("DELETE", "/db1", None).await.0, 200);
    assert_eq!(docs.call("GET", "/db1", None).await.0, 404);
    assert_eq!(docs.as_admin("PUT", "/db1", None).await.0, 201);
    assert_eq!(
        docs.call("GET", "/db1/a", None).await.0,
        404,
        "a recreated database is empty"
    );
    docs.stop().await;
}

#[tokio::test]
async fn a_refusal_decided_on_a_document_taken_as_new_is_decided_again_from_its_stream() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    assert_eq!(
        docs.call("PUT", "/db/doc", Some(json!({"n": 1}))).await.0,
        201
    );
    // A `PUT` without `_rev` is decided as a creation without reading the document's stream;
    // this function refuses only what it is shown as new, which `doc` is not.
    let source =
        "function(doc, oldDoc) { if (!oldDoc && doc.fresh) throw({forbidden: 'not new'}); }";
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_config/sync", source).await.0,
        200
    );
    let head = docs.head().await;
    let (status, answer) = docs
        .call("PUT", "/db/doc", Some(json!({"fresh": true})))
        .await;
    assert_eq!(
        (status, answer["error"].clone()),
        (409, json!("conflict")),
        "an existing document without _rev: {answer}"
    );
    let (status, answer) = docs
        .call("PUT", "/db/new", Some(json!({"fresh": true})))
        .await;
    assert_eq!(
        (status, answer["error"].clone()),
        (403, json!("forbidden")),
        "a new one meets the function: {answer}"
    );
    assert_eq!(docs.head().await, head, "nothing appended");
    docs.stop().await;
}

#[tokio::test]
async fn documents_are_edited_with_their_rev_and_a_stale_rev_is_a_conflict() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let (status, created) = docs.call("PUT", "/db/doc", Some(json!({"n": 1}))).await;
    assert_eq!(status, 201);
    let rev1 = created["rev"].as_str().expect("rev").to_owned();
    assert!(rev1.starts_with("1-"));
    let (status, _) = docs.call("PUT", "/db/doc", Some(json!({"n": 2}))).await;
    assert_eq!(status, 409, "no _rev on an existing document");
    let (status, updated) = docs
        .call("PUT", "/db/doc", Some(json!({"_rev": rev1, "n": 2})))
        .await;
    assert_eq!(status, 201);
    let rev2 = updated["rev"].as_str().expect("rev").to_owned();
    let (status, stale) = docs
        .call("PUT", "/db/doc", Some(json!({"_rev": rev1, "n": 3})))
        .await;
    assert_eq!((status, stale["error"].clone()), (409, json!("conflict")));
    let (_, got) = docs.call("GET", "/db/doc?revs=true", None).await;
    assert_eq!(got["_rev"], rev2);
    assert_eq!(got["n"], 2);
    assert_eq!(got["_revisions"]["start"], 2);
    let (status, deleted) = docs
        .call("DELETE", &format!("/db/doc?rev={rev2}"), None)
        .await;
    assert_eq!(status, 200);
    assert!(deleted["rev"].as_str().expect("rev").starts_with("3-"));
    let (status, gone) = docs.call("GET", "/db/doc", None).await;
    assert_eq!((status, gone["reason"].clone()), (404, json!("deleted")));
    let (status, old) = docs
        .call(
            "GET",
            &format!("/db/doc?rev={}", deleted["rev"].as_str().unwrap_or("")),
            None,
        )
        .await;
    assert_eq!((status, old["_deleted"].clone()), (200, json!(true)));
    docs.stop().await;
}

#[tokio::test]
async fn bodies_round_trip_byte_for_byte_with_nul_and_no_sync_reaches_a_client() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let body =
        r#"{"z":1.50,"a\u0000":{"y":[1,2],"k":"x\u0000y"},"big":123456789012345678901234567890}"#;
    let (status, created) = docs.raw("PUT", "/db/nul", Some(body)).await;
    assert_eq!(status, 201, "{created}");
    let rev = serde_json::from_str::<Value>(&created).expect("json")["rev"]
        .as_str()
        .expect("rev")
        .to_owned();
    let (_, got) = docs.raw("GET", "/db/nul", None).await;
    assert_eq!(
        got,
        format!(
            r#"{{"_id":"nul","_rev":"{rev}","z":1.50,"a\u0000":{{"y":[1,2],"k":"x\u0000y"}},"big":123456789012345678901234567890}}"#
        )
    );
    assert!(!got.contains("_sync"));
    let (status, refused) = docs.raw("PUT", "/db/bad", Some(r#"{"_sync":{}}"#)).await;
    assert_eq!(status, 400, "{refused}");
    let (_, changes) = docs
        .raw("GET", "/db/_changes?include_docs=true&style=all_docs", None)
        .await;
    assert!(!changes.contains("_sync"));
    let (status, all) = docs
        .raw(
            "GET",
            "/db/_all_docs?include_docs=true&conflicts=true",
            None,
        )
        .await;
    assert_eq!(status, 200, "{all}");
    assert!(!all.contains("_sync"));
    let (status, _) = docs
        .raw("PUT", "/db/_design/app", Some(r#"{"views":{}}"#))
        .await;
    assert_eq!(status, 403, "design documents are the administrator's");
    let (status, _) = docs
        .as_admin("PUT", "/db/_design/app", Some(json!({"views": {}})))
        .await;
    assert_eq!(status, 201);
    let (_, design) = docs.call("GET", "/db/_design/app", None).await;
    assert_eq!(design["_id"], "_design/app");
    docs.stop().await;
}

/// Stores `1-a` then, replicated, `2-b` and `2-c` on it.
async fn conflicted(docs: &Docs) {
    let (status, answer) = docs
        .call(
            "POST",
            "/db/_bulk_docs",
            Some(json!({"new_edits": false, "docs": [
                {"_id": "c", "_rev": "1-a", "v": 1},
                {"_id": "c", "_rev": "2-b", "_revisions": {"start": 2, "ids": ["b", "a"]}, "v": "b"},
                {"_id": "c", "_rev": "2-c", "_revisions": {"start": 2, "ids": ["c", "a"]}, "v": "c"},
            ]})),
        )
        .await;
    assert_eq!((status, answer), (201, json!([])));
}

#[tokio::test]
async fn replicated_branches_are_kept_and_the_winner_is_couchdbs() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    conflicted(&docs).await;
    let (_, got) = docs.call("GET", "/db/c?conflicts=true", None).await;
    assert_eq!(got["_rev"], "2-c");
    assert_eq!(got["_conflicts"], json!(["2-b"]));
    let (_, open) = docs.call("GET", "/db/c?open_revs=all", None).await;
    assert_eq!(open.as_array().map(Vec::len), Some(2));
    let (_, latest) = docs
        .call("GET", "/db/c?open_revs=[\"1-a\"]&latest=true", None)
        .await;
    assert_eq!(latest.as_array().map(Vec::len), Some(2), "{latest}");
    let (_, diff) = docs
        .call(
            "POST",
            "/db/_revs_diff",
            Some(json!({"c": ["2-b", "3-x"], "new": ["1-z"]})),
        )
        .await;
    assert_eq!(
        diff,
        json!({"c": {"missing": ["3-x"]}, "new": {"missing": ["1-z"]}})
    );
    let (_, bulk) = docs
        .call(
            "POST",
            "/db/_bulk_get?revs=true",
            Some(json!({"docs": [{"id": "c", "rev": "2-b"}, {"id": "nope", "rev": "1-a"}]})),
        )
        .await;
    assert_eq!(bulk["results"][0]["docs"][0]["ok"]["v"], "b");
    assert_eq!(
        bulk["results"][0]["docs"][0]["ok"]["_revisions"],
        json!({"start": 2, "ids": ["b", "a"]})
    );
    assert_eq!(bulk["results"][1]["docs"][0]["error"]["error"], "not_found");
    let (_, changes) = docs.call("GET", "/db/_changes?style=all_docs", None).await;
    assert_eq!(
        changes["results"][0]["changes"],
        json!([{"rev": "2-c"}, {"rev": "2-b"}])
    );
    // Resolving: delete the losing leaf.
    let (status, _) = docs.call("DELETE", "/db/c?rev=2-b", None).await;
    assert_eq!(status, 200);
    let (_, got) = docs.call("GET", "/db/c?conflicts=true", None).await;
    assert_eq!(got["_rev"], "2-c");
    assert!(got.get("_conflicts").is_none());
    // Replaying the same revisions changes nothing.
    let before = docs.call("GET", "/db", None).await.1["update_seq"].clone();
    conflicted(&docs).await;
    assert_eq!(docs.call("GET", "/db", None).await.1["update_seq"], before);
    docs.stop().await;
}

#[tokio::test]
async fn local_documents_have_no_history_and_never_show_in_changes() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let (status, saved) = docs
        .call("PUT", "/db/_local/cp", Some(json!({"last_seq": 3})))
        .await;
    assert_eq!((status, saved["rev"].clone()), (201, json!("0-1")));
    assert_eq!(
        docs.call("PUT", "/db/_local/cp", Some(json!({"last_seq": 4})))
            .await
            .0,
        409
    );
    let (_, saved) = docs
        .call(
            "PUT",
            "/db/_local/cp",
            Some(json!({"_rev": "0-1", "last_seq": 4})),
        )
        .await;
    assert_eq!(saved["rev"], "0-2");
    let (_, got) = docs.call("GET", "/db/_local/cp", None).await;
    assert_eq!(
        got,
        json!({"_id": "_local/cp", "_rev": "0-2", "last_seq": 4})
    );
    let (_, changes) = docs.call("GET", "/db/_changes", None).await;
    assert_eq!(changes["results"], json!([]));
    assert_eq!(
        docs.call("DELETE", "/db/_local/cp?rev=0-2", None).await.0,
        200
    );
    assert_eq!(docs.call("GET", "/db/_local/cp", None).await.0, 404);
    docs.stop().await;
}

#[tokio::test]
async fn changes_pages_by_since_and_limit_and_longpoll_waits_for_a_change() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    for id in ["a", "b", "c"] {
        docs.call("PUT", &format!("/db/{id}"), Some(json!({})))
            .await;
    }
    let (_, first) = docs.call("GET", "/db/_changes?limit=2", None).await;
    assert_eq!(first["results"].as_array().map(Vec::len), Some(2));
    assert_eq!(first["pending"], 1);
    let since = first["last_seq"].as_i64().expect("seq");
    let (_, rest) = docs
        .call("GET", &format!("/db/_changes?since={since}"), None)
        .await;
    assert_eq!(rest["results"][0]["id"], "c");
    let last = rest["last_seq"].as_i64().expect("seq");
    let url = docs.url(&format!(
        "/db/_changes?feed=longpoll&since={last}&heartbeat=100&timeout=5000"
    ));
    let waiting = tokio::spawn(async move {
        reqwest::get(url)
            .await
            .expect("get")
            .text()
            .await
            .expect("text")
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    docs.call("PUT", "/db/d", Some(json!({}))).await;
    let text = waiting.await.expect("join");
    let answer: Value = serde_json::from_str(text.trim()).expect("json after heartbeats");
    assert_eq!(answer["results"][0]["id"], "d");
    let (_, all) = docs
        .call("GET", "/db/_all_docs?limit=2&startkey=\"b\"", None)
        .await;
    assert_eq!(
        all["rows"]
            .as_array()
            .map(|r| r.iter().map(|x| x["id"].clone()).collect::<Vec<_>>()),
        Some(vec![json!("b"), json!("c")])
    );
    assert_eq!(all["total_rows"], 4);
    docs.stop().await;
}

#[tokio::test]
async fn a_replayed_rebuild_equals_the_live_read_model() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    docs.as_admin("PUT", "/gone", None).await;
    docs.call("PUT", "/gone/x", Some(json!({}))).await;
    docs.as_admin("DELETE", "/gone", None).await;
    conflicted(&docs).await;
    docs.call("PUT", "/db/_local/cp", Some(json!({"s": 1})))
        .await;
    // "large" is above the inline size: its bytes are in the attachment folder, the read
    // model (live and rebuilt) records its location.
    let large = base64::engine::general_purpose::STANDARD.encode(vec![7u8; 100_000]);
    let attached = json!({"_attachments": {
        "a": {"content_type": "text/plain", "data": "aGk="},
        "large": {"content_type": "application/octet-stream", "data": large},
    }});
    assert_eq!(docs.call("PUT", "/db/att", Some(attached)).await.0, 201);
    let (_, created) = docs.call("PUT", "/db/plain", Some(json!({"k": "v"}))).await;
    let rev = created["rev"].as_str().unwrap_or_default().to_owned();
    docs.call("DELETE", &format!("/db/plain?rev={rev}"), None)
        .await;
    let dump = async |docs: &Docs| {
        (
            docs.rows("SELECT * FROM docs.databases ORDER BY name")
                .await,
            docs.rows("SELECT * FROM docs.kv ORDER BY db, key").await,
            docs.rows("SELECT key, md5, length, encode(data, 'hex') AS data, location FROM docs.attachments ORDER BY key").await,
        )
    };
    let live = dump(&docs).await;
    assert_eq!((live.1.len(), live.2.len()), (4, 2), "{live:?}");
    docs.rebuild().await;
    assert_eq!(dump(&docs).await, live);
    docs.stop().await;
}

#[tokio::test]
async fn attachments_are_stored_by_content_shown_by_md5_and_served_standalone() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let (status, created) = docs
        .call(
            "PUT",
            "/db/a",
            Some(json!({"_attachments": {"hi.txt": {"content_type": "text/plain", "data": "aGVsbG8="}}})),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let rev = created["rev"].as_str().expect("rev").to_owned();
    let (_, got) = docs.call("GET", "/db/a", None).await;
    assert_eq!(
        got["_attachments"]["hi.txt"],
        json!({"content_type": "text/plain", "digest": "md5-XUFAKrxLKna5cZ2REBfFkg==", "length": 5, "revpos": 1, "stub": true})
    );
    let (_, inline) = docs.call("GET", "/db/a?attachments=true", None).await;
    assert_eq!(inline["_attachments"]["hi.txt"]["data"], "aGVsbG8=");
    let (status, raw) = docs.raw("GET", "/db/a/hi.txt", None).await;
    assert_eq!((status, raw.as_str()), (200, "hello"));
    // The same bytes in another document are stored once, under Sync Gateway's key.
    docs.call(
        "PUT",
        "/db/b",
        Some(json!({"_attachments": {"x": {"content_type": "text/plain", "data": "aGVsbG8="}}})),
    )
    .await;
    let stored = docs
        .rows("SELECT key, md5, length FROM docs.attachments")
        .await;
    assert_eq!(
        stored,
        vec![
            json!({"key": "_sync:att:sha1-qvTGHdzF6KLavt4PO0gs2a6pQ00=", "md5": "md5-XUFAKrxLKna5cZ2REBfFkg==", "length": 5})
        ]
    );
    // A standalone upload keeps the other attachment as a stub of the parent.
    let client = reqwest::Client::new();
    let response = client
        .put(docs.url(&format!("/db/a/dir/two.bin?rev={rev}")))
        .header("content-type", "application/octet-stream")
        .body(vec![0u8, 1, 2])
        .send()
        .await
        .expect("put");
    assert_eq!(response.status().as_u16(), 201);
    let (_, got) = docs.call("GET", "/db/a", None).await;
    assert_eq!(got["_attachments"]["hi.txt"]["revpos"], 1);
    assert_eq!(got["_attachments"]["dir/two.bin"]["revpos"], 2);
    let (status, missing) = docs
        .call(
            "PUT",
            "/db/c",
            Some(json!({"_attachments": {"x": {"stub": true}}})),
        )
        .await;
    assert_eq!(
        (status, missing["error"].clone()),
        (412, json!("missing_stub"))
    );
    docs.stop().await;
}

#[tokio::test]
async fn the_sync_function_routes_to_channels_and_its_rejections_append_nothing() {
    let docs = Docs::start().await;
    assert_eq!(
        docs.raw("PUT", "/_admin/db", Some("{}")).await.0,
        401,
        "no token, no admin"
    );
    let config = json!({"guest": {"admin_channels": ["*"]}, "sync": "function(doc, oldDoc) { if (doc.bad) throw({forbidden: 'no bad docs'}); if (oldDoc && oldDoc.owner !== doc.owner) throw({forbidden: 'owner is fixed'}); channel(doc.tags); access(doc.owner, doc.tags); }"});
    let (status, created) = docs.admin("PUT", "/_admin/db", &config.to_string()).await;
    assert_eq!(status, 201, "{created}");
    let (status, _) = docs
        .call(
            "PUT",
            "/db/a",
            Some(json!({"owner": "ann", "tags": ["red", "blue"]})),
        )
        .await;
    assert_eq!(status, 201);
    let head = docs.head().await;
    let (status, refused) = docs.call("PUT", "/db/b", Some(json!({"bad": true}))).await;
    assert_eq!(
        (status, refused["error"].clone(), refused["reason"].clone()),
        (403, json!("forbidden"), json!("no bad docs"))
    );
    let rev = docs.call("GET", "/db/a", None).await.1["_rev"].clone();
    let (status, _) = docs
        .call(
            "PUT",
            "/db/a",
            Some(json!({"_rev": rev, "owner": "bob", "tags": ["red"]})),
        )
        .await;
    assert_eq!(status, 403, "oldDoc is the parent");
    assert_eq!(docs.head().await, head, "rejections append nothing");
    let (status, _) = docs
        .call(
            "PUT",
            "/db/a",
            Some(json!({"_rev": rev, "owner": "ann", "tags": ["red"]})),
        )
        .await;
    assert_eq!(status, 201);
    let row = docs.rows("SELECT value FROM docs.kv WHERE key = 'a'").await;
    let stored: Value =
        serde_json::from_str(row[0]["value"].as_str().expect("text")).expect("json");
    assert_eq!(stored["_sync"]["channels"]["red"], Value::Null);
    assert_eq!(
        stored["_sync"]["channels"]["blue"]["rev"],
        stored["_sync"]["rev"]
    );
    assert_eq!(stored["_sync"]["access"], json!({"ann": ["red"]}));
    let (_, blue) = docs
        .call(
            "GET",
            "/db/_changes?filter=sync_gateway/bychannel&channels=blue&include_docs=true",
            None,
        )
        .await;
    assert_eq!(blue["results"].as_array().map(Vec::len), Some(1), "{blue}");
    assert_eq!(blue["results"][0]["removed"], json!(["blue"]));
    assert_eq!(blue["results"][0]["doc"]["_removed"], true);
    let (_, red) = docs
        .call(
            "GET",
            "/db/_changes?filter=sync_gateway/bychannel&channels=red",
            None,
        )
        .await;
    assert_eq!(red["results"][0]["id"], "a");
    assert!(red["results"][0].get("removed").is_none());
    let (status, raw) = docs.admin("GET", "/_admin/db/_raw/a", "").await;
    assert!(status == 200 && raw.contains("\"_sync\""), "{raw}");
    let (status, source) = docs.admin("GET", "/_admin/db/_config/sync", "").await;
    assert!(status == 200 && source.contains("no bad docs"));
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_config/sync", "function(doc) {")
            .await
            .0,
        400
    );
    assert_eq!(
        docs.admin("DELETE", "/_admin/db/_config/sync", "").await.0,
        200
    );
    assert_eq!(
        docs.call("PUT", "/db/b", Some(json!({"bad": true})))
            .await
            .0,
        201,
        "the default routes everything"
    );
    docs.stop().await;
}

#[tokio::test]
async fn users_read_only_their_channels_and_a_revoked_document_reads_as_removed() {
    let docs = Docs::start().await;
    let config = json!({"sync": "function(doc) { channel(doc.channels); access(doc.grant_to, doc.grant); }"});
    assert_eq!(
        docs.admin("PUT", "/_admin/db", &config.to_string()).await.0,
        201
    );
    let ann = json!({"password": "pw-ann", "admin_channels": ["a"]});
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_user/ann", &ann.to_string())
            .await
            .0,
        200
    );
    let (_, user) = docs.admin("GET", "/_admin/db/_user/ann", "").await;
    assert!(!user.contains("hash"), "{user}");
    assert_eq!(
        docs.admin("GET", "/_admin/db/_user/", "").await.1,
        r#"["ann"]"#
    );
    // The guest is disabled by default; a wrong password is refused.
    assert_eq!(docs.call("GET", "/db/_changes", None).await.0, 401);
    assert_eq!(
        docs.as_user("ann", "nope", "GET", "/db/_changes", None)
            .await
            .0,
        401
    );
    // The admin writes one document per channel.
    for (id, channel) in [("in-a", "a"), ("in-b", "b")] {
        let body = json!({"channels": [channel]}).to_string();
        assert_eq!(docs.admin("PUT", &format!("/db/{id}"), &body).await.0, 201);
    }
    let user = |method: &'static str, path: String, body: Option<Value>| {
        let docs = &docs;
        async move { docs.as_user("ann", "pw-ann", method, &path, body).await }
    };
    assert_eq!(user("GET", "/db/in-a".into(), None).await.0, 200);
    assert_eq!(user("GET", "/db/in-b".into(), None).await.0, 403);
    let (_, changes) = user("GET", "/db/_changes".into(), None).await;
    let ids: Vec<&str> = changes["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(ids, ["in-a"]);
    let (_, all) = user("GET", "/db/_all_docs".into(), None).await;
    assert_eq!(all["rows"].as_array().map(Vec::len), Some(1));
    let (_, bulk) = user(
        "POST",
        "/db/_bulk_get".into(),
        Some(json!({"docs": [{"id": "in-a"}, {"id": "in-b"}]})),
    )
    .await;
    assert!(bulk["results"][0]["docs"][0]["ok"].is_object());
    assert_eq!(bulk["results"][1]["docs"][0]["error"]["error"], "forbidden");
    // A grant through a document's access map opens channel b.
    let grant = json!({"grant_to": "ann", "grant": "b"}).to_string();
    assert_eq!(docs.admin("PUT", "/db/grant", &grant).await.0, 201);
    assert_eq!(user("GET", "/db/in-b".into(), None).await.0, 200);
    // Revocation: in-a moves to channel c; ann sees it once as removed, then as _removed.
    let since = changes["last_seq"].as_i64().expect("seq");
    let rev = docs.call("GET", "/db/in-a", None).await.1;
    let (_, current) = docs.admin("GET", "/db/in-a", "").await;
    let current: Value = serde_json::from_str(&current).expect("json");
    let moved = json!({"_rev": current["_rev"], "channels": ["c"]}).to_string();
    assert_eq!(docs.admin("PUT", "/db/in-a", &moved).await.0, 201, "{rev}");
    let (_, after) = user("GET", format!("/db/_changes?since={since}"), None).await;
    let removed: Vec<&Value> = after["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|r| r["id"] == "in-a")
        .collect();
    assert_eq!(removed.len(), 1);
    assert_eq!(removed[0]["removed"], json!(["a"]));
    let (status, gone) = user("GET", "/db/in-a".into(), None).await;
    assert_eq!((status, gone["_removed"].clone()), (200, json!(true)));
    // A session cookie works like the password.
    let login = reqwest::Client::new()
        .post(docs.url("/db/_session"))
        .json(&json!({"name": "ann", "password": "pw-ann"}))
        .send()
        .await
        .expect("login");
    assert_eq!(login.status().as_u16(), 200);
    let cookie = login
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("cookie")
        .to_owned();
    let with_cookie = reqwest::Client::new()
        .get(docs.url("/db/_session"))
        .header("cookie", &cookie)
        .send()
        .await
        .expect("session");
    let ctx: Value = with_cookie.json().await.expect("json");
    assert_eq!(ctx["userCtx"]["name"], "ann");
    assert_eq!(ctx["userCtx"]["channels"]["a"], 1);
    // Disabling the user locks it out.
    let disabled = json!({"admin_channels": ["a"], "disabled": true}).to_string();
    assert_eq!(
        docs.admin("PUT", "/_admin/db/_user/ann", &disabled).await.0,
        200
    );
    assert_eq!(user("GET", "/db/_changes".into(), None).await.0, 401);
    docs.stop().await;
}

#[tokio::test]
async fn purged_tombstones_make_an_older_checkpoint_start_over() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let (_, first) = docs.call("PUT", "/db/first", Some(json!({}))).await;
    assert_eq!(first["ok"], true);
    let (_, doomed) = docs.call("PUT", "/db/doomed", Some(json!({}))).await;
    let rev = doomed["rev"].as_str().expect("rev").to_owned();
    let (_, early) = docs.call("GET", "/db/_changes", None).await;
    let checkpoint = early["results"][0]["seq"].as_i64().expect("seq");
    docs.call("DELETE", &format!("/db/doomed?rev={rev}"), None)
        .await;
    docs.call("PUT", "/db/later", Some(json!({}))).await;
    let (status, _) = docs
        .admin("POST", "/_admin/db/_compact?retention_secs=0", "")
        .await;
    assert_eq!(status, 200);
    let (_, info) = docs.call("GET", "/db", None).await;
    assert_eq!(
        info["doc_del_count"], 0,
        "the tombstone left the read model"
    );
    let (status, expired) = docs
        .call("GET", &format!("/db/_changes?since={checkpoint}"), None)
        .await;
    assert_eq!(
        (status, expired["error"].clone()),
        (410, json!("checkpoint_expired"))
    );
    let (status, fresh) = docs.call("GET", "/db/_changes", None).await;
    assert_eq!(status, 200);
    let last = fresh["last_seq"].as_i64().expect("seq");
    assert_eq!(fresh["results"].as_array().map(Vec::len), Some(2));
    assert_eq!(
        docs.call("GET", &format!("/db/_changes?since={last}"), None)
            .await
            .0,
        200
    );
    docs.stop().await;
}

#[tokio::test]
async fn a_retried_write_with_the_same_idempotency_key_appends_nothing() {
    let docs = Docs::start().await;
    docs.as_admin("PUT", "/db", None).await;
    let client = reqwest::Client::new();
    let put = || {
        client
            .put(docs.url("/db/once"))
            .header("idempotency-key", "k-1")
            .header("content-type", "application/json")
            .body(r#"{"n":1}"#)
            .send()
    };
    let first = put().await.expect("put");
    assert_eq!(first.status().as_u16(), 201);
    let first: Value = first.json().await.expect("json");
    let head = docs.head().await;
    let again = put().await.expect("put");
    assert_eq!(
        again.status().as_u16(),
        201,
        "the first answer, not a conflict"
    );
    assert_eq!(again.json::<Value>().await.expect("json"), first);
    assert_eq!(docs.head().await, head);
    docs.stop().await;
}

/// `GET /{db}`'s counts are kept per state of the database (`counts.rs`): asked between every
/// change, they follow each one — writes, a deletion, the database deleted and made again at
/// the same sequence, a purge of one document, a purge of tombstones.
#[tokio::test]
async fn the_database_info_counts_follow_every_change_asked_between_each() {
    let started = Docs::start().await;
    let docs = &started;
    let counts = || async {
        let (status, info) = docs.call("GET", "/db", None).await;
        assert_eq!(status, 200, "{info}");
        let count = |k: &str| info[k].as_i64().expect(k);
        (
            count("doc_count"),
            count("doc_del_count"),
            count("update_seq"),
        )
    };
    let delete = |id: &'static str| async move {
        let (_, doc) = docs.call("GET", &format!("/db/{id}"), None).await;
        let rev = doc["_rev"].as_str().expect("rev").to_owned();
        docs.call("DELETE", &format!("/db/{id}?rev={rev}"), None)
            .await;
    };
    docs.as_admin("PUT", "/db", None).await;
    assert_eq!(counts().await, (0, 0, 0));
    for id in ["a", "b", "c"] {
        docs.call("PUT", &format!("/db/{id}"), Some(json!({})))
            .await;
    }
    assert_eq!(counts().await, (3, 0, 3));
    assert_eq!(counts().await, (3, 0, 3), "asked again, unchanged");
    assert_eq!(docs.as_admin("DELETE", "/db", None).await.0, 200);
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    for id in ["d", "e"] {
        docs.call("PUT", &format!("/db/{id}"), Some(json!({})))
            .await;
    }
    delete("e").await;
    assert_eq!(
        counts().await,
        (1, 1, 3),
        "the database made again, at the same sequence as the old one"
    );
    docs.call("PUT", "/db/f", Some(json!({}))).await;
    assert_eq!(counts().await, (2, 1, 4));
    let (status, _) = docs
        .admin(
            "POST",
            "/_admin/db/_purge",
            &json!({"d": ["*"]}).to_string(),
        )
        .await;
    assert_eq!(status, 200);
    let (live, deleted, _) = counts().await;
    assert_eq!((live, deleted), (1, 1), "a purged document is not counted");
    let (status, _) = docs
        .admin("POST", "/_admin/db/_compact?retention_secs=0", "")
        .await;
    assert_eq!(status, 200);
    let (live, deleted, _) = counts().await;
    assert_eq!((live, deleted), (1, 0), "purged tombstones are not counted");
    started.stop().await;
}
