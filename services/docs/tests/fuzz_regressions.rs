//! Answers schemathesis found wrong (tests/schemathesis), one test per distinct bug.

mod common;

use common::Docs;
use serde_json::json;

/// A document id with U+0000 names nothing (the log never stores one), so the bulk reads answer
/// it as missing; they answered 500, Postgres refusing the text.
#[tokio::test]
async fn ids_with_a_nul_are_missing_not_a_server_error() {
    let docs = Docs::start().await;
    assert_eq!(docs.call("PUT", "/db", None).await.0, 201);
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
