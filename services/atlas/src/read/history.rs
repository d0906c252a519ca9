//! The change history of a published entity or geometry, each version naming the submission,
//! section and reviewer that made it.

use crate::read::SCHEMA as S;
use crate::read::error::ReadError;
use crate::read::geometries::geometry_row;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Value, json};
use tokio_postgres::{GenericClient, Row};

fn iso(t: Option<DateTime<Utc>>) -> Option<String> {
    t.map(|t| t.to_rfc3339_opts(SecondsFormat::Millis, true))
}

fn change(row: &Row) -> serde_json::Map<String, Value> {
    let mut m = serde_json::Map::new();
    m.insert("version".into(), json!(row.get::<_, i64>("version")));
    m.insert("position".into(), json!(row.get::<_, i64>("position")));
    m.insert("change".into(), json!(row.get::<_, String>("change")));
    m.insert(
        "submission_id".into(),
        json!(row.get::<_, String>("submission_id")),
    );
    m.insert(
        "section_id".into(),
        json!(row.get::<_, String>("section_id")),
    );
    m.insert(
        "reviewed_by".into(),
        json!(row.get::<_, Option<String>>("reviewed_by")),
    );
    m.insert(
        "changed_at".into(),
        json!(row.get::<_, String>("changed_at")),
    );
    m.insert("valid_from".into(), json!(iso(Some(row.get("valid_from")))));
    m.insert("valid_to".into(), json!(iso(row.get("valid_to"))));
    m
}

/// An entity's versions, oldest first; empty when it was never published.
pub async fn entity(
    client: &impl GenericClient,
    id: &str,
) -> Result<Vec<Value>, tokio_postgres::Error> {
    let rows = client
        .query(
            &format!("SELECT * FROM {S}.entity_history WHERE entity_id = $1 ORDER BY version"),
            &[&id],
        )
        .await?;
    Ok(rows
        .iter()
        .map(|row| {
            let mut m = change(row);
            m.insert(
                "entity".into(),
                json!({
                    "id": row.get::<_, String>("entity_id"),
                    "name": row.get::<_, String>("name"),
                    "slug": row.get::<_, Option<String>>("slug"),
                    "description": row.get::<_, Option<String>>("description"),
                    "type_id": row.get::<_, String>("type_id"),
                    "status": row.get::<_, Option<i64>>("status"),
                    "is_deleted": row.get::<_, i64>("is_deleted"),
                    "created_at": row.get::<_, Option<String>>("created_at"),
                    "updated_at": row.get::<_, Option<String>>("updated_at"),
                }),
            );
            Value::Object(m)
        })
        .collect())
}

/// A geometry's versions, oldest first; empty when it was never published.
pub async fn geometry(client: &impl GenericClient, id: &str) -> Result<Vec<Value>, ReadError> {
    let rows = client
        .query(
            &format!(
                "SELECT h.*, h.geometry_id AS id FROM {S}.geometry_history h WHERE geometry_id = $1 ORDER BY version"
            ),
            &[&id],
        )
        .await?;
    rows.iter()
        .map(|row| {
            let mut m = change(row);
            m.insert(
                "detail".into(),
                json!(row.get::<_, Option<String>>("detail")),
            );
            let g = geometry_row(row)?;
            m.insert(
                "geometry".into(),
                json!({
                    "id": g.id,
                    "type": g.kind,
                    "is_deleted": g.is_deleted,
                    "draw_geometry": g.draw_geometry,
                    "binding": g.binding,
                    "time_start": g.time_start,
                    "time_end": g.time_end,
                    "bbox": g.bbox,
                    "created_at": row.get::<_, Option<String>>("created_at"),
                    "updated_at": row.get::<_, Option<String>>("updated_at"),
                    "entity_ids": row.get::<_, Value>("entity_ids"),
                }),
            );
            Ok(Value::Object(m))
        })
        .collect()
}
