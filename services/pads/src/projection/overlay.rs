//! The store as one batch of events sees it: rows read once, changed in memory, and planned as
//! a few statements at the end of the batch, which the runtime sends with the batch's checkpoint
//! and `COMMIT`.
//!
//! A pad's record is rewritten by every revision; applying a batch of revisions row by row would
//! read and write the same large value again and again. The overlay reads each key at most once
//! per batch and writes each changed key once, so a batch of 500 revisions of one pad costs one
//! read and one write of the pad record.

use palimpsest_projections::statement::Statement;
use palimpsest_projections::{ProjectionError, Reads};
use std::collections::{HashMap, HashSet};

/// Rows of `store` as changed by the events applied so far in this batch.
pub struct Overlay<'a> {
    reads: Reads<'a>,
    schema: &'a str,
    /// Known rows: `Some(value)` present, `None` absent or deleted.
    rows: HashMap<String, Option<String>>,
    /// Keys changed in this batch.
    changed: HashSet<String>,
    /// Pad stream versions seen in this batch.
    versions: HashMap<String, i64>,
}

impl<'a> Overlay<'a> {
    /// An overlay over `schema.store`, read through `reads`.
    pub fn new(reads: Reads<'a>, schema: &'a str) -> Self {
        Overlay {
            reads,
            schema,
            rows: HashMap::new(),
            changed: HashSet::new(),
            versions: HashMap::new(),
        }
    }

    /// The value of `key`, if present.
    pub async fn get(&mut self, key: &str) -> Result<Option<String>, ProjectionError> {
        if let Some(v) = self.rows.get(key) {
            return Ok(v.clone());
        }
        let read = format!("SELECT value FROM {}.store WHERE key = $1", self.schema);
        let row = self.reads.query_opt(&read, &[&key]).await?;
        let value: Option<String> = row.map(|r| r.get(0));
        self.rows.insert(key.to_owned(), value.clone());
        Ok(value)
    }

    /// The values of many keys (absent ones are left out), reading the unknown ones at once.
    pub async fn get_many(
        &mut self,
        keys: &[String],
    ) -> Result<Vec<(String, String)>, ProjectionError> {
        let unknown: Vec<&String> = keys
            .iter()
            .filter(|k| !self.rows.contains_key(*k))
            .collect();
        if !unknown.is_empty() {
            let read = format!(
                "SELECT key, value FROM {}.store WHERE key = ANY($1)",
                self.schema
            );
            let rows = self.reads.query(&read, &[&unknown]).await?;
            for k in &unknown {
                self.rows.insert((*k).clone(), None);
            }
            for r in rows {
                self.rows.insert(r.get(0), Some(r.get(1)));
            }
        }
        Ok(keys
            .iter()
            .filter_map(|k| self.rows.get(k).cloned().flatten().map(|v| (k.clone(), v)))
            .collect())
    }

    fn touch(&mut self, key: &str) {
        if !self.changed.contains(key) {
            self.changed.insert(key.to_owned());
        }
    }

    /// Sets `key` to `value`.
    pub fn set(&mut self, key: &str, value: String) {
        self.touch(key);
        self.rows.insert(key.to_owned(), Some(value));
    }

    /// Deletes `key`.
    pub fn remove(&mut self, key: &str) {
        self.touch(key);
        self.rows.insert(key.to_owned(), None);
    }

    /// Records that pad stream `pad_id` has been applied up to `version`.
    pub fn pad_version(&mut self, pad_id: &str, version: i64) {
        self.versions.insert(pad_id.to_owned(), version);
    }

    /// Plans every change of the batch into `out`: its deletions, its rows set and its pad
    /// versions, one statement each (the keys deleted and the keys set are apart, so their order
    /// only keeps the plan readable).
    pub fn plan(self, out: &mut Vec<Statement>) {
        let (mut set_keys, mut set_values, mut removed) = (Vec::new(), Vec::new(), Vec::new());
        let mut rows = self.rows;
        for key in self.changed {
            match rows.remove(&key).flatten() {
                Some(v) => {
                    set_keys.push(key);
                    set_values.push(v);
                }
                None => removed.push(key),
            }
        }
        let (ids, versions): (Vec<String>, Vec<i64>) = self.versions.into_iter().unzip();
        let schema = self.schema;
        if !removed.is_empty() {
            out.push(Statement::dml(
                format!("DELETE FROM {schema}.store WHERE key = ANY($1)"),
                vec![Box::new(removed)],
            ));
        }
        if !set_keys.is_empty() {
            out.push(Statement::dml(
                format!(
                    "INSERT INTO {schema}.store (key, value) \
                     SELECT * FROM unnest($1::varchar[], $2::text[]) \
                     ON CONFLICT (key) DO UPDATE SET value = excluded.value"
                ),
                vec![Box::new(set_keys), Box::new(set_values)],
            ));
        }
        if !ids.is_empty() {
            out.push(Statement::dml(
                format!(
                    "INSERT INTO {schema}.pad_stream_versions (pad_id, version) \
                     SELECT * FROM unnest($1::text[], $2::bigint[]) \
                     ON CONFLICT (pad_id) DO UPDATE SET version = excluded.version"
                ),
                vec![Box::new(ids), Box::new(versions)],
            ));
        }
    }
}
