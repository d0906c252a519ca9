//! Pad events into Etherpad's pad records: `pad:P`, `pad:P:revs:N`, `pad:P:chat:N`,
//! `pad2readonly:P` and `readonly2pad:R`.

use super::batch::{Batch, PadRow};
use crate::changes;
use crate::pad::{attributes_of, pool_of};
use crate::store::keys;
use crate::store::records::{
    ATextRecord, ChatRecord, FullPoolRecord, PadRecord, PoolRecord, RevisionMeta, RevisionRecord,
    SavedRevisionRecord,
};
use palimpsest_events::pads::{AText, PadEvent, PadSnapshot};
use palimpsest_projections::ProjectionError;

/// Every 100th revision is a key revision: its record carries the pool and the text, so any
/// revision can be rebuilt from the key revision below it and at most 99 changesets.
pub const KEY_REVISION_INTERVAL: i64 = 100;

/// The key revision at or below `rev`.
pub fn key_revision(rev: i64) -> i64 {
    rev.div_euclid(KEY_REVISION_INTERVAL) * KEY_REVISION_INTERVAL
}

/// Applies one pad event of pad `pad_id`.
pub async fn apply(
    batch: &mut Batch<'_>,
    pad_id: &str,
    event: &PadEvent,
) -> Result<(), ProjectionError> {
    match event {
        // Etherpad writes nothing until the first revision, which follows in the same append.
        PadEvent::PadCreated { .. } => {}
        PadEvent::RevisionAppended {
            rev,
            changeset,
            author,
            timestamp,
            new_attributes,
        } => {
            let row = batch.pad_or_new(pad_id).await?;
            for (k, v) in new_attributes {
                row.pool.put_attrib(k, v);
            }
            let atext = AText::from(row.record.atext.clone());
            let after = changes::apply_to_atext(changeset, &atext, &row.pool).map_err(|e| {
                ProjectionError::Invalid(format!(
                    "revision {rev} of pad {pad_id} does not apply: {e}"
                ))
            })?;
            if !author.is_empty() {
                row.pool.put_attrib("author", author);
            }
            row.record.atext = ATextRecord::from(&after);
            row.record.head = *rev;
            let is_key = key_revision(*rev) == *rev;
            let meta = RevisionMeta {
                author: author.clone(),
                timestamp: *timestamp,
                pool: is_key.then(|| FullPoolRecord::from_attributes(&attributes_of(&row.pool))),
                atext: is_key.then(|| row.record.atext.clone()),
            };
            batch.put(
                &keys::revision(pad_id, *rev),
                &RevisionRecord {
                    changeset: changeset.clone(),
                    meta,
                },
            )?;
        }
        PadEvent::AttributePoolReplaced { pool } => {
            let row = batch.pad_or_new(pad_id).await?;
            row.pool = pool_of(pool);
        }
        PadEvent::ChatMessageAppended {
            index,
            text,
            author_id,
            time,
        } => {
            let row = batch.pad_or_new(pad_id).await?;
            row.record.chat_head = *index;
            batch.put(
                &keys::chat(pad_id, *index),
                &ChatRecord {
                    text: text.clone(),
                    author_id: author_id.clone(),
                    time: time.clone(),
                },
            )?;
        }
        PadEvent::RevisionSaved { saved } => {
            let row = batch.pad_or_new(pad_id).await?;
            row.record
                .saved_revisions
                .push(SavedRevisionRecord::from(saved));
        }
        PadEvent::PublicStatusSet { public_status } => {
            batch.pad_or_new(pad_id).await?.record.public_status = *public_status;
        }
        PadEvent::ReadOnlyIdAssigned { read_only_id } => {
            batch.put(&keys::pad_to_read_only(pad_id), read_only_id)?;
            batch.put(&keys::read_only_to_pad(read_only_id), &pad_id)?;
        }
        PadEvent::PadCopied {
            source_id,
            snapshot,
        } => copy(batch, source_id, pad_id, snapshot).await?,
        PadEvent::PadDeleted { .. } => delete(batch, pad_id).await?,
    }
    Ok(())
}

/// The keys of a pad's revisions and chat messages.
fn history_keys(pad_id: &str, head: i64, chat_head: i64) -> Vec<String> {
    (0..=head)
        .map(|r| keys::revision(pad_id, r))
        .chain((0..=chat_head).map(|c| keys::chat(pad_id, c)))
        .collect()
}

/// Etherpad's `Pad.copy`: the pad record, every revision and chat message copied as they are.
async fn copy(
    batch: &mut Batch<'_>,
    source_id: &str,
    pad_id: &str,
    snapshot: &PadSnapshot,
) -> Result<(), ProjectionError> {
    let record = match batch.pad(source_id).await? {
        Some(row) => {
            let mut record = row.record.clone();
            record.pool = PoolRecord::from_attributes(&attributes_of(&row.pool));
            record
        }
        None => PadRecord {
            atext: ATextRecord::from(&snapshot.atext),
            pool: PoolRecord::from_attributes(&snapshot.pool),
            head: snapshot.head,
            chat_head: snapshot.chat_head,
            public_status: snapshot.public_status,
            saved_revisions: snapshot.saved_revisions.iter().map(Into::into).collect(),
        },
    };
    let source_keys = history_keys(source_id, record.head, record.chat_head);
    let prefix_len = keys::pad(source_id).len();
    let dest_prefix = keys::pad(pad_id);
    for (key, value) in batch.rows.get_many(&source_keys).await? {
        let suffix = key.get(prefix_len..).unwrap_or_default();
        let dest = format!("{dest_prefix}{suffix}");
        if keys::fits(&dest) {
            batch.rows.set(&dest, value);
        }
    }
    let pool = pool_of(&record.pool.attributes());
    batch.set_pad(pad_id, PadRow { record, pool });
    Ok(())
}

/// Etherpad's `Pad.remove` for the pad's own records: the record, revisions, chat messages and
/// both read-only mappings (group and author records change through their own events).
async fn delete(batch: &mut Batch<'_>, pad_id: &str) -> Result<(), ProjectionError> {
    let (head, chat_head) = match batch.pad(pad_id).await? {
        Some(row) => (row.record.head, row.record.chat_head),
        None => (-1, -1),
    };
    for key in history_keys(pad_id, head, chat_head) {
        batch.remove(&key);
    }
    let ro_key = keys::pad_to_read_only(pad_id);
    if let Some(read_only_id) = batch.get::<String>(&ro_key).await? {
        batch.remove(&keys::read_only_to_pad(&read_only_id));
    }
    batch.remove(&ro_key);
    batch.remove_pad(pad_id);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_revisions_are_multiples_of_100() {
        assert_eq!(key_revision(0), 0);
        assert_eq!(key_revision(99), 0);
        assert_eq!(key_revision(100), 100);
        assert_eq!(key_revision(12_345), 12_300);
    }
}
