//! The spec's validation list, one case each: a bad snapshot names its field.

use super::*;
use serde_json::json;

fn refused(snapshot: Value) -> String {
    parse_snapshot(&snapshot)
        .map(|_| "accepted".to_owned())
        .unwrap_or_else(|e| e.to_string())
}

fn point() -> Value {
    json!({"type": "Point", "coordinates": [105.85, 21.03]})
}

#[test]
fn the_snapshot_must_be_an_object_with_arrays() {
    assert_eq!(refused(json!([1])), "snapshot must be an object");
    assert_eq!(
        refused(json!({"entities": {}})),
        "entities must be an array"
    );
    assert_eq!(refused(json!({})), "accepted");
}

#[test]
fn entity_operations_and_names() {
    assert_eq!(
        refused(json!({"entities": [{"id": "e", "operation": "merge", "name": "x"}]})),
        "entities[0].operation must be create, update, replace, delete or reference, not `merge`"
    );
    assert_eq!(
        refused(json!({"entities": [{"id": "e", "name": "x"}]})),
        "entities[0].operation is required"
    );
    for op in ["create", "update", "replace"] {
        assert_eq!(
            refused(json!({"entities": [{"id": "e", "operation": op, "name": " "}]})),
            "entities[0].name is required"
        );
    }
    assert_eq!(
        refused(
            json!({"entities": [{"id": "e", "operation": "delete"}, {"id": "f", "operation": "reference"}]})
        ),
        "accepted"
    );
    assert_eq!(
        refused(json!({"entities": [{"operation": "delete"}]})),
        "entities[0].id is required"
    );
    assert_eq!(
        refused(
            json!({"entities": [{"id": "e", "operation": "create", "name": "x", "status": "1"}]})
        ),
        "entities[0].status must be an integer"
    );
}

#[test]
fn replace_reads_as_update_with_defaults() {
    let s = parse_snapshot(
        &json!({"entities": [{"id": 7, "operation": "replace", "name": "x", "slug": ""}]}),
    )
    .expect("valid");
    assert_eq!(s.entities[0].id, "7");
    assert_eq!(
        s.entities[0].action,
        Action::Update(EntityFields {
            name: "x".into(),
            slug: None,
            description: None,
            type_id: "country".into(),
            status: Some(1),
            is_deleted: 0,
        })
    );
}

#[test]
fn slugs_are_unique_in_lower_case() {
    assert_eq!(
        refused(json!({"entities": [
            {"id": "a", "operation": "create", "name": "A", "slug": "Dai-Viet"},
            {"id": "b", "operation": "update", "name": "B", "slug": "dai-viet"}
        ]})),
        "entities[1].slug `dai-viet` is already used by entities[0] in this snapshot"
    );
}

#[test]
fn geometries_need_a_draw_geometry_unless_deleted_or_referenced() {
    assert_eq!(
        refused(json!({"geometries": [{"id": "g", "operation": "create"}]})),
        "geometries[0].draw_geometry is required"
    );
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "update", "draw_geometry": [1, 2]}]})
        ),
        "geometries[0].draw_geometry must be a GeoJSON geometry object with a type"
    );
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "delete"}, {"id": "h", "operation": "reference"}]})
        ),
        "accepted"
    );
    let s = parse_snapshot(
        &json!({"geometries": [{"id": "g", "operation": "create", "geometry": point()}]}),
    )
    .expect("geometry fallback");
    let Action::Create(f) = &s.geometries[0].action else {
        panic!("not a create")
    };
    assert_eq!(f.draw_geometry, point());
    assert_eq!(f.bbox.map(|b| b.min_lng), Some(105.85), "bbox computed");
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "unknown", "draw_geometry": point()}]})
        ),
        "geometries[0].operation must be create, update, replace, delete or reference, not `unknown`"
    );
}

#[test]
fn time_range_and_bbox_are_checked() {
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "time_start": 1500, "time_end": 1400}]})
        ),
        "geometries[0].time_start must not be after time_end (1500 > 1400)"
    );
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "time_start": 1400, "time_end": 1400}]})
        ),
        "accepted"
    );
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "bbox": {"min_lng": 0, "min_lat": 0, "max_lng": "1", "max_lat": 1}}]})
        ),
        "geometries[0].bbox.max_lng must be a number"
    );
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "bbox": {"min_lng": 2, "min_lat": 0, "max_lng": 1, "max_lat": 1}}]})
        ),
        "geometries[0].bbox.min_lng must not exceed max_lng"
    );
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "bbox": {"min_lng": 0, "min_lat": 3, "max_lng": 1, "max_lat": 1}}]})
        ),
        "geometries[0].bbox.min_lat must not exceed max_lat"
    );
}

#[test]
fn binding_is_an_id_array_without_the_geometry_itself() {
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "binding": "h"}]})
        ),
        "geometries[0].binding must be an array of ids"
    );
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "binding": ["h", "g"]}]})
        ),
        "geometries[0].binding must not contain the geometry's own id"
    );
    assert_eq!(
        refused(
            json!({"geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "binding": [{"id": "h"}]}]})
        ),
        "geometries[0].binding[0] must be a string id"
    );
    let s = parse_snapshot(&json!({"geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "binding": ["h", "", " h", 5]}]}))
        .expect("valid");
    let Action::Create(f) = &s.geometries[0].action else {
        panic!("not a create")
    };
    assert_eq!(f.binding, Some(vec!["h".to_owned(), "5".to_owned()]));
}

#[test]
fn link_scopes_need_a_geometry_and_entities() {
    assert_eq!(
        refused(json!({"link_scopes": [{"geometry_id": "g", "entity_ids": []}]})),
        "link_scopes[0].entity_ids must not be empty"
    );
    assert_eq!(
        refused(json!({"link_scopes": [{"entity_ids": ["e"]}]})),
        "link_scopes[0].geometry_id is required"
    );
    assert_eq!(
        refused(
            json!({"link_scopes": [{"geometry_id": "g", "entity_ids": ["e"], "operation": "delete"}]})
        ),
        "link_scopes[0].operation must be replace or reference, not `delete`"
    );
    let s = parse_snapshot(&json!({"link_scopes": [{"geometry_id": "g", "entity_ids": ["e", "f", "e"], "operation": "reference"}]}))
        .expect("valid");
    assert_eq!(s.link_scopes[0].entity_ids, vec!["e", "f"]);
    assert!(!s.link_scopes[0].replace);
}

#[test]
fn is_deleted_and_a_null_status_are_read_as_sent() {
    let s = parse_snapshot(&json!({
        "entities": [
            {"id": "e1", "operation": "create", "name": "x", "status": null, "is_deleted": 1},
            {"id": "e2", "operation": "update", "name": "y", "is_deleted": false}
        ],
        "geometries": [{"id": "g", "operation": "create", "draw_geometry": point(), "is_deleted": true}]
    }))
    .expect("valid");
    let Action::Create(f) = &s.entities[0].action else {
        panic!("{:?}", s.entities[0]);
    };
    assert_eq!((f.status, f.is_deleted), (None, 1));
    let Action::Update(f) = &s.entities[1].action else {
        panic!("{:?}", s.entities[1]);
    };
    assert_eq!((f.status, f.is_deleted), (Some(1), 0));
    let Action::Create(g) = &s.geometries[0].action else {
        panic!("{:?}", s.geometries[0]);
    };
    assert_eq!(g.is_deleted, 1);
    assert_eq!(
        refused(
            json!({"entities": [{"id": "e", "operation": "create", "name": "x", "is_deleted": 2}]})
        ),
        "entities[0].is_deleted must be 0 or 1"
    );
}

#[test]
fn a_geometry_whose_coordinates_are_not_geojson_is_refused_at_commit() {
    assert_eq!(
        refused(json!({"geometries": [{"id": "g", "operation": "create",
            "draw_geometry": {"type": "Polygon", "coordinates": "nope"}}]})),
        "geometries[0].draw_geometry.coordinates must be an array"
    );
    assert_eq!(
        refused(json!({"geometries": [{"id": "g", "operation": "update",
            "geometry": {"type": "Point", "coordinates": [1]}}]})),
        "geometries[0].geometry.coordinates must be a position: an array of two or more numbers"
    );
}
