//! Bad input: a clear 4xx naming what is wrong, and nothing appended.

mod common;

use common::Atlas;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn bad_snapshots_are_refused_naming_the_field() {
    let atlas = Atlas::start().await;
    let id = atlas.section("v").await;
    let before = atlas.log_size().await;
    let cases = [
        (
            json!([1, 2]),
            "Invalid snapshot: snapshot must be an object",
        ),
        (
            json!({"entities": [{"operation": "create", "id": "e"}]}),
            "Invalid snapshot: entities[0].name is required",
        ),
        (
            json!({"entities": [{"operation": "drop", "id": "e", "name": "x"}]}),
            "Invalid snapshot: entities[0].operation must be create, update, replace, delete or reference, not `drop`",
        ),
        (
            json!({"entities": [{"operation": "create", "id": "a", "name": "A", "slug": "X"}, {"operation": "create", "id": "b", "name": "B", "slug": "x"}]}),
            "Invalid snapshot: entities[1].slug `x` is already used by entities[0] in this snapshot",
        ),
        (
            json!({"geometries": [{"operation": "create", "id": "g"}]}),
            "Invalid snapshot: geometries[0].draw_geometry is required",
        ),
        (
            json!({"geometries": [{"operation": "update", "id": "g", "draw_geometry": {"type": "Point", "coordinates": [0, 0]}, "time_start": 10, "time_end": 5}]}),
            "Invalid snapshot: geometries[0].time_start must not be after time_end (10 > 5)",
        ),
        (
            json!({"geometries": [{"operation": "create", "id": "g", "geometry": {"type": "Point", "coordinates": [0, 0]}, "bbox": {"min_lng": 1, "min_lat": 0, "max_lng": 0, "max_lat": 0}}]}),
            "Invalid snapshot: geometries[0].bbox.min_lng must not exceed max_lng",
        ),
        (
            json!({"geometries": [{"operation": "create", "id": "g", "geometry": {"type": "Point", "coordinates": [0, 0]}, "binding": ["g"]}]}),
            "Invalid snapshot: geometries[0].binding must not contain the geometry's own id",
        ),
        (
            json!({"link_scopes": [{"geometry_id": "g", "entity_ids": []}]}),
            "Invalid snapshot: link_scopes[0].entity_ids must not be empty",
        ),
    ];
    for (snapshot, message) in cases {
        let (status, body) = atlas
            .post(
                &format!("/sections/{id}/commits"),
                json!({"created_by": "ann", "snapshot": snapshot}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"], message);
    }
    assert_eq!(
        atlas.log_size().await,
        before,
        "nothing appended, not even the lock"
    );
    let (_, section) = atlas.get(&format!("/sections/{id}")).await;
    assert_eq!(section["state"]["locked_by"], serde_json::Value::Null);
    atlas.stop().await;
}

#[tokio::test]
async fn malformed_requests_get_a_clear_error() {
    let atlas = Atlas::start().await;
    let id = atlas.section("v").await;
    let before = atlas.log_size().await;
    let (status, body) = atlas.post_raw("/sections", "{not json").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("request body is not JSON"))
    );
    let (status, body) = atlas.post("/sections", json!({"title": "  "})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("title is required"))
    );
    let (status, body) = atlas.post("/sections", json!({"title": 5.5})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("title must be a string"))
    );
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "ann"}),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("snapshot is required"))
    );
    // `created_by` and `user_id` are no longer required: the acting user is the caller
    // (tests/auth.rs).
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "ann", "snapshot": {}, "expected_version": "1"}),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (
            StatusCode::BAD_REQUEST,
            Some("expected_version must be an integer")
        )
    );
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/restore"),
            json!({"created_by": "ann"}),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("commit_id is required"))
    );
    assert_eq!(atlas.log_size().await, before);

    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/restore"),
            json!({"created_by": "ann", "commit_id": "nope"}),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (
            StatusCode::NOT_FOUND,
            Some("Commit nope not found in this section")
        )
    );
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/submit"),
            json!({"submitted_by": "ann"}),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (
            StatusCode::CONFLICT,
            Some("Section has no commit to submit")
        )
    );
    let (status, _) = atlas
        .post("/sections/nope/lock", json!({"user_id": "ann"}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = atlas.get("/sections/nope/editor").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = atlas.get("/sections/nope/submissions").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = atlas.post("/submissions/nope/approve", json!({})).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("Submission not found"))
    );
    let (status, _) = atlas.post("/submissions/nope/reject", json!({})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(atlas.log_size().await, before);
    atlas.stop().await;
}

#[tokio::test]
async fn map_queries_need_the_whole_bbox() {
    let atlas = Atlas::start().await;
    let (status, body) = atlas.get("/geometries?minLng=0&minLat=0&maxLng=1").await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("maxLat is required"))
    );
    let (status, body) = atlas
        .get("/geometries?minLng=a&minLat=0&maxLng=1&maxLat=1")
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("minLng must be a number"))
    );
    let (status, body) = atlas
        .get("/geometries?minLng=0&minLat=0&maxLng=1&maxLat=1&time=x")
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("time must be an integer"))
    );
    let (status, body) = atlas
        .get("/geometries?minLng=0&minLat=0&maxLng=1&maxLat=1")
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({"type": "FeatureCollection", "features": []}));
    let (status, _) = atlas.get("/entities/none").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    atlas.stop().await;
}
