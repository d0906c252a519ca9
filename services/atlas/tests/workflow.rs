//! The whole section workflow through HTTP, and the published map it produces.

mod common;

use common::{Atlas, polygon};
use palimpsest_atlas::read::rows::canonical_value;
use reqwest::StatusCode;
use serde_json::{Value, json};

fn first_snapshot() -> Value {
    json!({
        "schema_version": 1,
        "section": {"title": "Đông Á"},
        "editor_feature_collection": {"type": "FeatureCollection", "features": []},
        "entities": [
            {"operation": "create", "id": "dai-viet", "name": "Đại Việt", "slug": "dai-viet", "type_id": "country"},
            {"operation": "create", "id": "song-hong", "name": "Sông Hồng", "slug": "song-hong", "type_id": "river"}
        ],
        "geometries": [
            {"operation": "create", "id": "g-dv", "type": "country", "draw_geometry": polygon(105.0, 20.0), "time_start": 1054, "time_end": 1400},
            {"operation": "create", "id": "g-river", "type": "line", "draw_geometry": {"type": "LineString", "coordinates": [[104.0, 22.5], [106.5, 20.2]]}, "binding": ["g-dv", "g-dv", ""]}
        ],
        "link_scopes": [
            {"operation": "replace", "geometry_id": "g-dv", "entity_ids": ["dai-viet"]},
            {"operation": "replace", "geometry_id": "g-river", "entity_ids": ["song-hong"]}
        ]
    })
}

#[tokio::test]
async fn create_lock_commit_restore_submit_reject_commit_submit_approve_read() {
    let atlas = Atlas::start().await;

    // create
    let (status, section) = atlas
        .post("/sections", json!({"title": "Đông Á", "description": "1000 AD", "user_id": "ann", "created_by": "ann"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{section}");
    let id = section["id"].as_str().expect("id").to_owned();
    assert_eq!(section["state"]["status"], "editing");
    assert_eq!(section["state"]["version"], 0);
    let (_, listed) = atlas.get("/sections").await;
    assert_eq!(
        listed[0], section,
        "the write's answer equals the read model's row"
    );

    // lock through the editor
    let (status, editor) = atlas
        .get(&format!("/sections/{id}/editor?user_id=ann"))
        .await;
    assert_eq!(status, StatusCode::OK, "{editor}");
    assert_eq!(editor["state"]["locked_by"], "ann");
    assert_eq!(editor["head_commit"], Value::Null);

    // commit 1, commit 2, restore 1
    let c1 = atlas.commit(&id, "ann", first_snapshot()).await;
    let mut second = first_snapshot();
    second["entities"][0]["name"] = json!("Đại Cồ Việt");
    let (status, c2) = atlas
        .post(
            &format!("/sections/{id}/commits"),
            json!({"created_by": "ann", "snapshot": second, "title": "rename", "expected_version": 1, "expected_head_commit_id": c1}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{c2}");
    assert_eq!(c2["commit"]["commit_no"], 2);
    assert_eq!(c2["commit"]["parent_commit_id"], c1.as_str());
    assert_eq!(c2["state"]["version"], 2);
    let (status, restored) = atlas
        .post(
            &format!("/sections/{id}/restore"),
            json!({"created_by": "ann", "commit_id": c1, "note": "back to 1"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{restored}");
    assert_eq!(restored["commit"]["kind"], "restore");
    assert_eq!(restored["commit"]["restored_from_commit_id"], c1.as_str());
    assert_eq!(restored["commit"]["commit_no"], 3);
    let (_, editor) = atlas.get(&format!("/sections/{id}/editor")).await;
    assert_eq!(editor["snapshot"], canonical_value(&first_snapshot()));
    assert_eq!(editor["head_commit"], restored["commit"]);

    // submit, reject
    let sub1 = atlas.submit(&id, "ann").await;
    let (_, after_submit) = atlas.get(&format!("/sections/{id}")).await;
    assert_eq!(after_submit["state"]["status"], "submitted");
    assert_eq!(
        after_submit["state"]["locked_by"],
        Value::Null,
        "submit releases the lock"
    );
    let (status, rejected) = atlas
        .post(
            &format!("/submissions/{sub1}/reject"),
            json!({"reviewed_by": "rev", "review_note": "bad river"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{rejected}");
    assert_eq!(rejected["submission"]["status"], "rejected");
    assert_eq!(rejected["state"]["status"], "rejected");
    let (_, entities) = atlas.get("/entities").await;
    assert_eq!(entities, json!([]), "reject publishes nothing");

    // commit again, submit, approve
    let mut third = first_snapshot();
    third["geometries"][1]["time_start"] = json!(900);
    atlas.commit(&id, "ann", third.clone()).await;
    let (_, state) = atlas.get(&format!("/sections/{id}")).await;
    assert_eq!(state["state"]["status"], "editing");
    let sub2 = atlas.submit(&id, "ann").await;
    let approved = atlas.approve(&sub2).await;
    assert_eq!(approved["submission"]["status"], "approved");
    assert_eq!(approved["submission"]["reviewed_by"], "rev");
    assert_eq!(approved["state"]["status"], "approved");
    assert_eq!(
        approved["state"]["version"], 4,
        "4 commits (one a restore); submits and reviews do not move it (spec §4.3)"
    );

    // submissions history
    let (_, subs) = atlas.get(&format!("/sections/{id}/submissions")).await;
    assert_eq!(subs.as_array().map(Vec::len), Some(2));
    assert_eq!(subs[0]["id"], sub2.as_str());
    assert_eq!(subs[0], approved["submission"]);
    assert_eq!(subs[1]["review_note"], "bad river");
    let snapshot_json = subs[0]["snapshot_json"].as_str().expect("text");
    assert_eq!(
        serde_json::from_str::<Value>(snapshot_json).expect("json"),
        canonical_value(&third)
    );
    assert_eq!(
        subs[0]["snapshot_hash"],
        palimpsest_events::canonical::sha256_tagged(&third).as_str()
    );

    // read the map
    let (status, dv) = atlas.get("/entities/dai-viet").await;
    assert_eq!(status, StatusCode::OK, "{dv}");
    assert_eq!(dv["name"], "Đại Việt");
    assert_eq!(dv["geometry_count"], 1);
    assert!(
        dv["hash"]
            .as_str()
            .is_some_and(|h| h.starts_with("sha256:"))
    );
    let (_, found) = atlas.get("/entities?q=SÔNG").await;
    assert_eq!(found.as_array().map(Vec::len), Some(1));
    let (_, by_slug) = atlas.get("/entities?q=dai-v").await;
    assert_eq!(by_slug[0]["id"], "dai-viet");
    let (_, search) = atlas.get("/entities/search?q=vi&limit=500").await;
    assert_eq!(search.as_array().map(Vec::len), Some(1));

    let (status, map) = atlas
        .get("/geometries?minLng=100&minLat=15&maxLng=110&maxLat=25")
        .await;
    assert_eq!(status, StatusCode::OK, "{map}");
    assert_eq!(map["type"], "FeatureCollection");
    let features = map["features"].as_array().expect("features");
    assert_eq!(features.len(), 2);
    let river = features
        .iter()
        .find(|f| f["id"] == "g-river")
        .expect("river");
    assert_eq!(
        river["properties"]["type"], "river",
        "legacy `line` falls back to the entity's type_id"
    );
    assert_eq!(river["properties"]["binding"], json!(["g-dv"]));
    assert_eq!(
        river["properties"]["bbox"],
        json!({"min_lng": 104.0, "min_lat": 20.2, "max_lng": 106.5, "max_lat": 22.5})
    );
    assert_eq!(river["geometry"]["type"], "LineString");
    let (_, year_1500) = atlas
        .get("/geometries?minLng=100&minLat=15&maxLng=110&maxLat=25&time=1500")
        .await;
    assert_eq!(
        year_1500["features"].as_array().map(Vec::len),
        Some(1),
        "g-dv ends in 1400"
    );
    let (_, of_entity) = atlas
        .get("/geometries?minLng=100&minLat=15&maxLng=110&maxLat=25&entity_id=dai-viet")
        .await;
    assert_eq!(of_entity["features"][0]["id"], "g-dv");
    let (_, elsewhere) = atlas
        .get("/geometries?minLng=0&minLat=0&maxLng=10&maxLat=10")
        .await;
    assert_eq!(elsewhere["features"], json!([]));

    // the tables
    let states = atlas.rows("SELECT * FROM atlas.section_states").await;
    assert_eq!(states.len(), 1);
    assert_eq!(states[0]["status"], "approved");
    let commits = atlas
        .rows("SELECT commit_no, kind FROM atlas.section_commits ORDER BY commit_no")
        .await;
    assert_eq!(
        commits,
        vec![
            json!({"commit_no": 1, "kind": "manual"}),
            json!({"commit_no": 2, "kind": "manual"}),
            json!({"commit_no": 3, "kind": "restore"}),
            json!({"commit_no": 4, "kind": "manual"})
        ]
    );
    let links = atlas
        .rows("SELECT entity_id, geometry_id FROM atlas.entity_geometries ORDER BY 1")
        .await;
    assert_eq!(
        links,
        vec![
            json!({"entity_id": "dai-viet", "geometry_id": "g-dv"}),
            json!({"entity_id": "song-hong", "geometry_id": "g-river"})
        ]
    );

    // history names the submission and reviewer
    let (_, history) = atlas.get("/geometries/g-river/history").await;
    let history = history.as_array().expect("history");
    assert_eq!(history.len(), 2);
    assert_eq!(history[0]["change"], "created");
    assert_eq!(history[1]["change"], "links_replaced");
    assert_eq!(history[1]["submission_id"], sub2.as_str());
    assert_eq!(history[1]["reviewed_by"], "rev");
    assert_eq!(history[1]["geometry"]["entity_ids"], json!(["song-hong"]));
    let (status, _) = atlas.get("/entities/nobody/history").await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // the OpenAPI document
    let (status, doc) = atlas.get("/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    assert!(doc["paths"]["/submissions/{id}/approve"]["post"].is_object());

    atlas.stop().await;
}

#[tokio::test]
async fn history_and_time_as_of_show_the_map_before_a_later_approval() {
    let atlas = Atlas::start().await;
    let (_, s1) = atlas
        .submitted(
            "ann",
            json!({
                "entities": [{"operation": "create", "id": "e1", "name": "Champa"}],
                "geometries": [{"operation": "create", "id": "g1", "type": "country", "draw_geometry": polygon(108.0, 12.0)}],
                "link_scopes": [{"geometry_id": "g1", "entity_ids": ["e1"]}]
            }),
        )
        .await;
    atlas.approve(&s1).await;
    let (_, before) = atlas.get("/entities/e1").await;
    let (_, map_before) = atlas
        .get("/geometries?minLng=100&minLat=0&maxLng=120&maxLat=20")
        .await;
    let feature = &map_before["features"][0];

    // a second section renames the entity and deletes the geometry, using the read API's bases
    let (_, s2) = atlas
        .submitted(
            "bob",
            json!({
                "entities": [{"operation": "update", "id": "e1", "name": "Lâm Ấp",
                    "base_updated_at": before["updated_at"], "base_hash": before["hash"]}],
                "geometries": [{"operation": "delete", "id": "g1",
                    "base_updated_at": feature["properties"]["updated_at"], "base_hash": feature["properties"]["hash"]}]
            }),
        )
        .await;
    let approved = atlas.approve(&s2).await;
    let (_, after) = atlas.get("/entities/e1").await;
    assert_eq!(after["name"], "Lâm Ấp");
    assert_eq!(
        after["geometry_count"], 0,
        "deleting the geometry removed its links"
    );
    let (_, map_after) = atlas
        .get("/geometries?minLng=100&minLat=0&maxLng=120&maxLat=20")
        .await;
    assert_eq!(map_after["features"], json!([]));

    // as of just before the second approval
    let t = before["updated_at"].as_str().expect("time");
    let (status, old) = atlas.get(&format!("/entities/e1?time_as_of={t}")).await;
    assert_eq!(status, StatusCode::OK, "{old}");
    assert_eq!(old["name"], "Champa");
    assert_eq!(old["geometry_count"], 1);
    assert_eq!(old["hash"], before["hash"]);
    let (_, old_map) = atlas
        .get(&format!(
            "/geometries?minLng=100&minLat=0&maxLng=120&maxLat=20&time_as_of={t}"
        ))
        .await;
    assert_eq!(old_map["features"].as_array().map(Vec::len), Some(1));
    assert_eq!(
        old_map["features"][0], *feature,
        "the map as of then equals the map read then"
    );
    let (_, old_by_entity) = atlas
        .get(&format!(
            "/geometries?minLng=100&minLat=0&maxLng=120&maxLat=20&entity_id=e1&time_as_of={t}"
        ))
        .await;
    assert_eq!(old_by_entity["features"].as_array().map(Vec::len), Some(1));
    let (_, nothing_yet) = atlas.get("/entities?time_as_of=2000-01-01").await;
    assert_eq!(nothing_yet, json!([]));
    let (status, _) = atlas.get("/entities?time_as_of=yesterday").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    let (_, history) = atlas.get("/entities/e1/history").await;
    assert_eq!(history.as_array().map(Vec::len), Some(2));
    assert_eq!(history[0]["submission_id"], s1.as_str());
    assert_eq!(history[1]["submission_id"], s2.as_str());
    assert_eq!(history[1]["change"], "updated");
    assert_eq!(history[0]["valid_to"], history[1]["valid_from"]);
    assert_eq!(history[1]["valid_to"], Value::Null);
    assert_eq!(approved["submission"]["status"], "approved");
    atlas.stop().await;
}
