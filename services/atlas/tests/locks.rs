//! Locks through HTTP: a free, own or lapsed lock can be taken; another's live lock refuses
//! lock, commit, restore, unlock and the editor's lock.

mod common;

use common::Atlas;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn another_users_live_lock_refuses_writes() {
    let atlas = Atlas::start().await;
    let id = atlas.section("locks").await;
    let (status, ann) = atlas
        .post(&format!("/sections/{id}/lock"), json!({"user_id": "ann"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{ann}");
    assert_eq!(ann["state"]["locked_by"], "ann");
    let locked_at = ann["state"]["locked_at"].as_str().expect("locked_at");
    let expires = ann["state"]["lock_expires_at"].as_str().expect("expires");
    let minutes = chrono::DateTime::parse_from_rfc3339(expires).expect("time")
        - chrono::DateTime::parse_from_rfc3339(locked_at).expect("time");
    assert_eq!(minutes.num_minutes(), 15);
    assert_eq!(ann["state"]["version"], 0, "locks do not bump the version");

    let before = atlas.log_size().await;
    let (status, body) = atlas
        .post(&format!("/sections/{id}/lock"), json!({"user_id": "bob"}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        body["error"],
        format!("Section is locked by ann until {expires}")
    );
    let (status, _) = atlas
        .post(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "bob", "snapshot": {}}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _) = atlas
        .post(&format!("/sections/{id}/unlock"), json!({"user_id": "bob"}))
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    let (status, _) = atlas
        .get(&format!("/sections/{id}/editor?user_id=bob"))
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        atlas.log_size().await,
        before,
        "refused commands append nothing"
    );

    // ann commits under her lock, renews it, releases it; then bob can take it
    let c1 = atlas.commit(&id, "ann", json!({})).await;
    let (status, renewed) = atlas
        .post(&format!("/sections/{id}/lock"), json!({"actor": "ann"}))
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(renewed["state"]["lock_expires_at"].as_str() >= Some(expires));
    let (status, released) = atlas
        .post(&format!("/sections/{id}/unlock"), json!({"user_id": "ann"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{released}");
    assert_eq!(released["state"]["locked_by"], serde_json::Value::Null);
    let (status, restored) = atlas
        .post(
            &format!("/sections/{id}/restore"),
            json!({"created_by": "bob", "commit_id": c1}),
        )
        .await;
    assert_eq!(
        status,
        StatusCode::CREATED,
        "a free lock is taken by the restore"
    );
    assert_eq!(restored["state"]["locked_by"], "bob");
    let (_, row) = atlas.get(&format!("/sections/{id}")).await;
    assert_eq!(row["state"], restored["state"]);
    atlas.stop().await;
}

#[tokio::test]
async fn optimistic_checks_refuse_a_moved_section() {
    let atlas = Atlas::start().await;
    let id = atlas.section("checks").await;
    let c1 = atlas.commit(&id, "ann", json!({})).await;
    let before = atlas.log_size().await;
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "ann", "snapshot": {}, "expected_version": 0}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"], "Section version is 1, expected 0");
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "ann", "snapshot": {}, "expected_head_commit_id": null}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        body["error"],
        format!("Section head commit is {c1}, expected none")
    );
    let (status, _) = atlas
        .post(
            &format!("/sections/{id}/submit"),
            json!({"submitted_by": "ann", "expected_version": 5}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(atlas.log_size().await, before);
    atlas.stop().await;
}

#[tokio::test]
async fn a_submitted_section_refuses_commits_until_reviewed() {
    let atlas = Atlas::start().await;
    let (id, submission) = atlas.submitted("ann", json!({})).await;
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "ann", "snapshot": {}}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"], "Cannot commit a section in status submitted");
    let (status, _) = atlas
        .post(
            &format!("/sections/{id}/submit"),
            json!({"submitted_by": "ann"}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    atlas.approve(&submission).await;
    let (status, body) = atlas
        .post(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "ann", "snapshot": {}}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT, "approved is final");
    assert_eq!(body["error"], "Cannot commit a section in status approved");
    let (_, approved) = atlas.get("/sections?status=approved").await;
    assert_eq!(approved.as_array().map(Vec::len), Some(1));
    let (_, editing) = atlas.get("/sections?status=editing").await;
    assert_eq!(editing, json!([]));
    atlas.stop().await;
}
