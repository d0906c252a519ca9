//! Answers schemathesis found wrong (tests/schemathesis), one test per distinct bug.

mod common;

use common::Atlas;
use reqwest::StatusCode;

/// JSON does not tell `7` from `7.0` (JSON Schema's `integer` is both): a user id or an
/// expected version written with a fraction was refused as "must be a string".
#[tokio::test]
async fn whole_numbers_written_with_a_fraction_are_integers() {
    let atlas = Atlas::start().await;
    let seven = atlas.issue("7", &["editor"]).await;
    let (status, body) = atlas
        .post_raw_as(&seven, "/sections", r#"{"title": "t", "created_by": 7.0}"#)
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["created_by"], "7", "{body}");
    let (status, body) = atlas
        .post_raw_as(
            &seven,
            "/sections",
            r#"{"title": "t", "created_by": -9223372036854775809}"#,
        )
        .await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "past i64, not rounded: {body}"
    );
    let (status, body) = atlas
        .post_raw_as(&seven, "/sections", r#"{"title": "t", "created_by": 7.5}"#)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    atlas.stop().await;
}
