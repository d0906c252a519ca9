//! Given these published rows, when this snapshot is applied, then these events / this conflict.

use super::*;
use crate::hashing::{entity_hash, geometry_hash, links_hash};
use crate::validation::parse_snapshot;
use palimpsest_events::atlas::{
    Bbox, EntityEvent, EntityRow, GeometryEvent, GeometryRow, PublicationSource, Timestamp,
};
use serde_json::{Value, json};

fn t(minutes: i64) -> Timestamp {
    Timestamp::parse("2026-04-19T10:00:00Z")
        .expect("time")
        .plus_seconds(minutes * 60)
}

fn source() -> PublicationSource {
    PublicationSource {
        submission_id: "sub".into(),
        section_id: "s".into(),
        reviewed_by: Some("rev".into()),
    }
}

fn entity(id: &str, slug: Option<&str>) -> EntityRow {
    EntityRow {
        id: id.into(),
        name: format!("name {id}"),
        slug: slug.map(Into::into),
        description: None,
        type_id: "country".into(),
        status: Some(1),
        is_deleted: 0,
        created_at: t(0),
        updated_at: t(0),
    }
}

fn geometry(id: &str, binding: Option<Vec<&str>>) -> GeometryRow {
    GeometryRow {
        id: id.into(),
        kind: Some("country".into()),
        is_deleted: 0,
        draw_geometry: json!({"type": "Point", "coordinates": [1, 1]}),
        binding: binding.map(|b| b.into_iter().map(Into::into).collect()),
        time_start: None,
        time_end: None,
        bbox: Some(Bbox {
            min_lng: 1.0,
            min_lat: 1.0,
            max_lng: 1.0,
            max_lat: 1.0,
        }),
        created_at: t(0),
        updated_at: t(0),
    }
}

/// Given published entities and geometries (with links).
fn given(entities: &[EntityRow], geometries: &[(GeometryRow, Vec<&str>)]) -> PublishedView {
    let mut view = PublishedView::default();
    for e in entities {
        view.entities.insert(
            e.id.clone(),
            EntityState {
                row: Some(e.clone()),
            },
        );
        if let Some(slug) = &e.slug {
            view.slug_owners.insert(slug.clone(), e.id.clone());
        }
    }
    for (g, links) in geometries {
        view.geometries.insert(
            g.id.clone(),
            GeometryState {
                row: Some(g.clone()),
                links: links.iter().map(|l| l.to_string()).collect(),
            },
        );
    }
    view
}

fn apply(snapshot: Value, view: &PublishedView) -> Result<Publication, Conflict> {
    let snapshot = parse_snapshot(&snapshot).expect("valid snapshot");
    plan_publication(&snapshot, view, &source(), t(10))
}

fn conflict(snapshot: Value, view: &PublishedView) -> String {
    match apply(snapshot, view) {
        Ok(p) => panic!("expected a conflict, got {p:?}"),
        Err(c) => c.to_string(),
    }
}

fn point() -> Value {
    json!({"type": "Polygon", "coordinates": [[[0, 0], [4, 0], [4, 3], [0, 0]]]})
}

#[test]
fn create_then_link_in_one_snapshot() {
    let p = apply(
        json!({
            "entities": [{"operation": "create", "id": "e1", "name": "Champa", "slug": "champa"}],
            "geometries": [{"operation": "create", "id": "g1", "type": "country", "draw_geometry": point(), "binding": ["g9", "g9", ""], "time_start": 192}],
            "link_scopes": [{"geometry_id": "g1", "entity_ids": ["e1"]}]
        }),
        &PublishedView::default(),
    )
    .expect("applies");
    let [EntityEvent::EntityCreated { entity, source: s }] = p.entities["e1"].as_slice() else {
        panic!("{:?}", p.entities);
    };
    assert_eq!(entity.slug.as_deref(), Some("champa"));
    assert_eq!((entity.created_at, entity.updated_at), (t(10), t(10)));
    assert_eq!(s, &source());
    let g = &p.geometries["g1"];
    assert_eq!(g.len(), 2);
    let GeometryEvent::GeometryCreated { geometry, .. } = &g[0] else {
        panic!("{g:?}")
    };
    assert_eq!(geometry.binding, Some(vec!["g9".to_owned()]));
    assert_eq!(
        geometry.bbox,
        Some(Bbox {
            min_lng: 0.0,
            min_lat: 0.0,
            max_lng: 4.0,
            max_lat: 3.0
        }),
        "bbox computed from the GeoJSON"
    );
    assert!(
        matches!(&g[1], GeometryEvent::GeometryLinksReplaced { entity_ids, .. } if entity_ids == &["e1"])
    );
}

#[test]
fn reference_writes_nothing() {
    let view = given(&[entity("e1", None)], &[]);
    let p = apply(
        json!({"entities": [{"operation": "reference", "id": "e1", "base_hash": "sha256:stale"}],
               "geometries": [{"operation": "reference", "id": "nope"}]}),
        &view,
    )
    .expect("applies");
    assert_eq!(p, Publication::default());
}

#[test]
fn update_keeps_created_at_and_checks_the_base() {
    let e = entity("e1", Some("dv"));
    let view = given(std::slice::from_ref(&e), &[]);
    let ok = apply(
        json!({"entities": [{"operation": "update", "id": "e1", "name": "Đại Cồ Việt", "slug": "dv",
            "base_updated_at": "2026-04-19T10:00:00.000Z", "base_hash": entity_hash(&e)}]}),
        &view,
    )
    .expect("applies");
    let [EntityEvent::EntityUpdated { entity: row, .. }] = ok.entities["e1"].as_slice() else {
        panic!()
    };
    assert_eq!((row.created_at, row.updated_at), (t(0), t(10)));
    assert_eq!(row.name, "Đại Cồ Việt");

    assert_eq!(
        conflict(
            json!({"entities": [{"operation": "update", "id": "e1", "name": "x", "base_updated_at": "2026-04-19T09:00:00.000Z"}]}),
            &view
        ),
        "Conflict: entity e1 changed since base_updated_at 2026-04-19T09:00:00.000Z (published updated_at 2026-04-19T10:00:00.000Z)"
    );
    assert!(
        conflict(
            json!({"entities": [{"operation": "update", "id": "e1", "name": "x", "base_hash": "sha256:00"}]}),
            &view
        )
        .starts_with("Conflict: entity e1 changed since base_hash sha256:00")
    );
    assert_eq!(
        conflict(
            json!({"entities": [{"operation": "update", "id": "e2", "name": "x"}]}),
            &view
        ),
        "Conflict: entity e2 does not exist"
    );
    assert_eq!(
        conflict(
            json!({"entities": [{"operation": "create", "id": "e1", "name": "x"}]}),
            &view
        ),
        "Conflict: entity e1 already exists"
    );
}

#[test]
fn deleting_an_entity_removes_its_links() {
    let view = given(
        &[entity("e1", None), entity("e2", None)],
        &[
            (geometry("g1", None), vec!["e1", "e2"]),
            (geometry("g2", None), vec!["e2"]),
        ],
    );
    let p = apply(
        json!({"entities": [{"operation": "delete", "id": "e1"}]}),
        &view,
    )
    .expect("applies");
    assert!(matches!(
        p.entities["e1"].as_slice(),
        [EntityEvent::EntityDeleted { at, .. }] if *at == t(10)
    ));
    assert_eq!(p.geometries.len(), 1, "g2 is untouched");
    assert!(matches!(
        p.geometries["g1"].as_slice(),
        [GeometryEvent::GeometryLinksReplaced { entity_ids, unlinked_entity: Some(u), .. }]
            if entity_ids == &["e2"] && u == "e1"
    ));
    let deleted = given(
        &[EntityRow {
            is_deleted: 1,
            ..entity("e1", None)
        }],
        &[],
    );
    assert_eq!(
        conflict(
            json!({"entities": [{"operation": "delete", "id": "e1"}]}),
            &deleted
        ),
        "Conflict: entity e1 is deleted"
    );
}

#[test]
fn deleting_a_geometry_strips_it_from_other_bindings() {
    let view = given(
        &[entity("e1", None)],
        &[
            (geometry("g1", None), vec!["e1"]),
            (geometry("g2", Some(vec!["g1", "g3"])), vec![]),
            (geometry("g3", Some(vec!["g2"])), vec![]),
        ],
    );
    let p = apply(
        json!({"geometries": [{"operation": "delete", "id": "g1", "base_hash": geometry_hash(&geometry("g1", None))}]}),
        &view,
    )
    .expect("applies");
    assert!(matches!(
        p.geometries["g1"].as_slice(),
        [GeometryEvent::GeometryDeleted { .. }]
    ));
    let [
        GeometryEvent::GeometryUpdated {
            geometry: g2,
            stripped_binding: Some(stripped),
            ..
        },
    ] = p.geometries["g2"].as_slice()
    else {
        panic!("{:?}", p.geometries)
    };
    assert_eq!(stripped, "g1");
    assert_eq!(g2.binding, Some(vec!["g3".to_owned()]));
    assert_eq!(g2.updated_at, t(10));
    assert!(!p.geometries.contains_key("g3"));
}

#[test]
fn a_binding_created_earlier_in_the_snapshot_is_stripped_too() {
    let view = given(&[], &[(geometry("g1", None), vec![])]);
    let p = apply(
        json!({"geometries": [
            {"operation": "create", "id": "g2", "draw_geometry": point(), "binding": ["g1"]},
            {"operation": "delete", "id": "g1"}
        ]}),
        &view,
    )
    .expect("applies");
    let events = &p.geometries["g2"];
    assert_eq!(events.len(), 2);
    assert!(
        matches!(&events[1], GeometryEvent::GeometryUpdated { geometry, .. } if geometry.binding == Some(vec![]))
    );
}

#[test]
fn link_scopes_need_live_rows_and_an_unchanged_base() {
    let view = given(
        &[
            entity("e1", None),
            EntityRow {
                is_deleted: 1,
                ..entity("e2", None)
            },
        ],
        &[(geometry("g1", None), vec!["e1"])],
    );
    assert_eq!(
        conflict(
            json!({"link_scopes": [{"geometry_id": "g1", "entity_ids": ["e2"]}]}),
            &view
        ),
        "Conflict: entity e2 is deleted"
    );
    assert_eq!(
        conflict(
            json!({"link_scopes": [{"geometry_id": "g1", "entity_ids": ["e3"]}]}),
            &view
        ),
        "Conflict: entity e3 does not exist"
    );
    assert_eq!(
        conflict(
            json!({"link_scopes": [{"geometry_id": "g2", "entity_ids": ["e1"]}]}),
            &view
        ),
        "Conflict: geometry g2 does not exist"
    );
    assert!(
        conflict(
            json!({"link_scopes": [{"geometry_id": "g1", "entity_ids": ["e1"], "base_links_hash": links_hash(&[])}]}),
            &view
        )
        .starts_with("Conflict: links of geometry g1 changed since base_links_hash")
    );
    let p = apply(
        json!({"link_scopes": [{"geometry_id": "g1", "entity_ids": ["e1"], "base_links_hash": links_hash(&["e1".into()])}]}),
        &view,
    )
    .expect("applies");
    assert_eq!(p.geometries["g1"].len(), 1);
    assert_eq!(
        conflict(
            json!({"geometries": [{"operation": "delete", "id": "g1"}],
                   "link_scopes": [{"geometry_id": "g1", "entity_ids": ["e1"]}]}),
            &view
        ),
        "Conflict: geometry g1 is deleted"
    );
}

#[test]
fn base_values_refer_to_the_state_before_the_approval() {
    let g1 = geometry("g1", None);
    let view = given(
        &[],
        &[
            (g1.clone(), vec![]),
            (geometry("g2", Some(vec!["g1"])), vec![]),
        ],
    );
    let g2 = geometry("g2", Some(vec!["g1"]));
    apply(
        json!({"geometries": [
            {"operation": "delete", "id": "g1"},
            {"operation": "update", "id": "g2", "draw_geometry": point(), "base_hash": geometry_hash(&g2), "base_updated_at": g2.updated_at.to_iso()}
        ]}),
        &view,
    )
    .expect("the strip of g2's binding does not count against the editor's base");
}

#[test]
fn slugs_stay_unique_across_the_published_table() {
    let view = given(&[entity("e1", Some("dv")), entity("e2", Some("cp"))], &[]);
    assert_eq!(
        conflict(
            json!({"entities": [{"operation": "create", "id": "e3", "name": "x", "slug": "dv"}]}),
            &view
        ),
        "Conflict: slug dv would be held by entities e1, e3"
    );
    let mut only_owner = PublishedView::default();
    only_owner.slug_owners.insert("dv".into(), "e9".into());
    assert_eq!(
        conflict(
            json!({"entities": [{"operation": "create", "id": "e3", "name": "x", "slug": "dv"}]}),
            &only_owner
        ),
        "Conflict: slug dv is already used by entity e9"
    );
    apply(
        json!({"entities": [
            {"operation": "update", "id": "e1", "name": "a", "slug": "cp2"},
            {"operation": "update", "id": "e2", "name": "b", "slug": "dv"}
        ]}),
        &view,
    )
    .expect("a slug freed earlier in the snapshot can be reused");
}

#[test]
fn the_snapshot_is_deleted_flag_and_a_null_status_are_published_as_sent() {
    let p = apply(
        json!({
            "entities": [
                {"operation": "create", "id": "e1", "name": "Gone", "is_deleted": 1, "status": null},
                {"operation": "update", "id": "e2", "name": "Kept", "is_deleted": 0}
            ],
            "geometries": [{"operation": "create", "id": "g1", "draw_geometry": point(), "is_deleted": 1}]
        }),
        &given(&[entity("e2", None)], &[]),
    )
    .expect("applies");
    let [EntityEvent::EntityCreated { entity: e1, .. }] = p.entities["e1"].as_slice() else {
        panic!("{:?}", p.entities);
    };
    assert_eq!((e1.is_deleted, e1.status), (1, None));
    let [EntityEvent::EntityUpdated { entity: e2, .. }] = p.entities["e2"].as_slice() else {
        panic!("{:?}", p.entities);
    };
    assert_eq!((e2.is_deleted, e2.status), (0, Some(1)));
    let [GeometryEvent::GeometryCreated { geometry, .. }] = p.geometries["g1"].as_slice() else {
        panic!("{:?}", p.geometries);
    };
    assert_eq!(geometry.is_deleted, 1);
}
