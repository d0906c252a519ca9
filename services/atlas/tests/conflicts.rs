//! Approvals that meet a changed published map: conflicted, nothing published; and two
//! concurrent approvals: one wins, the other is conflicted, never a mix.

mod common;

use common::{Atlas, polygon};
use reqwest::StatusCode;
use serde_json::{Value, json};

async fn publish(atlas: &Atlas, snapshot: Value) {
    let (_, submission) = atlas.submitted("ann", snapshot).await;
    atlas.approve(&submission).await;
}

#[tokio::test]
async fn a_stale_base_conflicts_and_publishes_nothing() {
    let atlas = Atlas::start().await;
    publish(
        &atlas,
        json!({"entities": [{"operation": "create", "id": "e1", "name": "Phù Nam"}]}),
    )
    .await;
    let (_, e1) = atlas.get("/entities/e1").await;
    let (_, first) = atlas
        .submitted("ann", json!({"entities": [{"operation": "update", "id": "e1", "name": "Funan", "base_hash": e1["hash"]}]}))
        .await;
    let (_, stale) = atlas
        .submitted("bob", json!({"entities": [{"operation": "update", "id": "e1", "name": "Chân Lạp", "base_updated_at": e1["updated_at"]}]}))
        .await;
    atlas.approve(&first).await;
    let before = atlas.log_size().await;
    let (status, body) = atlas
        .post(
            &format!("/submissions/{stale}/approve"),
            json!({"reviewed_by": "rev"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let message = body["error"].as_str().expect("message");
    assert!(
        message.starts_with("Conflict: entity e1 changed since base_updated_at"),
        "{message}"
    );
    assert_eq!(body["submission"]["status"], "conflicted");
    assert_eq!(body["submission"]["review_note"], message);
    assert_eq!(body["state"]["status"], "conflicted");
    assert_eq!(
        atlas.log_size().await,
        before + 1,
        "only the SubmissionConflicted event"
    );
    let (_, now) = atlas.get("/entities/e1").await;
    assert_eq!(now["name"], "Funan");

    // approving it again is refused: it is no longer pending
    let (status, body) = atlas
        .post(&format!("/submissions/{stale}/approve"), json!({}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"], "Submission is conflicted, not pending");
    atlas.stop().await;
}

#[tokio::test]
async fn the_conflicted_section_can_be_fixed_and_resubmitted() {
    let atlas = Atlas::start().await;
    publish(
        &atlas,
        json!({"entities": [{"operation": "create", "id": "e1", "name": "A"}]}),
    )
    .await;
    let (section, stale) = atlas
        .submitted("bob", json!({"entities": [{"operation": "update", "id": "e1", "name": "B", "base_hash": "sha256:0"}]}))
        .await;
    let (status, _) = atlas
        .post(&format!("/submissions/{stale}/approve"), json!({}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (_, e1) = atlas.get("/entities/e1").await;
    atlas
        .commit(&section, "bob", json!({"entities": [{"operation": "update", "id": "e1", "name": "B", "base_hash": e1["hash"]}]}))
        .await;
    let fixed = atlas.submit(&section, "bob").await;
    atlas.approve(&fixed).await;
    let (_, e1) = atlas.get("/entities/e1").await;
    assert_eq!(e1["name"], "B");
    atlas.stop().await;
}

#[tokio::test]
async fn two_concurrent_overlapping_approvals_one_wins_one_conflicts() {
    let atlas = Atlas::start().await;
    publish(
        &atlas,
        json!({
            "entities": [{"operation": "create", "id": "e1", "name": "Đại Việt"}],
            "geometries": [{"operation": "create", "id": "g1", "draw_geometry": polygon(105.0, 20.0)}]
        }),
    )
    .await;
    let (_, e1) = atlas.get("/entities/e1").await;
    let (_, map) = atlas
        .get("/geometries?minLng=100&minLat=15&maxLng=110&maxLat=25")
        .await;
    let g1 = map["features"][0]["properties"].clone();
    let edit = |name: &str, lng: f64| {
        json!({
            "entities": [{"operation": "update", "id": "e1", "name": name, "base_hash": e1["hash"], "base_updated_at": e1["updated_at"]}],
            "geometries": [{"operation": "update", "id": "g1", "draw_geometry": polygon(lng, 20.0), "base_hash": g1["hash"]}]
        })
    };
    let (_, a) = atlas.submitted("ann", edit("Ann's", 101.0)).await;
    let (_, b) = atlas.submitted("bob", edit("Bob's", 102.0)).await;
    let path_a = format!("/submissions/{a}/approve");
    let path_b = format!("/submissions/{b}/approve");
    let ((sa, ba), (sb, bb)) = tokio::join!(
        atlas.post(&path_a, json!({"reviewed_by": "rev1"})),
        atlas.post(&path_b, json!({"reviewed_by": "rev2"}))
    );
    let mut statuses = [sa, sb];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::OK, StatusCode::CONFLICT],
        "{ba} {bb}"
    );
    let (winner, winner_name, winner_lng) = if sa == StatusCode::OK {
        (a, "Ann's", 101.0)
    } else {
        (b, "Bob's", 102.0)
    };
    let loser = if sa == StatusCode::OK { bb } else { ba };
    assert_eq!(loser["submission"]["status"], "conflicted");

    let (_, e1_after) = atlas.get("/entities/e1").await;
    assert_eq!(e1_after["name"], winner_name);
    let (_, history) = atlas.get("/entities/e1/history").await;
    assert_eq!(
        history.as_array().map(Vec::len),
        Some(2),
        "one update, not two"
    );
    assert_eq!(history[1]["submission_id"], winner.as_str());
    let (_, g_history) = atlas.get("/geometries/g1/history").await;
    assert_eq!(g_history.as_array().map(Vec::len), Some(2));
    assert_eq!(
        g_history[1]["submission_id"],
        winner.as_str(),
        "both rows from the same approval"
    );
    assert_eq!(g_history[1]["geometry"]["bbox"]["min_lng"], winner_lng);
    atlas.stop().await;
}

#[tokio::test]
async fn concurrent_approvals_that_do_not_overlap_both_publish() {
    let atlas = Atlas::start().await;
    let (_, a) = atlas
        .submitted(
            "ann",
            json!({"entities": [{"operation": "create", "id": "a", "name": "A", "slug": "a"}]}),
        )
        .await;
    let (_, b) = atlas
        .submitted(
            "bob",
            json!({"entities": [{"operation": "create", "id": "b", "name": "B", "slug": "b"}]}),
        )
        .await;
    let (pa, pb) = (
        format!("/submissions/{a}/approve"),
        format!("/submissions/{b}/approve"),
    );
    let ((sa, _), (sb, _)) = tokio::join!(atlas.post(&pa, json!({})), atlas.post(&pb, json!({})));
    assert_eq!((sa, sb), (StatusCode::OK, StatusCode::OK));
    let (_, all) = atlas.get("/entities").await;
    assert_eq!(all.as_array().map(Vec::len), Some(2));
    let published = atlas
        .rows("SELECT version FROM atlas.publication_head")
        .await;
    assert_eq!(published, vec![json!({"version": 2})]);
    atlas.stop().await;
}

#[tokio::test]
async fn deletes_unlink_entities_and_strip_bindings_found_in_the_read_model() {
    let atlas = Atlas::start().await;
    publish(
        &atlas,
        json!({
            "entities": [{"operation": "create", "id": "e1", "name": "Tây Sơn"}, {"operation": "create", "id": "e2", "name": "Nguyễn"}],
            "geometries": [
                {"operation": "create", "id": "g1", "draw_geometry": polygon(106.0, 14.0)},
                {"operation": "create", "id": "g2", "draw_geometry": polygon(106.5, 14.5), "binding": ["g1", "g3"]},
                {"operation": "create", "id": "g3", "draw_geometry": polygon(107.0, 15.0), "binding": ["g1"]}
            ],
            "link_scopes": [
                {"geometry_id": "g1", "entity_ids": ["e1", "e2"]},
                {"geometry_id": "g2", "entity_ids": ["e1"]}
            ]
        }),
    )
    .await;
    publish(
        &atlas,
        json!({
            "entities": [{"operation": "delete", "id": "e1"}],
            "geometries": [{"operation": "delete", "id": "g1"}]
        }),
    )
    .await;
    let links = atlas
        .rows("SELECT entity_id, geometry_id FROM atlas.entity_geometries ORDER BY 1, 2")
        .await;
    assert_eq!(
        links,
        Vec::<Value>::new(),
        "e1's links and g1's links are gone"
    );
    let geometries = atlas
        .rows("SELECT id, binding, is_deleted FROM atlas.geometries ORDER BY id")
        .await;
    assert_eq!(
        geometries,
        vec![
            json!({"id": "g1", "binding": null, "is_deleted": 1}),
            json!({"id": "g2", "binding": "[\"g3\"]", "is_deleted": 0}),
            json!({"id": "g3", "binding": "[]", "is_deleted": 0})
        ]
    );
    let (_, g2) = atlas.get("/geometries/g2/history").await;
    let changes: Vec<&str> = g2
        .as_array()
        .expect("history")
        .iter()
        .filter_map(|h| h["change"].as_str())
        .collect();
    assert_eq!(
        changes,
        [
            "created",
            "links_replaced",
            "entity_unlinked",
            "binding_stripped"
        ]
    );
    let (status, _) = atlas.get("/entities/e1").await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "deleted entities are not read"
    );
    atlas.stop().await;
}

#[tokio::test]
async fn a_slug_held_by_another_entity_conflicts() {
    let atlas = Atlas::start().await;
    publish(
        &atlas,
        json!({"entities": [{"operation": "create", "id": "e1", "name": "X", "slug": "champa"}]}),
    )
    .await;
    let (_, s) = atlas
        .submitted("ann", json!({"entities": [{"operation": "create", "id": "e2", "name": "Y", "slug": "champa"}]}))
        .await;
    let (status, body) = atlas
        .post(&format!("/submissions/{s}/approve"), json!({}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        body["error"],
        "Conflict: slug champa is already used by entity e1"
    );
    let (status, body) = atlas
        .post(&format!("/submissions/{s}/reject"), json!({}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    atlas.stop().await;
}

#[tokio::test]
async fn link_scopes_to_missing_entities_conflict() {
    let atlas = Atlas::start().await;
    let (_, s) = atlas
        .submitted(
            "ann",
            json!({
                "geometries": [{"operation": "create", "id": "g1", "draw_geometry": polygon(1.0, 1.0)}],
                "link_scopes": [{"geometry_id": "g1", "entity_ids": ["ghost"]}]
            }),
        )
        .await;
    let (status, body) = atlas
        .post(&format!("/submissions/{s}/approve"), json!({}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"], "Conflict: entity ghost does not exist");
    let (_, map) = atlas
        .get("/geometries?minLng=0&minLat=0&maxLng=5&maxLat=5")
        .await;
    assert_eq!(
        map["features"],
        json!([]),
        "the geometry of the same snapshot was not published"
    );
    atlas.stop().await;
}
