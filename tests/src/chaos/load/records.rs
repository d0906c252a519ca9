//! records under load: each write is an `insertDoc` of class [`CLASS`] (declared by the schema
//! file the processes are given, [`SCHEMA`]) with a fresh primary key and a fresh value of its
//! unique index, in the writer's own organisation, as the admin. In the log, one
//! `DocumentCreated` on `records/doc/<org>:<class>:<pk>`.

use super::{Attempt, IDEMPOTENCY_KEY, Target, Write, send, tally, unexpected};
use serde_json::{Value, json};
use std::collections::HashMap;

/// The class the writers insert.
pub const CLASS: &str = "Chaos";

/// The records schema file the processes read (`PALIMPSEST_RECORDS_SCHEMA`): [`CLASS`], SYNC,
/// keyed by `p1`, with a unique `code` so every insert also claims a lock stream.
pub const SCHEMA: &str = r#"[{"clazz": "Chaos", "sync": true, "pk": ["p1"],
  "indexes": [{"name": "code", "type": "uniq"}]}]"#;

/// One try of `write`.
pub async fn attempt(http: &reqwest::Client, target: &Target, write: &Write) -> Attempt {
    let org = format!("chaos{}", write.writer);
    let request = http
        .post(format!("{}/records/api/insertDoc", target.base))
        .bearer_auth(&target.admin_token)
        .header(IDEMPOTENCY_KEY, &write.key)
        .json(&json!({
            "org": org,
            "data": { "clazz": CLASS, "p1": write.id, "code": format!("c{}", write.id) },
        }));
    let Some((status, body)) = send(request).await else {
        return Attempt::Retry;
    };
    if !(200..300).contains(&status) {
        return unexpected(status, &body);
    }
    let answer: Value = serde_json::from_str(&body).unwrap_or_default();
    let result = &answer["result"];
    match (
        result["org"].as_str(),
        result["clazz"].as_str(),
        result["pk"].as_str(),
    ) {
        (Some(org), Some(clazz), Some(pk)) => Attempt::Acked(vec![format!("{org}:{clazz}:{pk}")]),
        _ => Attempt::Refused(format!("{status} without the document's key: {body}")),
    }
}

/// How many `DocumentCreated` each document's stream holds.
pub async fn found(
    db: &tokio_postgres::Client,
) -> Result<HashMap<String, i64>, tokio_postgres::Error> {
    tally(
        db,
        "SELECT stream_key, count(*) FROM log.events WHERE context = 'records' \
         AND category = 'doc' AND event_type = 'DocumentCreated' GROUP BY 1",
    )
    .await
}
