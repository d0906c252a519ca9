//! GeoJSON geometry checks (RFC 7946 §3.1), run when a snapshot is committed so that a geometry
//! which could only fail later — at approval, or in a map client — is refused while its editor
//! is still there to fix it.
//!
//! - `type` is one of `Point`, `MultiPoint`, `LineString`, `MultiLineString`, `Polygon`,
//!   `MultiPolygon`, `GeometryCollection`;
//! - `coordinates` is an array nested as the type says; a position is an array of two or more
//!   finite numbers (longitude, latitude, then anything the RFC allows);
//! - a LineString has at least two positions; a Polygon's ring at least four, the last equal to
//!   the first;
//! - an empty `coordinates` array is an empty geometry, which the RFC allows;
//! - a GeometryCollection has a `geometries` array of geometries (nested at most 8 deep).

use super::SnapshotError;
use serde_json::{Map, Value};

/// How deep GeometryCollections may nest.
const MAX_DEPTH: usize = 8;

fn refuse<T>(field: &str, reason: impl Into<String>) -> Result<T, SnapshotError> {
    Err(SnapshotError {
        field: field.to_owned(),
        reason: reason.into(),
    })
}

/// Checks that `value` (found at `field`) is a GeoJSON geometry object.
pub fn check_geometry(value: &Value, field: &str) -> Result<(), SnapshotError> {
    geometry(value, field, 0)
}

fn geometry(value: &Value, field: &str, depth: usize) -> Result<(), SnapshotError> {
    let Value::Object(m) = value else {
        return refuse(field, "must be a GeoJSON geometry object with a type");
    };
    let Some(Value::String(kind)) = m.get("type") else {
        return refuse(field, "must be a GeoJSON geometry object with a type");
    };
    if kind == "GeometryCollection" {
        return collection(m, field, depth);
    }
    let coordinates = match m.get("coordinates") {
        Some(Value::Array(items)) => items,
        Some(_) => return refuse(&format!("{field}.coordinates"), "must be an array"),
        None => return refuse(&format!("{field}.coordinates"), "is required"),
    };
    if coordinates.is_empty() {
        return Ok(());
    }
    let at = format!("{field}.coordinates");
    match kind.as_str() {
        "Point" => position(&m["coordinates"], &at),
        "MultiPoint" => each(coordinates, &at, position),
        "LineString" => line(&m["coordinates"], &at),
        "MultiLineString" => each(coordinates, &at, line),
        "Polygon" => polygon(&m["coordinates"], &at),
        "MultiPolygon" => each(coordinates, &at, polygon),
        other => refuse(
            &format!("{field}.type"),
            format!(
                "must be Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon \
                 or GeometryCollection, not `{other}`"
            ),
        ),
    }
}

fn collection(m: &Map<String, Value>, field: &str, depth: usize) -> Result<(), SnapshotError> {
    if depth >= MAX_DEPTH {
        return refuse(
            field,
            format!("nests GeometryCollections over {MAX_DEPTH} deep"),
        );
    }
    match m.get("geometries") {
        Some(Value::Array(members)) => members
            .iter()
            .enumerate()
            .try_for_each(|(i, g)| geometry(g, &format!("{field}.geometries[{i}]"), depth + 1)),
        _ => refuse(&format!("{field}.geometries"), "must be an array"),
    }
}

fn each(
    items: &[Value],
    field: &str,
    check: fn(&Value, &str) -> Result<(), SnapshotError>,
) -> Result<(), SnapshotError> {
    items
        .iter()
        .enumerate()
        .try_for_each(|(i, item)| check(item, &format!("{field}[{i}]")))
}

fn position(value: &Value, field: &str) -> Result<(), SnapshotError> {
    match value {
        Value::Array(numbers)
            if numbers.len() >= 2
                && numbers
                    .iter()
                    .all(|n| n.as_f64().is_some_and(f64::is_finite)) =>
        {
            Ok(())
        }
        _ => refuse(field, "must be a position: an array of two or more numbers"),
    }
}

fn positions<'a>(
    value: &'a Value,
    field: &str,
    at_least: usize,
) -> Result<&'a [Value], SnapshotError> {
    let Value::Array(items) = value else {
        return refuse(field, "must be an array of positions");
    };
    each(items, field, position)?;
    if items.len() < at_least {
        return refuse(field, format!("must have at least {at_least} positions"));
    }
    Ok(items)
}

fn line(value: &Value, field: &str) -> Result<(), SnapshotError> {
    positions(value, field, 2).map(|_| ())
}

fn ring(value: &Value, field: &str) -> Result<(), SnapshotError> {
    let items = positions(value, field, 4)?;
    if items.first() != items.last() {
        return refuse(field, "must end where it starts (a closed ring)");
    }
    Ok(())
}

fn polygon(value: &Value, field: &str) -> Result<(), SnapshotError> {
    match value {
        Value::Array(rings) => each(rings, field, ring),
        _ => refuse(field, "must be an array of linear rings"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn reason(value: Value) -> String {
        check_geometry(&value, "g").map_or_else(|e| e.to_string(), |()| "ok".into())
    }

    #[test]
    fn well_formed_geometries_pass() {
        for g in [
            json!({"type": "Point", "coordinates": [105.8, 21.0]}),
            json!({"type": "Point", "coordinates": [3, 4, 100]}),
            json!({"type": "Polygon", "coordinates": []}),
            json!({"type": "LineString", "coordinates": [[1, 5], [-3, 2.5]]}),
            json!({"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 1], [0, 1], [0, 0]]]]}),
            json!({"type": "GeometryCollection", "geometries": [{"type": "MultiPoint", "coordinates": [[1, 2]]}]}),
        ] {
            assert_eq!(reason(g.clone()), "ok", "{g}");
        }
    }

    #[test]
    fn malformed_coordinates_are_refused_naming_the_place() {
        assert_eq!(
            reason(json!({"type": "Polygon", "coordinates": "nope"})),
            "g.coordinates must be an array"
        );
        assert_eq!(
            reason(json!({"type": "Point", "coordinates": [1, "2"]})),
            "g.coordinates must be a position: an array of two or more numbers"
        );
        assert_eq!(
            reason(json!({"type": "Polygon", "coordinates": [[[0, 0], [1, 1], [0, 1], [2, 2]]]})),
            "g.coordinates[0] must end where it starts (a closed ring)"
        );
        assert_eq!(
            reason(json!({"type": "LineString", "coordinates": [[0, 0]]})),
            "g.coordinates must have at least 2 positions"
        );
        assert_eq!(
            reason(json!({"type": "Circle", "coordinates": [0, 0]})),
            "g.type must be Point, MultiPoint, LineString, MultiLineString, Polygon, MultiPolygon or GeometryCollection, not `Circle`"
        );
        assert_eq!(
            reason(json!({"type": "Point"})),
            "g.coordinates is required"
        );
        assert_eq!(
            reason(
                json!({"type": "GeometryCollection", "geometries": [{"type": "Point", "coordinates": [0, null]}]})
            ),
            "g.geometries[0].coordinates must be a position: an array of two or more numbers"
        );
    }
}
