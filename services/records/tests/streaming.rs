//! A list without `limit` is sent as its rows are read (chunked, no `Content-Length`), with the
//! rows a paged read answers; a row that cannot be opened after the answer started cuts the
//! transfer instead of ending a complete-looking 200.

mod common;

use common::Records;
use reqwest::StatusCode;
use serde_json::{Value, json};

/// Rows enough for more than one batch of the stream (a batch is 2,000 rows per core).
const ROWS: usize = 10_000;

/// One document written through the API, then copied in the read model under `ROWS` pks (the
/// sealed data does not depend on its pk): a large organisation without 10,000 writes.
async fn many_documents(r: &Records) {
    r.ok(
        "insertDoc",
        json!({"org": "demo", "data": {"clazz": "Article", "p1": "a", "auteur": "Zola", "taille": 1}}),
    )
    .await;
    let client = r.state.read.get().await.expect("client");
    client
        .execute(
            &format!(
                "INSERT INTO records.\"Article\" (org, pk, v, x, z, ck, del, data, auteur, taille) \
                 SELECT org, pk || lpad(i::text, 6, '0'), v, x, z, ck, del, data, auteur, taille \
                 FROM records.\"Article\", generate_series(1, {}) i",
                ROWS - 1
            ),
            &[],
        )
        .await
        .expect("copies");
}

/// `POST /api/{function}` as the admin: the status, the `Content-Length` header, and the
/// body, or the error that cut it.
async fn raw_call(
    r: &Records,
    function: &str,
    body: Value,
) -> (StatusCode, Option<String>, Result<Vec<u8>, reqwest::Error>) {
    let res = r
        .http
        .post(format!("{}/api/{function}", r.base))
        .bearer_auth(&r.admin)
        .json(&body)
        .send()
        .await
        .expect("request");
    let status = res.status();
    let length = res
        .headers()
        .get(reqwest::header::CONTENT_LENGTH)
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    (status, length, res.bytes().await.map(|b| b.to_vec()))
}

/// Every row of `function` over `args`, read in pages of 10,000.
async fn paged_rows(r: &Records, function: &str, args: &Value) -> Vec<Value> {
    let mut rows = Vec::new();
    let mut after = Value::Null;
    loop {
        let mut call = args.clone();
        call["limit"] = json!(10_000);
        if !after.is_null() {
            call["after"] = after.clone();
        }
        let page = r.ok(function, call).await;
        rows.extend(page["rows"].as_array().cloned().unwrap_or_default());
        after = page["next"].clone();
        if after.is_null() {
            return rows;
        }
    }
}

#[tokio::test]
async fn a_list_without_limit_is_streamed_with_the_rows_of_a_paged_read() {
    let r = Records::start().await;
    many_documents(&r).await;
    let calls = [
        ("listDocs", json!({"org": "demo", "cl": "Article"})),
        (
            "listDocsSk",
            json!({"org": "demo", "cl": "Article", "ik": 1, "val": "Zola"}),
        ),
        (
            "listDocsIdx",
            json!({"org": "demo", "cl": "Article", "ix": "taille", "comp": "=", "val": 1}),
        ),
    ];
    for (function, args) in calls {
        let (status, length, body) = raw_call(&r, function, args.clone()).await;
        assert_eq!(status, StatusCode::OK, "{function}");
        assert_eq!(length, None, "{function}: sent as read, no Content-Length");
        let body: Value = serde_json::from_slice(&body.expect("whole body")).expect("JSON");
        let rows = body["result"]["rows"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(rows.len(), ROWS, "{function}");
        assert!(body["result"]["next"].is_null(), "{function}");
        assert!(body["result"]["v"].is_i64(), "{function}");
        assert_eq!(rows, paged_rows(&r, function, &args).await, "{function}");
    }
    // A page still knows its length.
    let (_, length, _) = raw_call(
        &r,
        "listDocs",
        json!({"org": "demo", "cl": "Article", "limit": 10}),
    )
    .await;
    assert!(length.is_some(), "a page has a Content-Length");
    r.stop().await;
}

#[tokio::test]
async fn a_row_that_cannot_be_opened_after_the_start_cuts_the_transfer() {
    let r = Records::start().await;
    many_documents(&r).await;
    let client = r.state.read.get().await.expect("client");
    // The last row in pk order: the answer has started long before it is read.
    client
        .execute(
            "UPDATE records.\"Article\" SET data = '\\x00'::bytea \
             WHERE pk = (SELECT max(pk) FROM records.\"Article\")",
            &[],
        )
        .await
        .expect("corrupt one row");
    let (status, length, body) =
        raw_call(&r, "listDocs", json!({"org": "demo", "cl": "Article"})).await;
    assert_eq!(status, StatusCode::OK, "the answer started before the row");
    assert_eq!(length, None);
    assert!(
        body.is_err(),
        "the transfer is cut, not a complete-looking 200"
    );

    // A page holding the row still fails before its first byte, with its status and JSON.
    let before_last = r
        .rows("SELECT pk FROM records.\"Article\" ORDER BY pk DESC OFFSET 1 LIMIT 1")
        .await;
    let (status, reply) = r
        .admin_call(
            "listDocs",
            json!({"org": "demo", "cl": "Article", "limit": 10, "after": {"t": 0, "pk": before_last[0]["pk"]}}),
        )
        .await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{reply}");
    assert_eq!(reply["error"]["code"], "INTERNAL", "{reply}");
    r.stop().await;
}
