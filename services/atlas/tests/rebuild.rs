//! The read model is disposable: replaying the log from position 0 into a fresh schema gives
//! exactly the live tables.

mod common;

use common::{Atlas, polygon};
use serde_json::{Value, json};

const TABLES: [(&str, &str); 10] = [
    ("entities", "id"),
    ("geometries", "id"),
    ("entity_geometries", "entity_id, geometry_id"),
    ("sections", "id"),
    ("section_states", "section_id"),
    ("section_commits", "id"),
    ("section_submissions", "id"),
    ("entity_history", "entity_id, version"),
    ("geometry_history", "geometry_id, version"),
    ("publication_head", "id"),
];

async fn dump(atlas: &Atlas) -> Vec<(String, Vec<Value>)> {
    let mut out = Vec::new();
    for (table, key) in TABLES {
        let rows = atlas
            .rows(&format!("SELECT * FROM atlas.{table} ORDER BY {key}"))
            .await;
        out.push((table.to_owned(), rows));
    }
    out
}

#[tokio::test]
async fn a_replayed_rebuild_equals_the_live_read_model() {
    let atlas = Atlas::start().await;
    let (_, s1) = atlas
        .submitted(
            "ann",
            json!({
                "entities": [{"operation": "create", "id": "e1", "name": "Lý", "slug": "ly"}, {"operation": "create", "id": "e2", "name": "Trần"}],
                "geometries": [
                    {"operation": "create", "id": "g1", "draw_geometry": polygon(105.0, 21.0), "time_start": 1009, "time_end": 1225},
                    {"operation": "create", "id": "g2", "draw_geometry": polygon(105.5, 21.5), "binding": ["g1"]}
                ],
                "link_scopes": [{"geometry_id": "g1", "entity_ids": ["e1", "e2"]}, {"geometry_id": "g2", "entity_ids": ["e2"]}]
            }),
        )
        .await;
    atlas.approve(&s1).await;
    let (section, s2) = atlas
        .submitted(
            "bob",
            json!({
                "entities": [{"operation": "update", "id": "e2", "name": "Nhà Trần"}, {"operation": "delete", "id": "e1"}],
                "geometries": [{"operation": "delete", "id": "g1"}]
            }),
        )
        .await;
    let (_, rejected) = atlas
        .post(
            &format!("/submissions/{s2}/reject"),
            json!({"review_note": "later"}),
        )
        .await;
    assert_eq!(rejected["submission"]["status"], "rejected");
    let (_, _) = atlas
        .post(
            &format!("/sections/{section}/lock"),
            json!({"user_id": "bob"}),
        )
        .await;
    let c = atlas
        .commit(&section, "bob", json!({"entities": [{"operation": "delete", "id": "e1"}], "geometries": [{"operation": "delete", "id": "g1"}]}))
        .await;
    assert!(!c.is_empty());
    let s3 = atlas.submit(&section, "bob").await;
    atlas.approve(&s3).await;

    let live = dump(&atlas).await;
    assert!(
        live.iter().all(|(_, rows)| !rows.is_empty()),
        "every table has rows: {live:?}"
    );
    let report = palimpsest_projections::rebuild(
        &atlas.state.store,
        palimpsest_atlas::projection().as_ref(),
        |_, _| {},
    )
    .await
    .expect("rebuild");
    assert_eq!(report.position, atlas.log_size().await);
    let rebuilt = dump(&atlas).await;
    for ((table, a), (_, b)) in live.iter().zip(rebuilt.iter()) {
        assert_eq!(a, b, "table {table} differs after the rebuild");
    }
    atlas.stop().await;
}
