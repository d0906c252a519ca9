//! Snapshot validation: the spec's list of checks, each failing with the field it concerns.
//!
//! - the snapshot is an object; `entities`, `geometries`, `link_scopes` are arrays when present;
//! - every item has an `id` (a non-empty string or an integer, at most 1024 bytes);
//! - entity and geometry `operation` is one of `create`, `update`, `replace`, `delete`,
//!   `reference` (`replace` is applied as `update`);
//! - entity `create`/`update`/`replace` needs a non-blank `name`; slugs are unique within the
//!   snapshot, compared in lower case;
//! - geometry `create`/`update`/`replace` needs `draw_geometry` (or `geometry`), a GeoJSON
//!   geometry object whose coordinates are well formed ([`geojson`]); `delete`/`reference` need
//!   none;
//! - `time_start <= time_end` when both are given (integers);
//! - `is_deleted`, when given, is 0 or 1 (or a boolean); it is written as sent;
//! - entity `status`, when given, is an integer or null (null is stored as NULL, absent as 1);
//! - `bbox`, when given, has four finite numbers with `min <= max`;
//! - `binding`, when given, is an array of ids that does not contain the geometry's own id;
//! - every link scope has a `geometry_id` and a non-empty `entity_ids` array of ids.
//!
//! Fields of the wrong JSON type (a numeric `name`, a string `status`) are refused the same way.

pub mod geojson;

use crate::bbox::bbox_of;
use crate::published::binding::normalize_binding;
use crate::snapshot::{
    Action, Base, EntityChange, EntityFields, GeometryChange, GeometryFields, LinkScope, Snapshot,
};
use palimpsest_events::atlas::Bbox;
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Why a snapshot was refused: which field, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field} {reason}")]
pub struct SnapshotError {
    /// The JSON path of the field, e.g. `entities[2].name`.
    pub field: String,
    /// What is wrong, e.g. `is required`.
    pub reason: String,
}

fn err<T>(field: impl Into<String>, reason: impl Into<String>) -> Result<T, SnapshotError> {
    Err(SnapshotError {
        field: field.into(),
        reason: reason.into(),
    })
}

/// The longest id accepted: ids become stream keys.
const MAX_ID_BYTES: usize = 1024;

/// Validates a snapshot and reads what publishing needs from it.
pub fn parse_snapshot(snapshot: &Value) -> Result<Snapshot, SnapshotError> {
    let Value::Object(root) = snapshot else {
        return err("snapshot", "must be an object");
    };
    let entities = items(root, "entities")?
        .iter()
        .enumerate()
        .map(|(i, v)| entity(i, v))
        .collect::<Result<Vec<_>, _>>()?;
    check_slugs(&entities)?;
    let geometries = items(root, "geometries")?
        .iter()
        .enumerate()
        .map(|(i, v)| geometry(i, v))
        .collect::<Result<Vec<_>, _>>()?;
    let link_scopes = items(root, "link_scopes")?
        .iter()
        .enumerate()
        .map(|(i, v)| link_scope(i, v))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Snapshot {
        entities,
        geometries,
        link_scopes,
    })
}

fn items<'a>(root: &'a Map<String, Value>, key: &str) -> Result<&'a [Value], SnapshotError> {
    match root.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) => Ok(items),
        Some(_) => err(key, "must be an array"),
    }
}

fn object<'a>(value: &'a Value, field: &str) -> Result<&'a Map<String, Value>, SnapshotError> {
    match value {
        Value::Object(m) => Ok(m),
        _ => err(field, "must be an object"),
    }
}

/// Reads an id: a non-empty string (trimmed) or an integer.
pub fn id_value(value: &Value, field: &str) -> Result<String, SnapshotError> {
    let id = match value {
        Value::String(s) => s.trim().to_owned(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        Value::Null => return err(field, "is required"),
        _ => return err(field, "must be a string id"),
    };
    if id.is_empty() {
        return err(field, "is required");
    }
    if id.len() > MAX_ID_BYTES {
        return err(field, format!("must be at most {MAX_ID_BYTES} bytes"));
    }
    Ok(id)
}

fn required_id(m: &Map<String, Value>, key: &str, field: &str) -> Result<String, SnapshotError> {
    id_value(
        m.get(key).unwrap_or(&Value::Null),
        &format!("{field}.{key}"),
    )
}

fn opt_string(
    m: &Map<String, Value>,
    key: &str,
    field: &str,
) -> Result<Option<String>, SnapshotError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => err(format!("{field}.{key}"), "must be a string"),
    }
}

fn opt_integer(
    m: &Map<String, Value>,
    key: &str,
    field: &str,
) -> Result<Option<i64>, SnapshotError> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                return Ok(Some(i));
            }
            match n.as_f64() {
                Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(Some(f as i64)),
                _ => err(format!("{field}.{key}"), "must be an integer"),
            }
        }
        Some(_) => err(format!("{field}.{key}"), "must be an integer"),
    }
}

/// Reads `operation` (required); `replace` reads as `update`.
fn operation(m: &Map<String, Value>, field: &str) -> Result<Action<()>, SnapshotError> {
    let f = format!("{field}.operation");
    match m.get("operation") {
        Some(Value::String(op)) => match op.as_str() {
            "create" => Ok(Action::Create(())),
            "update" | "replace" => Ok(Action::Update(())),
            "delete" => Ok(Action::Delete),
            "reference" => Ok(Action::Reference),
            other => err(
                f,
                format!("must be create, update, replace, delete or reference, not `{other}`"),
            ),
        },
        None | Some(Value::Null) => err(f, "is required"),
        Some(_) => err(f, "must be a string"),
    }
}

fn base(m: &Map<String, Value>, field: &str) -> Result<Base, SnapshotError> {
    Ok(Base {
        updated_at: opt_string(m, "base_updated_at", field)?,
        hash: opt_string(m, "base_hash", field)?,
    })
}

fn entity(index: usize, value: &Value) -> Result<EntityChange, SnapshotError> {
    let field = format!("entities[{index}]");
    let m = object(value, &field)?;
    let id = required_id(m, "id", &field)?;
    let op = operation(m, &field)?;
    let action = match op {
        Action::Delete => Action::Delete,
        Action::Reference => Action::Reference,
        Action::Create(()) | Action::Update(()) => {
            let fields = entity_fields(m, &field)?;
            if matches!(op, Action::Create(())) {
                Action::Create(fields)
            } else {
                Action::Update(fields)
            }
        }
    };
    Ok(EntityChange {
        index,
        id,
        action,
        base: base(m, &field)?,
    })
}

fn entity_fields(m: &Map<String, Value>, field: &str) -> Result<EntityFields, SnapshotError> {
    let name = match opt_string(m, "name", field)? {
        Some(n) if !n.trim().is_empty() => n,
        _ => return err(format!("{field}.name"), "is required"),
    };
    let slug = opt_string(m, "slug", field)?.filter(|s| !s.trim().is_empty());
    let type_id = opt_string(m, "type_id", field)?
        .filter(|s| !s.trim().is_empty())
        .unwrap_or_else(|| "country".to_owned());
    Ok(EntityFields {
        name,
        slug,
        description: opt_string(m, "description", field)?,
        type_id,
        status: match m.get("status") {
            None => Some(1),
            Some(_) => opt_integer(m, "status", field)?,
        },
        is_deleted: deleted_flag(m, field)?,
    })
}

fn check_slugs(entities: &[EntityChange]) -> Result<(), SnapshotError> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for e in entities {
        let (Action::Create(f) | Action::Update(f)) = &e.action else {
            continue;
        };
        let Some(slug) = &f.slug else { continue };
        if let Some(first) = seen.insert(slug.to_lowercase(), e.index) {
            return err(
                format!("entities[{}].slug", e.index),
                format!("`{slug}` is already used by entities[{first}] in this snapshot"),
            );
        }
    }
    Ok(())
}

fn geometry(index: usize, value: &Value) -> Result<GeometryChange, SnapshotError> {
    let field = format!("geometries[{index}]");
    let m = object(value, &field)?;
    let id = required_id(m, "id", &field)?;
    let op = operation(m, &field)?;
    let action = match op {
        Action::Delete => Action::Delete,
        Action::Reference => Action::Reference,
        Action::Create(()) | Action::Update(()) => {
            let fields = geometry_fields(m, &field, &id)?;
            if matches!(op, Action::Create(())) {
                Action::Create(fields)
            } else {
                Action::Update(fields)
            }
        }
    };
    Ok(GeometryChange {
        index,
        id,
        action,
        base: base(m, &field)?,
    })
}

fn geometry_fields(
    m: &Map<String, Value>,
    field: &str,
    id: &str,
) -> Result<GeometryFields, SnapshotError> {
    let draw_geometry = match m.get("draw_geometry").filter(|v| !v.is_null()) {
        Some(v) => (v, "draw_geometry"),
        None => match m.get("geometry").filter(|v| !v.is_null()) {
            Some(v) => (v, "geometry"),
            None => return err(format!("{field}.draw_geometry"), "is required"),
        },
    };
    let (geometry, key) = draw_geometry;
    geojson::check_geometry(geometry, &format!("{field}.{key}"))?;
    let time_start = opt_integer(m, "time_start", field)?;
    let time_end = opt_integer(m, "time_end", field)?;
    if let (Some(s), Some(e)) = (time_start, time_end)
        && s > e
    {
        return err(
            format!("{field}.time_start"),
            format!("must not be after time_end ({s} > {e})"),
        );
    }
    let bbox = match m.get("bbox") {
        None | Some(Value::Null) => bbox_of(geometry),
        Some(v) => Some(explicit_bbox(v, &format!("{field}.bbox"))?),
    };
    let binding = match m.get("binding") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            let mut ids = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let f = format!("{field}.binding[{i}]");
                match item {
                    Value::String(s) if s.trim().is_empty() => continue,
                    _ => ids.push(id_value(item, &f)?),
                }
            }
            if ids.iter().any(|b| b == id) {
                return err(
                    format!("{field}.binding"),
                    "must not contain the geometry's own id",
                );
            }
            Some(normalize_binding(ids, id))
        }
        Some(_) => return err(format!("{field}.binding"), "must be an array of ids"),
    };
    Ok(GeometryFields {
        kind: opt_string(m, "type", field)?,
        draw_geometry: geometry.clone(),
        binding,
        time_start,
        time_end,
        bbox,
        is_deleted: deleted_flag(m, field)?,
    })
}

/// `is_deleted`: 0 or 1 (or a boolean), 0 when absent.
fn deleted_flag(m: &Map<String, Value>, field: &str) -> Result<i64, SnapshotError> {
    match m.get("is_deleted") {
        None | Some(Value::Null) => Ok(0),
        Some(Value::Bool(b)) => Ok(i64::from(*b)),
        Some(v) => match v.as_i64() {
            Some(flag @ (0 | 1)) => Ok(flag),
            _ => err(format!("{field}.is_deleted"), "must be 0 or 1"),
        },
    }
}

fn explicit_bbox(value: &Value, field: &str) -> Result<Bbox, SnapshotError> {
    let m = object(value, field)?;
    let number = |key: &str| -> Result<f64, SnapshotError> {
        match m.get(key).and_then(Value::as_f64) {
            Some(f) if f.is_finite() => Ok(f),
            _ => err(format!("{field}.{key}"), "must be a number"),
        }
    };
    let bbox = Bbox {
        min_lng: number("min_lng")?,
        min_lat: number("min_lat")?,
        max_lng: number("max_lng")?,
        max_lat: number("max_lat")?,
    };
    if bbox.min_lng > bbox.max_lng {
        return err(format!("{field}.min_lng"), "must not exceed max_lng");
    }
    if bbox.min_lat > bbox.max_lat {
        return err(format!("{field}.min_lat"), "must not exceed max_lat");
    }
    Ok(bbox)
}

fn link_scope(index: usize, value: &Value) -> Result<LinkScope, SnapshotError> {
    let field = format!("link_scopes[{index}]");
    let m = object(value, &field)?;
    let replace = match m.get("operation") {
        None | Some(Value::Null) => true,
        Some(Value::String(op)) => match op.as_str() {
            "replace" | "update" | "create" => true,
            "reference" => false,
            other => {
                return err(
                    format!("{field}.operation"),
                    format!("must be replace or reference, not `{other}`"),
                );
            }
        },
        Some(_) => return err(format!("{field}.operation"), "must be a string"),
    };
    let geometry_id = required_id(m, "geometry_id", &field)?;
    let entity_ids = match m.get("entity_ids") {
        Some(Value::Array(items)) if !items.is_empty() => {
            let mut ids: Vec<String> = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                let id = id_value(item, &format!("{field}.entity_ids[{i}]"))?;
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            ids
        }
        Some(Value::Array(_)) | None | Some(Value::Null) => {
            return err(format!("{field}.entity_ids"), "must not be empty");
        }
        Some(_) => return err(format!("{field}.entity_ids"), "must be an array of ids"),
    };
    Ok(LinkScope {
        index,
        replace,
        geometry_id,
        entity_ids,
        base_links_hash: opt_string(m, "base_links_hash", &field)?,
    })
}

#[cfg(test)]
mod tests;
