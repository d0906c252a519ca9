//! The records one batch of events changes: raw rows through the [`Overlay`], and pad records
//! kept parsed (with their pool) until the batch ends, so that a run of revisions of one pad
//! parses and writes its record once.

use super::overlay::Overlay;
use crate::pad::pool_of;
use crate::store::keys;
use crate::store::records::{PadRecord, PoolRecord};
use easysync::AttributePool;
use palimpsest_projections::ProjectionError;
use palimpsest_projections::statement::Statement;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::{HashMap, HashSet};

/// A pad record being changed, with its pool ready for use.
pub struct PadRow {
    /// The record.
    pub record: PadRecord,
    /// The record's pool, as a pool.
    pub pool: AttributePool,
}

/// The store as seen by one batch.
pub struct Batch<'a> {
    /// Raw rows.
    pub rows: Overlay<'a>,
    /// Pad records read or written in this batch (`None`: absent or deleted).
    pads: HashMap<String, Option<PadRow>>,
    /// Pads whose record changed in this batch.
    dirty: HashSet<String>,
}

/// A record that does not parse: the read model was written by other code, or is corrupt.
fn corrupt(key: &str, e: serde_json::Error) -> ProjectionError {
    ProjectionError::Invalid(format!("store value of {key} does not parse: {e}"))
}

impl<'a> Batch<'a> {
    /// A batch over `rows`.
    pub fn new(rows: Overlay<'a>) -> Self {
        Batch {
            rows,
            pads: HashMap::new(),
            dirty: HashSet::new(),
        }
    }

    /// The record at `key`, parsed.
    pub async fn get<T: DeserializeOwned>(
        &mut self,
        key: &str,
    ) -> Result<Option<T>, ProjectionError> {
        match self.rows.get(key).await? {
            Some(v) => serde_json::from_str(&v)
                .map(Some)
                .map_err(|e| corrupt(key, e)),
            None => Ok(None),
        }
    }

    /// Writes `value` at `key` as `JSON.stringify` would. Keys ueberDB would refuse (over 100
    /// characters) are never produced by the write side; should one appear it is skipped.
    pub fn put<T: Serialize>(&mut self, key: &str, value: &T) -> Result<(), ProjectionError> {
        if !keys::fits(key) {
            tracing::error!(key, "store key longer than 100 characters; not written");
            return Ok(());
        }
        let text = serde_json::to_string(value)
            .map_err(|e| ProjectionError::Invalid(format!("cannot serialise {key}: {e}")))?;
        self.rows.set(key, text);
        Ok(())
    }

    /// Deletes `key`.
    pub fn remove(&mut self, key: &str) {
        self.rows.remove(key);
    }

    /// Loads the pad record of `pad_id` into the batch's cache.
    async fn load_pad(&mut self, pad_id: &str) -> Result<(), ProjectionError> {
        if !self.pads.contains_key(pad_id) {
            let key = keys::pad(pad_id);
            let row = match self.rows.get(&key).await? {
                Some(v) => {
                    let record: PadRecord =
                        serde_json::from_str(&v).map_err(|e| corrupt(&key, e))?;
                    let pool = pool_of(&record.pool.attributes());
                    Some(PadRow { record, pool })
                }
                None => None,
            };
            self.pads.insert(pad_id.to_owned(), row);
        }
        Ok(())
    }

    /// The pad record of `pad_id`, to read.
    pub async fn pad(&mut self, pad_id: &str) -> Result<Option<&PadRow>, ProjectionError> {
        self.load_pad(pad_id).await?;
        Ok(self.pads.get(pad_id).and_then(Option::as_ref))
    }

    /// The pad record of `pad_id`, to change (written back at the end of the batch).
    pub async fn pad_mut(&mut self, pad_id: &str) -> Result<Option<&mut PadRow>, ProjectionError> {
        self.load_pad(pad_id).await?;
        self.dirty.insert(pad_id.to_owned());
        Ok(self.pads.get_mut(pad_id).and_then(Option::as_mut))
    }

    /// The pad record of `pad_id`, or a new pad's empty record.
    pub async fn pad_or_new(&mut self, pad_id: &str) -> Result<&mut PadRow, ProjectionError> {
        if self.pad_mut(pad_id).await?.is_none() {
            self.pads.insert(
                pad_id.to_owned(),
                Some(PadRow {
                    record: PadRecord::empty(),
                    pool: AttributePool::new(),
                }),
            );
        }
        self.pad_mut(pad_id)
            .await?
            .ok_or_else(|| ProjectionError::Invalid(format!("pad {pad_id} vanished")))
    }

    /// Sets the pad record of `pad_id` (written at the end of the batch).
    pub fn set_pad(&mut self, pad_id: &str, row: PadRow) {
        self.dirty.insert(pad_id.to_owned());
        self.pads.insert(pad_id.to_owned(), Some(row));
    }

    /// Deletes the pad record of `pad_id`.
    pub fn remove_pad(&mut self, pad_id: &str) {
        self.pads.insert(pad_id.to_owned(), None);
        self.rows.remove(&keys::pad(pad_id));
    }

    /// The serialised pad record of `pad_id` as it stands in this batch.
    pub async fn pad_text(&mut self, pad_id: &str) -> Result<Option<String>, ProjectionError> {
        match self.pad(pad_id).await? {
            Some(row) => {
                let mut record = row.record.clone();
                record.pool = PoolRecord::from_attributes(&crate::pad::attributes_of(&row.pool));
                serde_json::to_string(&record)
                    .map(Some)
                    .map_err(|e| ProjectionError::Invalid(e.to_string()))
            }
            None => Ok(None),
        }
    }

    /// Plans the writes of every pad record changed in the batch, then of every row, into
    /// `out`.
    pub fn finish(mut self, out: &mut Vec<Statement>) -> Result<(), ProjectionError> {
        let mut pads = std::mem::take(&mut self.pads);
        let dirty = std::mem::take(&mut self.dirty);
        for pad_id in dirty {
            if let Some(Some(row)) = pads.remove(&pad_id) {
                let mut record = row.record;
                record.pool = PoolRecord::from_attributes(&crate::pad::attributes_of(&row.pool));
                self.put(&keys::pad(&pad_id), &record)?;
            }
        }
        self.rows.plan(out);
        Ok(())
    }
}
