//! resources under load: odd writes upload a file to a page (`PUT …/pages/<p>/files/<name>`,
//! every fourth one 80 KiB, above the inline limit, so it goes through the content store), even
//! writes set a page property (`PUT …/pages/<p>/properties/<name>`); 200 with the new
//! resource's `@res-id`, as a user whose key is in `resources-keys.json`. In the log, one first
//! revision (`RevisionAdded` with `rev` 1) with that name, on that resource's stream.

use super::{Attempt, IDEMPOTENCY_KEY, Target, Write, send, tally, unexpected};
use std::collections::HashMap;

/// The user the writers' key acts as.
pub const USER_ID: i64 = 10;

/// Pages the writes spread over.
const PAGES: u64 = 4;

/// The body of `write`: small, or (every fourth file) about 80 KiB; distinct per write.
fn body(write: &Write) -> Vec<u8> {
    let line = format!("chaos {}\n", write.id);
    let times = if write.n % 8 == 1 { 2100 } else { 1 };
    line.repeat(times).into_bytes()
}

/// The page `write` writes on (a reader finds the file or property there).
pub fn page(write: &Write) -> u64 {
    1 + write.n % PAGES
}

/// One try of `write`.
pub async fn attempt(http: &reqwest::Client, target: &Target, write: &Write) -> Attempt {
    let page = page(write);
    let (kind, name) = if write.n % 2 == 1 {
        ("files", format!("chaos-{}.txt", write.id))
    } else {
        ("properties", format!("chaos-{}", write.id))
    };
    let request = http
        .put(format!(
            "{}/resources/@api/deki/pages/{page}/{kind}/{name}",
            target.base
        ))
        .bearer_auth(&target.resources_key)
        .header(IDEMPOTENCY_KEY, &write.key)
        .header("content-type", "text/plain")
        .body(body(write));
    let Some((status, answer)) = send(request).await else {
        return Attempt::Retry;
    };
    if status != 200 {
        return unexpected(status, &answer);
    }
    let parsed: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
    match parsed["@res-id"].as_str() {
        Some(res_id) => Attempt::Acked(vec![format!("{res_id}/{name}")]),
        None => Attempt::Refused(format!("200 without @res-id: {answer}")),
    }
}

/// By name, how many first revisions carry it, keyed `<res_id>/<name>` (the lowest `res_id`
/// among them): a name created twice counts 2, one created on another resource than the answer
/// said is not found.
pub async fn found(
    db: &tokio_postgres::Client,
) -> Result<HashMap<String, i64>, tokio_postgres::Error> {
    tally(
        db,
        "SELECT min((payload->>'res_id')::bigint)::text || '/' || (payload->>'name'), count(*) \
         FROM log.events WHERE context = 'resources' AND category = 'resource' \
         AND event_type = 'RevisionAdded' AND (payload->>'rev')::bigint = 1 \
         GROUP BY payload->>'name'",
    )
    .await
}
