//! The hashes of the atlas context. The original's formulas are not public, so these are ours:
//! every hash is `sha256:<lower-case hex>` of the RFC 8785 (JCS) canonical JSON of a value
//! ([`palimpsest_events::canonical::sha256_tagged`]):
//!
//! - `snapshot_hash`: the snapshot exactly as stored (the whole JSON object, unknown fields
//!   included). `snapshot_json` columns hold that canonical text, so
//!   `sha256(snapshot_json) == snapshot_hash`.
//! - entity `base_hash`: the object
//!   `{"id","name","slug","description","type_id","status","is_deleted"}` of the published row
//!   (null for absent values; times are left out — `base_updated_at` covers them).
//! - geometry `base_hash`: the object `{"id","type","is_deleted","draw_geometry","binding",
//!   "time_start","time_end","bbox_min_lng","bbox_min_lat","bbox_max_lng","bbox_max_lat"}` where
//!   `draw_geometry` is the GeoJSON value (not its text) and `binding` the id array or null.
//! - `base_links_hash`: the JSON array of the geometry's linked entity ids, sorted by code
//!   point, without duplicates (`[]` for a geometry without links).
//!
//! The read API returns `hash` (and `links_hash` for geometries) beside each row's
//! `updated_at`, so an editor can send them back as its base.

use palimpsest_events::atlas::{EntityRow, GeometryRow};
use palimpsest_events::canonical::sha256_tagged;
use serde_json::{Value, json};

/// `snapshot_hash` of a snapshot.
pub fn snapshot_hash(snapshot: &Value) -> String {
    sha256_tagged(snapshot)
}

/// `base_hash` of a published entity row.
pub fn entity_hash(row: &EntityRow) -> String {
    sha256_tagged(&json!({
        "id": row.id,
        "name": row.name,
        "slug": row.slug,
        "description": row.description,
        "type_id": row.type_id,
        "status": row.status,
        "is_deleted": row.is_deleted,
    }))
}

/// `base_hash` of a published geometry row.
pub fn geometry_hash(row: &GeometryRow) -> String {
    sha256_tagged(&json!({
        "id": row.id,
        "type": row.kind,
        "is_deleted": row.is_deleted,
        "draw_geometry": row.draw_geometry,
        "binding": row.binding,
        "time_start": row.time_start,
        "time_end": row.time_end,
        "bbox_min_lng": row.bbox.map(|b| b.min_lng),
        "bbox_min_lat": row.bbox.map(|b| b.min_lat),
        "bbox_max_lng": row.bbox.map(|b| b.max_lng),
        "bbox_max_lat": row.bbox.map(|b| b.max_lat),
    }))
}

/// `base_links_hash` of a geometry's linked entity ids (any order).
pub fn links_hash(entity_ids: &[String]) -> String {
    let mut ids: Vec<&String> = entity_ids.iter().collect();
    ids.sort();
    ids.dedup();
    sha256_tagged(&json!(ids))
}

#[cfg(test)]
mod tests {
    use super::*;
    use palimpsest_events::atlas::{Bbox, Timestamp};

    fn entity() -> EntityRow {
        let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("time");
        EntityRow {
            id: "e1".into(),
            name: "Đại Việt".into(),
            slug: Some("dai-viet".into()),
            description: None,
            type_id: "country".into(),
            status: Some(1),
            is_deleted: 0,
            created_at: at,
            updated_at: at,
        }
    }

    #[test]
    fn entity_hash_is_the_documented_formula() {
        let want = sha256_tagged(&serde_json::from_str::<Value>(
            r#"{"description":null,"id":"e1","is_deleted":0,"name":"Đại Việt","slug":"dai-viet","status":1,"type_id":"country"}"#,
        ).expect("json"));
        assert_eq!(entity_hash(&entity()), want);
        let mut later = entity();
        later.updated_at = Timestamp::parse("2027-01-01T00:00:00Z").expect("time");
        assert_eq!(entity_hash(&later), want, "times are not hashed");
        later.name = "Nam Việt".into();
        assert_ne!(entity_hash(&later), want);
    }

    #[test]
    fn geometry_hash_covers_geojson_binding_and_bbox() {
        let at = Timestamp::parse("2026-01-01T00:00:00Z").expect("time");
        let mut g = GeometryRow {
            id: "g1".into(),
            kind: Some("country".into()),
            is_deleted: 0,
            draw_geometry: json!({"type": "Point", "coordinates": [1.5, 2]}),
            binding: Some(vec!["g2".into()]),
            time_start: Some(938),
            time_end: None,
            bbox: Some(Bbox {
                min_lng: 1.5,
                min_lat: 2.0,
                max_lng: 1.5,
                max_lat: 2.0,
            }),
            created_at: at,
            updated_at: at,
        };
        let want = sha256_tagged(&serde_json::from_str::<Value>(
            r#"{"bbox_max_lat":2,"bbox_max_lng":1.5,"bbox_min_lat":2,"bbox_min_lng":1.5,"binding":["g2"],"draw_geometry":{"coordinates":[1.5,2],"type":"Point"},"id":"g1","is_deleted":0,"time_end":null,"time_start":938,"type":"country"}"#,
        ).expect("json"));
        assert_eq!(geometry_hash(&g), want);
        g.binding = None;
        assert_ne!(geometry_hash(&g), want);
    }

    #[test]
    fn links_hash_ignores_order_and_duplicates() {
        let a = links_hash(&["b".into(), "a".into(), "b".into()]);
        assert_eq!(a, links_hash(&["a".into(), "b".into()]));
        assert_eq!(a, sha256_tagged(&json!(["a", "b"])));
        assert_eq!(links_hash(&[]), sha256_tagged(&json!([])));
    }
}
