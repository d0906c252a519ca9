//! Answers schemathesis found wrong (tests/schemathesis), one test per distinct bug.

mod common;

use common::Records;
use reqwest::StatusCode;
use serde_json::json;

/// JSON has one number type: an integer argument written `-1378.0` is that integer (JSON
/// Schema's `integer` says so too); it was refused with 400 "expected i64".
#[tokio::test]
async fn whole_numbers_written_with_a_fraction_are_integers() {
    let records = Records::start().await;
    let (status, body) = records.admin_call("listOrgs", json!({"v": -1378.0})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = records.admin_call("listOrgs", json!({"v": 1.5})).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "a fraction is not an integer: {body}"
    );
    records.stop().await;
}

/// Arguments are a JSON object; `[null, null]` was read as a struct's fields in order.
#[tokio::test]
async fn arguments_must_be_an_object() {
    let records = Records::start().await;
    let (status, body) = records.admin_call("listOrgs", json!([null])).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    records.stop().await;
}

/// `rotateKey` takes no argument but, like every function, an object: it ignored its body.
#[tokio::test]
async fn rotate_key_refuses_a_body_that_is_not_an_object() {
    let records = Records::start().await;
    let (status, body) = records.admin_call("rotateKey", json!([null, null])).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, body) = records.admin_call("rotateKey", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    records.stop().await;
}

/// A page cursor's time is one the server gave: one far in the past overflowed computing the
/// listing's `v` (`t - DELTA`), which killed the request's connection (found by schemathesis).
#[tokio::test]
async fn a_cursor_time_the_server_never_gave_is_refused() {
    let records = Records::start().await;
    for t in [i64::MIN + 1, -1, i64::MAX] {
        let after = json!({"org": "", "pk": "", "t": t});
        let (status, body) = records
            .admin_call("listOrgs", json!({"v": 0, "limit": 1, "after": after}))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "t = {t}: {body}");
    }
    let (status, body) = records
        .admin_call("listOrgs", json!({"v": 0, "limit": 1}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    records.stop().await;
}
