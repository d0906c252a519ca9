//! docs under load: odd writes `PUT /docs/chaos/<id>` one new document (201), even writes
//! `POST /docs/chaos/_bulk_docs` three (201, each `ok`); as the admin (bearer token). In the log,
//! one `RevisionStored` on each document's stream `docs/document/<incarnation>/<id>`.

use super::{Attempt, IDEMPOTENCY_KEY, Target, Write, send, tally, unexpected};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The database the writers write into.
pub const DATABASE: &str = "chaos";

/// Documents in one `_bulk_docs` write.
const BULK: usize = 3;

/// Creates the database (201, or 412 when it exists), retrying for up to 30 s.
pub async fn prepare(http: &reqwest::Client, target: &Target) -> Result<(), String> {
    let started = Instant::now();
    let key = uuid::Uuid::new_v4().to_string();
    let mut last = String::new();
    while started.elapsed() < Duration::from_secs(30) {
        let request = http
            .put(format!("{}/docs/{DATABASE}", target.base))
            .bearer_auth(&target.admin_token)
            .header(IDEMPOTENCY_KEY, &key);
        match send(request).await {
            Some((201 | 412, _)) => return Ok(()),
            Some((status, body)) => last = format!("{status}: {body}"),
            None => last = "no answer".into(),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Err(format!("PUT /docs/{DATABASE}: {last}"))
}

/// One try of `write`.
pub async fn attempt(http: &reqwest::Client, target: &Target, write: &Write) -> Attempt {
    if write.n % 2 == 1 {
        one(http, target, write).await
    } else {
        bulk(http, target, write).await
    }
}

async fn one(http: &reqwest::Client, target: &Target, write: &Write) -> Attempt {
    let request = http
        .put(format!("{}/docs/{DATABASE}/{}", target.base, write.id))
        .bearer_auth(&target.admin_token)
        .header(IDEMPOTENCY_KEY, &write.key)
        .json(&json!({ "chaos": write.n, "writer": write.writer }));
    let Some((status, body)) = send(request).await else {
        return Attempt::Retry;
    };
    if status != 201 {
        return unexpected(status, &body);
    }
    match serde_json::from_str::<Value>(&body) {
        Ok(answer) if answer["ok"] == true && answer["id"] == write.id.as_str() => {
            Attempt::Acked(vec![write.id.clone()])
        }
        _ => Attempt::Refused(format!("201 that is not this document's: {body}")),
    }
}

async fn bulk(http: &reqwest::Client, target: &Target, write: &Write) -> Attempt {
    let ids: Vec<String> = (0..BULK).map(|i| format!("{}-{i}", write.id)).collect();
    let docs: Vec<Value> = ids
        .iter()
        .map(|id| json!({ "_id": id, "chaos": write.n }))
        .collect();
    let request = http
        .post(format!("{}/docs/{DATABASE}/_bulk_docs", target.base))
        .bearer_auth(&target.admin_token)
        .header(IDEMPOTENCY_KEY, &write.key)
        .json(&json!({ "docs": docs }));
    let Some((status, body)) = send(request).await else {
        return Attempt::Retry;
    };
    if status != 201 {
        return unexpected(status, &body);
    }
    let answered: Vec<Value> = serde_json::from_str(&body).unwrap_or_default();
    let all_ok = answered.len() == BULK
        && answered
            .iter()
            .zip(&ids)
            .all(|(item, id)| item["ok"] == true && item["id"] == id.as_str());
    if all_ok {
        Attempt::Acked(ids)
    } else {
        Attempt::Refused(format!("_bulk_docs answered {body}"))
    }
}

/// How many `RevisionStored` each document's stream holds, by document id (the key after its
/// database's incarnation).
pub async fn found(
    db: &tokio_postgres::Client,
) -> Result<HashMap<String, i64>, tokio_postgres::Error> {
    tally(
        db,
        "SELECT substring(stream_key from position('/' in stream_key) + 1), count(*) \
         FROM log.events WHERE context = 'docs' AND category = 'document' \
         AND event_type = 'RevisionStored' GROUP BY 1",
    )
    .await
}
