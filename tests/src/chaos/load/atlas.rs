//! atlas under load: each write creates a section as the administrator (`POST /atlas/sections`
//! with the admin token, 201 with its id);
//! in the log, one `SectionCreated` on `atlas/section/<id>`.

use super::{Attempt, IDEMPOTENCY_KEY, Target, Write, send, tally, unexpected};
use std::collections::HashMap;

/// One try of `write`.
pub async fn attempt(http: &reqwest::Client, target: &Target, write: &Write) -> Attempt {
    let request = http
        .post(format!("{}/atlas/sections", target.base))
        .bearer_auth(&target.admin_token)
        .header(IDEMPOTENCY_KEY, &write.key)
        .json(&serde_json::json!({ "title": format!("chaos {}", write.id) }));
    let Some((status, body)) = send(request).await else {
        return Attempt::Retry;
    };
    if status != 201 {
        return unexpected(status, &body);
    }
    match serde_json::from_str::<serde_json::Value>(&body) {
        Ok(created) => match created["id"].as_str() {
            Some(id) => Attempt::Acked(vec![id.to_owned()]),
            None => Attempt::Refused(format!("201 without an id: {body}")),
        },
        Err(e) => Attempt::Refused(format!("201 that is not JSON ({e}): {body}")),
    }
}

/// How many `SectionCreated` each section's stream holds.
pub async fn found(
    db: &tokio_postgres::Client,
) -> Result<HashMap<String, i64>, tokio_postgres::Error> {
    tally(
        db,
        "SELECT stream_key, count(*) FROM log.events WHERE context = 'atlas' \
         AND category = 'section' AND event_type = 'SectionCreated' GROUP BY 1",
    )
    .await
}
