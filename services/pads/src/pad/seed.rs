//! Where a pad's state starts when this process has never seen it: its record in the store,
//! built by the projector up to a known stream version, so a pad with 100,000 revisions loads
//! as fast as a new one (the runner then folds only the events after that version from the
//! log, so the command still decides from the log's latest state).

use super::{Pad, pool_of};
use crate::projection::NAME as SCHEMA;
use crate::store::keys;
use crate::store::records::PadRecord;
use deadpool_postgres::Pool;
use palimpsest_events::pads::AText;

/// Pad `pad_id` as its store record shows it, with the pad stream version it reflects; `None`
/// when the projection has not seen the pad, or when the record cannot be read (then the
/// caller folds the whole stream; the reason is logged).
pub async fn pad_from_store(read: &Pool, pad_id: &str) -> Option<(i64, Pad)> {
    match read_record(read, pad_id).await {
        Ok(found) => found,
        Err(error) => {
            tracing::warn!(pad = pad_id, %error, "pad record unreadable; folding its whole stream");
            None
        }
    }
}

/// Why a pad's store record could not be used as a starting point.
#[derive(Debug, thiserror::Error)]
enum RecordError {
    #[error("read model unavailable: {0}")]
    Pool(#[from] deadpool_postgres::PoolError),
    #[error("read model query failed: {0}")]
    Query(#[from] tokio_postgres::Error),
    #[error("pad record is not valid JSON: {0}")]
    Json(#[from] serde_json::Error),
}

async fn read_record(read: &Pool, pad_id: &str) -> Result<Option<(i64, Pad)>, RecordError> {
    let client = read.get().await?;
    let row = client
        .query_opt(
            &format!(
                "SELECT v.version, p.value, r.value FROM {SCHEMA}.pad_stream_versions v \
                 LEFT JOIN {SCHEMA}.store p ON p.key = $2 \
                 LEFT JOIN {SCHEMA}.store r ON r.key = $3 WHERE v.pad_id = $1"
            ),
            &[&pad_id, &keys::pad(pad_id), &keys::pad_to_read_only(pad_id)],
        )
        .await;
    let row = match row {
        Ok(Some(row)) => row,
        Ok(None) => return Ok(None),
        // Before the projector made its schema there is no record to start from.
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::UNDEFINED_TABLE) => {
            return Ok(None);
        }
        Err(e) => return Err(e.into()),
    };
    let version: i64 = row.get(0);
    let record: Option<String> = row.get(1);
    let read_only: Option<String> = row.get(2);
    let mut pad = Pad::absent(pad_id);
    if let Some(text) = record {
        let record: PadRecord = serde_json::from_str(&text)?;
        pad.exists = true;
        pad.pool = pool_of(&record.pool.attributes());
        pad.atext = AText::from(record.atext);
        pad.head = record.head;
        pad.chat_head = record.chat_head;
        pad.public_status = record.public_status;
        pad.saved_revisions = record.saved_revisions.into_iter().map(Into::into).collect();
        pad.read_only_id = read_only.map(|r| serde_json::from_str(&r)).transpose()?;
    }
    Ok(Some((version, pad)))
}
