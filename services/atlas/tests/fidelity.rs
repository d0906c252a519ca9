//! The last differences from the original History Map (issue 13), each through HTTP: a submit
//! under another user's lock, the status filter, the version, the primary entity of a map
//! feature, corrupt stored JSON, and GeoJSON checked at commit.

mod common;

use common::{Atlas, polygon};
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn a_submit_by_another_user_under_a_live_lock_is_a_conflict() {
    let atlas = Atlas::start().await;
    let id = atlas.section("locked").await;
    atlas.commit(&id, "ann", json!({})).await;
    let before = atlas.log_size().await;
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/submit"),
            json!({"submitted_by": "bob"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.starts_with("Section is locked by ann")),
        "{body}"
    );
    assert_eq!(atlas.log_size().await, before, "nothing appended");
    let (_, row) = atlas.get(&format!("/sections/{id}")).await;
    assert_eq!(row["state"]["locked_by"], "ann", "ann keeps her lock");
    atlas.submit(&id, "ann").await;
    atlas.stop().await;
}

#[tokio::test]
async fn the_version_moves_on_commits_only_and_the_status_filter_knows_the_statuses() {
    let atlas = Atlas::start().await;
    let (id, submission) = atlas.submitted("ann", json!({})).await;
    let (_, row) = atlas.get(&format!("/sections/{id}")).await;
    assert_eq!(
        row["state"]["version"], 1,
        "one commit; the submit does not count"
    );
    let (status, body) = atlas
        .post(
            &format!("/submissions/{submission}/reject"),
            json!({"reviewed_by": "rev"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["state"]["version"], 1, "nor does the review");

    let (status, rejected) = atlas.get("/sections?status=rejected").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(rejected.as_array().map(Vec::len), Some(1));
    let (status, none) = atlas.get("/sections?status=conflicted").await;
    assert_eq!((status, none), (StatusCode::OK, json!([])));
    let (status, body) = atlas.get("/sections?status=pending").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"],
        "status must be one of editing, submitted, approved, rejected, conflicted"
    );
    atlas.stop().await;
}

#[tokio::test]
async fn a_malformed_geometry_is_refused_at_commit() {
    let atlas = Atlas::start().await;
    let id = atlas.section("geo").await;
    let before = atlas.log_size().await;
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "ann", "snapshot": {"geometries": [{"operation": "create", "id": "g1",
                "draw_geometry": {"type": "Polygon", "coordinates": "nope"}}]}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        body["error"],
        "Invalid snapshot: geometries[0].draw_geometry.coordinates must be an array"
    );
    assert_eq!(atlas.log_size().await, before);
    atlas.stop().await;
}

const MAP: &str = "/geometries?minLng=100&minLat=0&maxLng=120&maxLat=20";

#[tokio::test]
async fn live_and_time_as_of_reads_show_the_same_primary_entity_type() {
    let atlas = Atlas::start().await;
    let (_, submission) = atlas
        .submitted(
            "ann",
            json!({
                "entities": [
                    {"operation": "create", "id": "a", "name": "Sông Hồng", "type_id": "river"},
                    {"operation": "create", "id": "b", "name": "Đại Việt", "type_id": "kingdom", "status": null}
                ],
                "geometries": [{"operation": "create", "id": "g1", "type": "line", "draw_geometry": polygon(105.0, 20.0)}],
                "link_scopes": [{"geometry_id": "g1", "entity_ids": ["b", "a"]}]
            }),
        )
        .await;
    atlas.approve(&submission).await;
    let (_, live) = atlas.get(MAP).await;
    assert_eq!(
        live["features"][0]["properties"]["type"], "kingdom",
        "the first link as the link scope listed it"
    );
    let now = chrono::Utc::now().to_rfc3339();
    let (_, then) = atlas
        .get(&format!("{MAP}&time_as_of={}", now.replace('+', "%2B")))
        .await;
    assert_eq!(then["features"][0]["properties"]["type"], "kingdom");
    let (_, b) = atlas.get("/entities/b").await;
    assert_eq!(
        b["status"],
        serde_json::Value::Null,
        "a null status is kept"
    );
    atlas.stop().await;
}

#[tokio::test]
async fn corrupt_stored_json_is_an_error_not_a_null_with_a_hash() {
    let atlas = Atlas::start().await;
    let (_, submission) = atlas
        .submitted(
            "ann",
            json!({"geometries": [{"operation": "create", "id": "g1", "type": "country", "draw_geometry": polygon(105.0, 20.0)}]}),
        )
        .await;
    atlas.approve(&submission).await;
    let client = atlas.state.read.get().await.expect("client");
    client
        .execute(
            "UPDATE atlas.geometries SET draw_geometry = '{\"type\": \"Polygon\", \"coord' WHERE id = 'g1'",
            &[],
        )
        .await
        .expect("corrupt the read model");
    let (status, body) = atlas.get(MAP).await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
    assert!(body["error"].is_string(), "an error body: {body}");
    atlas.stop().await;
}
