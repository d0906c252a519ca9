//! Answers schemathesis found wrong (tests/schemathesis), one test per distinct bug.

mod common;

use common::Docs;
use serde_json::json;

/// A document id with U+0000 names nothing (the log never stores one), so the bulk reads answer
/// it as missing; they answered 500, Postgres refusing the text.
#[tokio::test]
async fn ids_with_a_nul_are_missing_not_a_server_error() {
    let docs = Docs::start().await;
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    let nul = "a\u{0}b";

    let (status, diff) = docs
        .call("POST", "/db/_revs_diff", Some(json!({ nul: ["1-abc"] })))
        .await;
    assert_eq!(status, 200, "{diff}");
    assert_eq!(diff[nul]["missing"], json!(["1-abc"]));

    let (status, got) = docs
        .call(
            "POST",
            "/db/_bulk_get",
            Some(json!({"docs": [{"id": nul}]})),
        )
        .await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["results"][0]["docs"][0]["error"]["error"], "not_found");

    let (status, all) = docs
        .call("POST", "/db/_all_docs", Some(json!({"keys": [nul]})))
        .await;
    assert_eq!(status, 200, "{all}");
    assert_eq!(all["rows"][0]["error"], "not_found");

    let (status, one) = docs.call("GET", "/db/a%00b", None).await;
    assert_eq!(status, 404, "{one}");
    docs.stop().await;
}

/// A boolean query parameter is `true` or `false` in any case, as CouchDB's `parse_bool_param`
/// reads it; anything else is 400 `query_parse_error`. It was read as `false` (and `new_edits`
/// as `true`), so `new_edits=__main__` wrote a document.
#[tokio::test]
async fn malformed_boolean_parameters_are_refused_as_couchdb_does() {
    let docs = Docs::start().await;
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    assert_eq!(
        docs.call("PUT", "/db/d", Some(json!({"a": 1}))).await.0,
        201
    );

    for path in [
        "/db/d?revs=",
        "/db/d?conflicts=yes",
        "/db/_all_docs?inclusive_end=maybe",
        "/db/_all_docs?descending=1",
        "/db/_changes?include_docs=__main__",
    ] {
        let (status, body) = docs.call("GET", path, None).await;
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["error"], "query_parse_error", "{path}: {body}");
    }

    let (status, body) = docs
        .call("PUT", "/db/x?new_edits=__main__", Some(json!({"a": 1})))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(docs.call("GET", "/db/x", None).await.0, 404);

    let (status, got) = docs.call("GET", "/db/d?revs=TRUE", None).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["_revisions"]["start"], 1, "{got}");
    let (status, all) = docs
        .call("GET", "/db/_all_docs?inclusive_end=False", None)
        .await;
    assert_eq!(status, 200, "{all}");
    docs.stop().await;
}

/// A session belongs to a database: for one that does not exist Sync Gateway answers 404. It
/// answered 200 for any name (`GET /null,null/_session`).
#[tokio::test]
async fn sessions_of_a_missing_database_are_not_found() {
    let docs = Docs::start().await;
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    for method in ["GET", "DELETE"] {
        let (status, body) = docs.call(method, "/nope/_session", None).await;
        assert_eq!(status, 404, "{method}: {body}");
        assert_eq!(body["error"], "not_found", "{method}: {body}");
    }
    let (status, body) = docs
        .call(
            "POST",
            "/nope/_session",
            Some(json!({"name": "a", "password": "b"})),
        )
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(docs.call("GET", "/db/_session", None).await.0, 200);
    assert_eq!(docs.call("DELETE", "/db/_session", None).await.0, 200);
    docs.stop().await;
}

/// JSON does not tell `2` from `2.0` (JSON Schema's `integer` is both): `_revisions.start` and
/// `revs_limit` written with a fraction were refused as the wrong type.
#[tokio::test]
async fn whole_numbers_written_with_a_fraction_are_whole_numbers() {
    let docs = Docs::start().await;
    let (status, body) = docs
        .admin("PUT", "/_admin/other", r#"{"revs_limit": 5.0}"#)
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    let replicated = json!({"_rev": "2-b", "_revisions": {"start": 2.0, "ids": ["b", "a"]}});
    let (status, body) = docs
        .call("PUT", "/db/r?new_edits=false", Some(replicated))
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, got) = docs.call("GET", "/db/r?revs=true", None).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!(got["_revisions"], json!({"start": 2, "ids": ["b", "a"]}));
    let half = json!({"_rev": "2-c", "_revisions": {"start": 2.5, "ids": ["c", "a"]}});
    assert_eq!(
        docs.call("PUT", "/db/h?new_edits=false", Some(half))
            .await
            .0,
        400
    );
    docs.stop().await;
}

/// Every query parameter is read whatever the others say: `skip` beside `keys` and `timeout`
/// on a normal feed were ignored, so malformed ones were answered 200. `timeout` is a number
/// (only `heartbeat` may be `true`).
#[tokio::test]
async fn malformed_parameters_are_refused_even_where_unused() {
    let docs = Docs::start().await;
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    for path in [
        "/db/_all_docs?keys=%5B%22a%22%5D&skip=z",
        "/db/_all_docs?keys=%5B%22a%22%5D&startkey=nojson",
        "/db/_changes?timeout=null",
        "/db/_changes?timeout=true",
        "/db/_changes?heartbeat=soon",
    ] {
        let (status, body) = docs.call("GET", path, None).await;
        assert_eq!(status, 400, "{path}: {body}");
    }
    docs.stop().await;
}

/// A user name with U+0000 is no user (no event may carry one): the administrator's session
/// route answers it 404 like any unknown name, and a login with it is refused, not a 500
/// (Postgres refused the text in the user lookup).
#[tokio::test]
async fn a_user_name_with_a_nul_is_no_user_not_a_server_error() {
    let docs = Docs::start().await;
    assert_eq!(docs.as_admin("PUT", "/db", None).await.0, 201);
    let nul = "a\u{0}b";

    let (status, answer) = docs
        .as_admin("POST", "/_admin/db/_session", Some(json!({"name": nul})))
        .await;
    assert_eq!(status, 404, "{answer}");

    let (status, answer) = docs
        .call(
            "POST",
            "/db/_session",
            Some(json!({"name": nul, "password": "x"})),
        )
        .await;
    assert!((400..500).contains(&status), "{status} {answer}");
    docs.stop().await;
}
