//! pads under load: each write creates a pad with Etherpad's `createPad` (code 0); in the log,
//! one `PadCreated` on `pads/pad/<padID>`. A retry under the same key gets the stored code 0,
//! never "padID does already exist".

use super::{Attempt, IDEMPOTENCY_KEY, Target, Write, send, tally, unexpected};
use std::collections::HashMap;

/// One try of `write`.
pub async fn attempt(http: &reqwest::Client, target: &Target, write: &Write) -> Attempt {
    let pad = format!("chaos-{}", write.id);
    let request = http
        .post(format!("{}/pads/api/1.3.0/createPad", target.base))
        .header(IDEMPOTENCY_KEY, &write.key)
        .form(&[
            ("apikey", target.pads_api_key.as_str()),
            ("padID", pad.as_str()),
        ]);
    let Some((status, body)) = send(request).await else {
        return Attempt::Retry;
    };
    if !(200..300).contains(&status) {
        return unexpected(status, &body);
    }
    match serde_json::from_str::<serde_json::Value>(&body) {
        Ok(answer) if answer["code"] == 0 => Attempt::Acked(vec![pad]),
        _ => Attempt::Refused(format!("{status}: {body}")),
    }
}

/// How many `PadCreated` each pad's stream holds.
pub async fn found(
    db: &tokio_postgres::Client,
) -> Result<HashMap<String, i64>, tokio_postgres::Error> {
    tally(
        db,
        "SELECT stream_key, count(*) FROM log.events WHERE context = 'pads' \
         AND category = 'pad' AND event_type = 'PadCreated' GROUP BY 1",
    )
    .await
}
