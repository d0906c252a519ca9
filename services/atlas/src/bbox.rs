//! The bounding box of a GeoJSON value, computed when a snapshot does not send one.
//!
//! Every position (an array whose first two items are numbers: longitude, latitude) found in
//! `coordinates` — at any nesting depth, so Point, LineString, Polygon and their Multi forms
//! alike — and in the members of a GeometryCollection, Feature or FeatureCollection counts.
//! A value without any position has no box.

use palimpsest_events::atlas::Bbox;
use serde_json::Value;

/// The smallest box holding every position of `geojson`, if it has any.
pub fn bbox_of(geojson: &Value) -> Option<Bbox> {
    let mut acc: Option<Bbox> = None;
    visit(geojson, &mut acc);
    acc
}

fn visit(value: &Value, acc: &mut Option<Bbox>) {
    let Value::Object(m) = value else { return };
    if let Some(coordinates) = m.get("coordinates") {
        positions(coordinates, acc);
    }
    if let Some(Value::Array(members)) = m.get("geometries") {
        members.iter().for_each(|g| visit(g, acc));
    }
    if let Some(geometry) = m.get("geometry") {
        visit(geometry, acc);
    }
    if let Some(Value::Array(features)) = m.get("features") {
        features.iter().for_each(|f| visit(f, acc));
    }
}

fn positions(value: &Value, acc: &mut Option<Bbox>) {
    let Value::Array(items) = value else { return };
    if let (Some(lng), Some(lat)) = (
        items.first().and_then(Value::as_f64),
        items.get(1).and_then(Value::as_f64),
    ) {
        if lng.is_finite() && lat.is_finite() {
            extend(acc, lng, lat);
        }
        return;
    }
    items.iter().for_each(|item| positions(item, acc));
}

fn extend(acc: &mut Option<Bbox>, lng: f64, lat: f64) {
    *acc = Some(match acc.take() {
        None => Bbox {
            min_lng: lng,
            min_lat: lat,
            max_lng: lng,
            max_lat: lat,
        },
        Some(b) => Bbox {
            min_lng: b.min_lng.min(lng),
            min_lat: b.min_lat.min(lat),
            max_lng: b.max_lng.max(lng),
            max_lat: b.max_lat.max(lat),
        },
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn b(min_lng: f64, min_lat: f64, max_lng: f64, max_lat: f64) -> Option<Bbox> {
        Some(Bbox {
            min_lng,
            min_lat,
            max_lng,
            max_lat,
        })
    }

    #[test]
    fn point_line_and_polygon() {
        assert_eq!(
            bbox_of(&json!({"type": "Point", "coordinates": [105.8, 21.0]})),
            b(105.8, 21.0, 105.8, 21.0)
        );
        assert_eq!(
            bbox_of(&json!({"type": "LineString", "coordinates": [[1, 5], [-3, 2.5], [4, 0]]})),
            b(-3.0, 0.0, 4.0, 5.0)
        );
        assert_eq!(
            bbox_of(
                &json!({"type": "Polygon", "coordinates": [[[0, 0], [10, 0], [10, 8], [0, 0]], [[2, 2], [3, 2], [2, -1], [2, 2]]]})
            ),
            b(0.0, -1.0, 10.0, 8.0)
        );
    }

    #[test]
    fn multi_geometries_collections_and_features() {
        let mp = json!({"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 1], [0, 1], [0, 0]]], [[[5, -5], [6, -4], [5, -4], [5, -5]]]]});
        assert_eq!(bbox_of(&mp), b(0.0, -5.0, 6.0, 1.0));
        let gc = json!({"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [-170, 60]}, mp]});
        assert_eq!(bbox_of(&gc), b(-170.0, -5.0, 6.0, 60.0));
        let fc = json!({"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": {"type": "Point", "coordinates": [3, 4, 100]}}]});
        assert_eq!(bbox_of(&fc), b(3.0, 4.0, 3.0, 4.0));
    }

    #[test]
    fn no_positions_no_box() {
        assert_eq!(
            bbox_of(&json!({"type": "Polygon", "coordinates": []})),
            None
        );
        assert_eq!(bbox_of(&json!({"type": "Point"})), None);
        assert_eq!(bbox_of(&json!([1, 2])), None);
    }
}
