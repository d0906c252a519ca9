//! CouchDB's protocol where PouchDB's own integration suite expects it (issue #28): attachments
//! inline in `_all_docs` and `_changes`, older revisions readable until `_compact`, `latest`,
//! tombstones made by `PUT`, `new_edits=false` read through `_revisions`, `_bulk_docs` refused as
//! a whole, `_local/` documents in `_bulk_docs`, `keys` paged, and the smaller rules beside them.

mod common;

use common::Docs;
use serde_json::{Value, json};

/// `hello` as CouchDB carries it inline.
const HELLO: &str = "aGVsbG8=";

async fn database(docs: &Docs, name: &str) {
    assert_eq!(docs.as_admin("PUT", &format!("/{name}"), None).await.0, 201);
}

fn rev_of(answer: &Value) -> String {
    answer["rev"].as_str().expect("a rev").to_owned()
}

/// Writes `body` at `path` (a new revision, 201 expected) and answers its rev.
async fn put(docs: &Docs, path: &str, body: Value) -> String {
    let (status, answer) = docs.call("PUT", path, Some(body)).await;
    assert_eq!(status, 201, "PUT {path}: {answer}");
    rev_of(&answer)
}

#[tokio::test]
async fn all_docs_and_changes_carry_attachment_bytes_when_asked() {
    let docs = Docs::start().await;
    database(&docs, "db").await;
    let doc = json!({"_attachments": {"a.txt": {"content_type": "text/plain", "data": HELLO}}});
    assert_eq!(docs.call("PUT", "/db/with", Some(doc)).await.0, 201);
    assert_eq!(
        docs.call("PUT", "/db/without", Some(json!({"n": 1})))
            .await
            .0,
        201
    );

    let (status, all) = docs
        .call(
            "GET",
            "/db/_all_docs?include_docs=true&attachments=true",
            None,
        )
        .await;
    assert_eq!(status, 200, "{all}");
    let att = &all["rows"][0]["doc"]["_attachments"]["a.txt"];
    assert_eq!(att["data"], HELLO, "{all}");
    assert!(att.get("stub").is_none(), "{all}");
    let (_, stubs) = docs
        .call("GET", "/db/_all_docs?include_docs=true", None)
        .await;
    assert_eq!(
        stubs["rows"][0]["doc"]["_attachments"]["a.txt"]["stub"],
        true
    );

    let (_, keyed) = docs
        .call(
            "POST",
            "/db/_all_docs?include_docs=true&attachments=true",
            Some(json!({"keys": ["with"]})),
        )
        .await;
    assert_eq!(
        keyed["rows"][0]["doc"]["_attachments"]["a.txt"]["data"],
        HELLO
    );

    let (status, changes) = docs
        .call(
            "GET",
            "/db/_changes?include_docs=true&attachments=true",
            None,
        )
        .await;
    assert_eq!(status, 200, "{changes}");
    let row = changes["results"]
        .as_array()
        .expect("results")
        .iter()
        .find(|row| row["id"] == "with")
        .expect("the document with an attachment");
    assert_eq!(
        row["doc"]["_attachments"]["a.txt"]["data"], HELLO,
        "{changes}"
    );
    let (_, plain) = docs
        .call("GET", "/db/_changes?include_docs=true", None)
        .await;
    assert_eq!(
        plain["results"][0]["doc"]["_attachments"]["a.txt"]["stub"],
        true
    );
    docs.stop().await;
}

#[tokio::test]
async fn an_older_revision_is_read_until_compaction_and_the_rebuild_equals_the_live_model() {
    let docs = Docs::start().await;
    database(&docs, "db").await;
    let rev1 = put(&docs, "/db/doc", json!({"n": 1})).await;
    let rev2 = put(&docs, "/db/doc", json!({"_rev": rev1, "n": 2})).await;

    let (status, old) = docs.call("GET", &format!("/db/doc?rev={rev1}"), None).await;
    assert_eq!((status, old["n"].clone()), (200, json!(1)), "{old}");
    let (status, open) = docs
        .call("GET", &format!("/db/doc?open_revs=[\"{rev1}\"]"), None)
        .await;
    assert_eq!(status, 200);
    assert_eq!(open[0]["ok"]["n"], 1, "{open}");
    let (_, winner) = docs.call("GET", "/db/doc", None).await;
    assert_eq!(
        (winner["_rev"].clone(), winner["n"].clone()),
        (json!(rev2), json!(2))
    );

    let live = docs
        .rows("SELECT * FROM docs.old_revs ORDER BY db, key, rev")
        .await;
    assert_eq!(live.len(), 1, "{live:?}");
    docs.rebuild().await;
    let rebuilt = docs
        .rows("SELECT * FROM docs.old_revs ORDER BY db, key, rev")
        .await;
    assert_eq!(live, rebuilt, "a rebuild keeps the same older bodies");

    let (status, compacted) = docs.as_admin("POST", "/db/_compact", None).await;
    assert_eq!(
        (status, compacted["ok"].clone()),
        (202, json!(true)),
        "{compacted}"
    );
    let (status, _) = docs.call("GET", &format!("/db/doc?rev={rev1}"), None).await;
    assert_eq!(status, 404, "compaction forgets the older body");
    let (status, _) = docs.call("GET", &format!("/db/doc?rev={rev2}"), None).await;
    assert_eq!(status, 200, "the leaf stays");
    let (_, info) = docs.call("GET", "/db", None).await;
    assert_eq!(info["compact_running"], false);
    docs.stop().await;
}

#[tokio::test]
async fn compaction_is_the_administrators_and_an_older_revision_keeps_its_channels() {
    let docs = Docs::start().await;
    assert_eq!(
        docs.admin("PUT", "/_admin/chan/", "{}").await.0,
        201,
        "the slash form"
    );
    for (name, channel) in [("ann", "a"), ("bob", "b")] {
        let user = json!({"password": "pw", "admin_channels": [channel]}).to_string();
        let path = format!("/_admin/chan/_user/{name}");
        assert_eq!(docs.admin("PUT", &path, &user).await.0, 200);
    }
    let (_, first) = docs
        .as_admin("PUT", "/chan/doc", Some(json!({"channels": ["a"], "n": 1})))
        .await;
    let rev1 = rev_of(&first);
    let edit = json!({"_rev": rev1, "channels": ["a", "b"], "n": 2});
    assert_eq!(docs.as_admin("PUT", "/chan/doc", Some(edit)).await.0, 201);

    let path = format!("/chan/doc?rev={rev1}");
    let (status, ann) = docs.as_user("ann", "pw", "GET", &path, None).await;
    assert_eq!((status, ann["n"].clone()), (200, json!(1)), "{ann}");
    let (status, bob) = docs.as_user("bob", "pw", "GET", &path, None).await;
    assert_eq!(status, 200);
    assert_eq!(
        bob["_removed"], true,
        "bob never was in the older revision's channel: {bob}"
    );
    assert!(bob.get("n").is_none(), "{bob}");

    let (status, _) = docs
        .as_user("ann", "pw", "POST", "/chan/_compact", None)
        .await;
    assert_eq!(status, 403, "a user of the database may not compact it");
    assert_eq!(docs.call("POST", "/chan/_compact", None).await.0, 401);
    docs.stop().await;
}

#[tokio::test]
async fn latest_answers_the_newest_leaf_once() {
    let docs = Docs::start().await;
    database(&docs, "db").await;
    let rev1 = put(&docs, "/db/doc", json!({"n": 1})).await;
    let rev2 = put(&docs, "/db/doc", json!({"_rev": rev1, "n": 2})).await;
    let rev3 = put(&docs, "/db/doc", json!({"_rev": rev2, "n": 3})).await;

    let (status, latest) = docs
        .call("GET", &format!("/db/doc?rev={rev1}&latest=true"), None)
        .await;
    assert_eq!(
        (status, latest["_rev"].clone()),
        (200, json!(rev3)),
        "{latest}"
    );
    let (_, open) = docs
        .call(
            "GET",
            &format!("/db/doc?open_revs=[\"{rev1}\",\"{rev2}\"]&latest=true"),
            None,
        )
        .await;
    assert_eq!(
        open.as_array().map(Vec::len),
        Some(1),
        "one leaf once: {open}"
    );
    assert_eq!(open[0]["ok"]["_rev"], rev3);

    let (status, bad) = docs
        .call("GET", "/db/doc?open_revs=[\"not-a-rev\"]", None)
        .await;
    assert_eq!(status, 400, "{bad}");
    docs.stop().await;
}

#[tokio::test]
async fn a_new_document_put_deleted_is_a_tombstone() {
    let docs = Docs::start().await;
    database(&docs, "db").await;
    let (status, put) = docs
        .call("PUT", "/db/gone", Some(json!({"_deleted": true})))
        .await;
    assert_eq!(status, 201, "{put}");
    assert!(rev_of(&put).starts_with("1-"));
    let (status, got) = docs.call("GET", "/db/gone", None).await;
    assert_eq!((status, got["reason"].clone()), (404, json!("deleted")));
    let (_, changes) = docs.call("GET", "/db/_changes", None).await;
    assert_eq!(changes["results"][0]["deleted"], true, "{changes}");
    let (status, bulk) = docs
        .call(
            "POST",
            "/db/_bulk_docs",
            Some(json!({"docs": [{"_id": "also-gone", "_deleted": true}]})),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(bulk[0]["ok"], true, "{bulk}");
    docs.stop().await;
}

#[tokio::test]
async fn a_replicated_revision_is_read_from_its_revisions_and_bulk_errors_fail_the_request() {
    let docs = Docs::start().await;
    database(&docs, "db").await;
    // `_rev` disagrees with `_revisions`: `_revisions` names the revision (CouchDB, PouchDB).
    let doc =
        json!({"_id": "doc", "_rev": "1-x", "_revisions": {"start": 2, "ids": ["b", "a"]}, "v": 2});
    let (status, answer) = docs
        .call(
            "POST",
            "/db/_bulk_docs",
            Some(json!({"docs": [doc], "new_edits": false})),
        )
        .await;
    assert_eq!((status, answer.clone()), (201, json!([])), "{answer}");
    let (_, got) = docs.call("GET", "/db/doc?revs=true", None).await;
    assert_eq!(got["_rev"], "2-b");
    assert_eq!(got["_revisions"], json!({"start": 2, "ids": ["b", "a"]}));

    let before = docs.head().await;
    for body in [
        json!({"docs": [{"_id": "fine"}, {"_id": "_bad"}]}),
        json!({"docs": [{"_id": "fine"}, {"_id": "norev"}], "new_edits": false}),
    ] {
        let (status, refused) = docs.call("POST", "/db/_bulk_docs", Some(body)).await;
        assert_eq!(status, 400, "{refused}");
        assert!(refused["error"].is_string() && refused["reason"].is_string());
    }
    assert_eq!(docs.head().await, before, "nothing was appended");
    docs.stop().await;
}

#[tokio::test]
async fn local_documents_are_written_in_bulk_deleted_by_put_and_hold_no_attachments() {
    let docs = Docs::start().await;
    database(&docs, "db").await;
    let (status, saved) = docs
        .call(
            "POST",
            "/db/_bulk_docs",
            Some(json!({"docs": [{"_id": "_local/cp", "n": 1}, {"_id": "plain"}]})),
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(
        saved[0],
        json!({"ok": true, "id": "_local/cp", "rev": "0-1"}),
        "{saved}"
    );
    assert_eq!(saved[1]["ok"], true);
    let (_, local) = docs.call("GET", "/db/_local/cp", None).await;
    assert_eq!(local["n"], 1);
    let (_, all) = docs.call("GET", "/db/_all_docs", None).await;
    assert_eq!(
        all["total_rows"], 1,
        "a local document is not listed: {all}"
    );

    let deletion = json!({"docs": [{"_id": "_local/cp", "_rev": "0-1", "_deleted": true}]});
    let (_, deleted) = docs.call("POST", "/db/_bulk_docs", Some(deletion)).await;
    assert_eq!(deleted[0]["ok"], true, "{deleted}");
    assert_eq!(docs.call("GET", "/db/_local/cp", None).await.0, 404);

    assert_eq!(
        docs.call("PUT", "/db/_local/two", Some(json!({"n": 1})))
            .await
            .0,
        201
    );
    let (status, put_deleted) = docs
        .call(
            "PUT",
            "/db/_local/two",
            Some(json!({"_rev": "0-1", "_deleted": true})),
        )
        .await;
    assert_eq!(status, 200, "{put_deleted}");
    assert_eq!(docs.call("GET", "/db/_local/two", None).await.0, 404);

    let with =
        json!({"n": 1, "_attachments": {"a.txt": {"content_type": "text/plain", "data": HELLO}}});
    assert_eq!(docs.call("PUT", "/db/_local/att", Some(with)).await.0, 201);
    let (_, kept) = docs.call("GET", "/db/_local/att", None).await;
    assert!(
        kept.get("_attachments").is_none(),
        "a local document holds no attachment: {kept}"
    );
    let (status, refused) = docs.call("GET", "/db/_local/att/a.txt", None).await;
    assert_eq!(status, 400, "CouchDB's answer: {refused}");
    docs.stop().await;
}

#[tokio::test]
async fn all_docs_pages_keys_and_refuses_a_range_beside_them() {
    let docs = Docs::start().await;
    database(&docs, "db").await;
    for id in ["a", "b", "c", "d"] {
        assert_eq!(
            docs.call("PUT", &format!("/db/{id}"), Some(json!({})))
                .await
                .0,
            201
        );
    }
    let keys = json!({"keys": ["d", "c", "b", "a"]});
    let (_, paged) = docs
        .call(
            "POST",
            "/db/_all_docs?skip=1&limit=2&update_seq=true",
            Some(keys.clone()),
        )
        .await;
    let ids: Vec<&Value> = paged["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| &r["id"])
        .collect();
    assert_eq!(ids, [&json!("c"), &json!("b")], "{paged}");
    assert!(paged["update_seq"].is_number(), "{paged}");
    let (status, refused) = docs
        .call("POST", "/db/_all_docs?startkey=%22a%22", Some(keys))
        .await;
    assert_eq!(status, 400, "{refused}");
    docs.stop().await;
}

#[tokio::test]
async fn replicator_members_long_ids_attachment_names_and_revpos_follow_couchdb() {
    let docs = Docs::start().await;
    database(&docs, "db").await;
    let (status, kept) = docs
        .call(
            "PUT",
            "/db/rep",
            Some(json!({"_replication_state": "triggered"})),
        )
        .await;
    assert_eq!(status, 201, "{kept}");
    let (_, got) = docs.call("GET", "/db/rep", None).await;
    assert_eq!(got["_replication_state"], "triggered");

    let long = "x".repeat(1250);
    let (status, answer) = docs
        .call("PUT", &format!("/db/{long}"), Some(json!({})))
        .await;
    assert_eq!(status, 201, "{answer}");
    assert_eq!(docs.call("GET", &format!("/db/{long}"), None).await.0, 200);
    let longer = "y".repeat(3000);
    assert_eq!(
        docs.call("PUT", &format!("/db/{longer}"), Some(json!({})))
            .await
            .0,
        400
    );

    let underscore = json!({"_attachments": {"_a": {"content_type": "text/plain", "data": HELLO}}});
    assert_eq!(docs.call("PUT", "/db/under", Some(underscore)).await.0, 400);

    let first = json!({"_attachments": {"a.txt": {"content_type": "text/plain", "data": HELLO}}});
    let (_, one) = docs.call("PUT", "/db/att", Some(first)).await;
    let again = json!({"_rev": rev_of(&one), "_attachments": {"a.txt": {"content_type": "text/plain", "data": "d29ybGQ=", "revpos": 1}}});
    assert_eq!(docs.call("PUT", "/db/att", Some(again)).await.0, 201);
    let (_, got) = docs.call("GET", "/db/att", None).await;
    assert_eq!(
        got["_attachments"]["a.txt"]["revpos"], 2,
        "new data is at the new generation"
    );
    docs.stop().await;
}

#[tokio::test]
async fn a_conflict_is_answered_once_the_winner_is_readable() {
    let docs = Docs::start().await;
    database(&docs, "db").await;
    for n in 0..20 {
        let id = format!("race-{n}");
        let path = format!("/db/{id}");
        let (a, b) = tokio::join!(
            docs.call("PUT", &path, Some(json!({"by": "a"}))),
            docs.call("PUT", &path, Some(json!({"by": "b"}))),
        );
        assert!(a.0 == 201 || b.0 == 201, "one of them wins: {a:?} {b:?}");
        if a.0 == 409 || b.0 == 409 {
            let (status, winner) = docs.call("GET", &path, None).await;
            assert_eq!(
                status, 200,
                "the winner is readable right after the 409: {winner}"
            );
        }
    }
    docs.stop().await;
}

#[tokio::test]
async fn each_database_counts_its_own_sequence_and_a_rebuild_counts_the_same() {
    let docs = Docs::start().await;
    database(&docs, "first").await;
    database(&docs, "second").await;
    for id in ["a", "b", "c"] {
        let path = format!("/first/{id}");
        assert_eq!(docs.call("PUT", &path, Some(json!({}))).await.0, 201);
    }
    assert_eq!(
        docs.call("PUT", "/second/only", Some(json!({}))).await.0,
        201
    );
    let (_, info) = docs.call("GET", "/second", None).await;
    assert_eq!(
        info["update_seq"], 1,
        "a new database starts its own count: {info}"
    );
    let (_, changes) = docs.call("GET", "/second/_changes", None).await;
    assert_eq!(changes["results"][0]["seq"], 1, "{changes}");
    assert_eq!(changes["last_seq"], 1);
    let (_, first) = docs.call("GET", "/first/_changes", None).await;
    let seqs: Vec<&Value> = first["results"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|r| &r["seq"])
        .collect();
    assert_eq!(seqs, [&json!(1), &json!(2), &json!(3)], "{first}");

    let (_, foreign) = docs.call("GET", "/second/_changes?since=58062", None).await;
    assert_eq!(
        foreign["results"][0]["id"], "only",
        "a checkpoint of another numbering starts over: {foreign}"
    );

    let sql = "SELECT db, key, seq, position FROM docs.kv WHERE seq IS NOT NULL ORDER BY db, key";
    let live = docs.rows(sql).await;
    docs.rebuild().await;
    assert_eq!(
        docs.rows(sql).await,
        live,
        "a rebuild counts the same sequences"
    );
    docs.stop().await;
}
