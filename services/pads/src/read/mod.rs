//! Reading Etherpad's store (the `pads.store` read model): records by key, a pad's text at any
//! revision, the pad list.

use crate::changes::{self, AttributePool};
use crate::projection::NAME as SCHEMA;
use crate::projection::pad_rows::key_revision;
use crate::store::keys;
use crate::store::records::{PadRecord, RevisionRecord};
use palimpsest_events::pads::AText;
use palimpsest_web::read_pool::ReadPool;
use serde::de::DeserializeOwned;
use std::collections::HashMap;

/// Why a read failed.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// No connection.
    #[error(transparent)]
    Pool(#[from] deadpool_postgres::PoolError),
    /// The query failed.
    #[error(transparent)]
    Db(#[from] tokio_postgres::Error),
    /// A stored value does not parse or does not apply.
    #[error("store value {0} is not what Etherpad writes: {1}")]
    Corrupt(String, String),
}

/// Reads the store through the read-model pool.
#[derive(Clone)]
pub struct StoreReader {
    pool: ReadPool,
}

impl StoreReader {
    /// A reader over `pool`.
    pub fn new(pool: ReadPool) -> Self {
        StoreReader { pool }
    }

    /// The raw value at `key`.
    pub async fn value(&self, key: &str) -> Result<Option<String>, ReadError> {
        let client = self.pool.get().await?;
        let row = client
            .query_opt(
                &format!("SELECT value FROM {SCHEMA}.store WHERE key = $1"),
                &[&key],
            )
            .await?;
        Ok(row.map(|r| r.get(0)))
    }

    /// The raw values of `keys` that exist.
    pub async fn values(&self, keys: &[String]) -> Result<HashMap<String, String>, ReadError> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                &format!("SELECT key, value FROM {SCHEMA}.store WHERE key = ANY($1)"),
                &[&keys],
            )
            .await?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }

    /// The record at `key`, parsed.
    pub async fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, ReadError> {
        match self.value(key).await? {
            Some(v) => parse(key, &v).map(Some),
            None => Ok(None),
        }
    }

    /// The pad record, if the pad exists (Etherpad's `doesPadExist`: a record with an atext).
    pub async fn pad(&self, pad_id: &str) -> Result<Option<PadRecord>, ReadError> {
        self.get(&keys::pad(pad_id)).await
    }

    /// Revision `rev` of the pad.
    pub async fn revision(
        &self,
        pad_id: &str,
        rev: i64,
    ) -> Result<Option<RevisionRecord>, ReadError> {
        self.get(&keys::revision(pad_id, rev)).await
    }

    /// The pad's attributed text at `rev` (Etherpad's `getInternalRevisionAText`): the key
    /// revision at or below `rev` and at most 99 changesets after it, read in one query and
    /// composed before they touch the text once, so the cost does not grow with the revision
    /// number.
    pub async fn atext_at(
        &self,
        pad_id: &str,
        rev: i64,
        pool: &AttributePool,
    ) -> Result<AText, ReadError> {
        let key_rev = key_revision(rev);
        let wanted: Vec<String> = (key_rev..=rev).map(|r| keys::revision(pad_id, r)).collect();
        let found = self.values(&wanted).await?;
        let record = |r: i64| -> Result<RevisionRecord, ReadError> {
            let key = keys::revision(pad_id, r);
            let text = found
                .get(&key)
                .ok_or_else(|| ReadError::Corrupt(key.clone(), "missing".into()))?;
            parse(&key, text)
        };
        let key_record = record(key_rev)?;
        let atext: AText = key_record
            .meta
            .atext
            .ok_or_else(|| {
                ReadError::Corrupt(
                    keys::revision(pad_id, key_rev),
                    "key revision without atext".into(),
                )
            })?
            .into();
        if rev == key_rev {
            return Ok(atext);
        }
        // Composing the changesets first costs their size only; the text is rewritten once.
        let mut composed: Option<changes::Changeset> = None;
        for r in key_rev + 1..=rev {
            let key = keys::revision(pad_id, r);
            let cs = changes::Changeset::unpack(&record(r)?.changeset)
                .map_err(|e| ReadError::Corrupt(key.clone(), e.to_string()))?;
            composed = Some(match composed {
                None => cs,
                Some(acc) => easysync::compose(&acc, &cs, pool)
                    .map_err(|e| ReadError::Corrupt(key.clone(), e.to_string()))?,
            });
        }
        let Some(all) = composed else {
            return Ok(atext);
        };
        let atext = changes::apply_to_atext(&all.to_string(), &atext, pool)
            .map_err(|e| ReadError::Corrupt(keys::revision(pad_id, rev), e.to_string()))?;
        Ok(atext)
    }

    /// Every pad id, in JavaScript's string order (Etherpad's `listAllPads`: keys `pad:*` that
    /// are not `*:*:*`).
    pub async fn all_pad_ids(&self) -> Result<Vec<String>, ReadError> {
        let client = self.pool.get().await?;
        let rows = client
            .query(
                &format!(
                    "SELECT key FROM {SCHEMA}.store WHERE key LIKE 'pad:%' AND key NOT LIKE '%:%:%'"
                ),
                &[],
            )
            .await?;
        let mut ids: Vec<String> = rows
            .into_iter()
            .filter_map(|r| {
                r.get::<_, String>(0)
                    .strip_prefix("pad:")
                    .map(str::to_owned)
            })
            .collect();
        ids.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
        Ok(ids)
    }
}

/// Parses a stored value.
fn parse<T: DeserializeOwned>(key: &str, text: &str) -> Result<T, ReadError> {
    serde_json::from_str(text).map_err(|e| ReadError::Corrupt(key.to_owned(), e.to_string()))
}
