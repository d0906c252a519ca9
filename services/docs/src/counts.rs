//! A database's document counts (`doc_count`, `doc_del_count` and `update_seq` of `GET /{db}`),
//! counted once per state of the database.
//!
//! Counting reads every document row of the database (about 7 ms at 10,000 documents here, and
//! growing with them), and replicators ask for the info at every batch (PouchDB's pull: once
//! per 100 changes) while the documents do not change. The read model moves the database's
//! `last_seq` in the same transaction as every change of a document row (a revision, a resync,
//! a purge of one document), its `purged_seq` with every purge of tombstones, and a re-created
//! database has another incarnation: the counts of one (name, incarnation, `last_seq`,
//! `purged_seq`) never change, so this process keeps the last ones it counted per database.

use crate::http::error::CouchError;
use crate::read::DbRow;
use deadpool_postgres::Object;
use std::collections::HashMap;
use std::sync::{LazyLock, Mutex};

/// A database's counts, as `GET /{db}` answers them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Documents whose winning revision is not deleted.
    pub live: i64,
    /// Documents whose winning revision is a tombstone.
    pub deleted: i64,
    /// The newest sequence of a document still there.
    pub update_seq: i64,
}

/// What one state of a database is known by.
type State = (uuid::Uuid, i64, i64);

/// The most databases whose counts are kept; past it the memory starts again.
const KEPT_AT_MOST: usize = 10_000;

static KEPT: LazyLock<Mutex<HashMap<String, (State, Counts)>>> = LazyLock::new(Default::default);

/// The counts of `db` as the read model holds it (read with `client`): the ones counted last
/// when it has not changed since, else counted now.
pub async fn of(client: &Object, db: &DbRow) -> Result<Counts, CouchError> {
    let state = (db.incarnation, db.last_seq, db.purged_seq);
    if let Some(counts) = kept(&db.name, state) {
        return Ok(counts);
    }
    let row = client
        .query_one(
            "SELECT count(*) FILTER (WHERE NOT deleted), count(*) FILTER (WHERE deleted), \
             coalesce(max(seq), 0) FROM docs.kv WHERE db = $1 AND seq IS NOT NULL",
            &[&db.name],
        )
        .await?;
    let counts = Counts {
        live: row.get(0),
        deleted: row.get(1),
        update_seq: row.get(2),
    };
    keep(&db.name, state, counts);
    Ok(counts)
}

fn kept(name: &str, state: State) -> Option<Counts> {
    let kept = KEPT.lock().ok()?;
    kept.get(name)
        .filter(|(known, _)| *known == state)
        .map(|(_, counts)| *counts)
}

fn keep(name: &str, state: State, counts: Counts) {
    let Ok(mut kept) = KEPT.lock() else {
        tracing::warn!("database counts poisoned; counting every time");
        return;
    };
    if kept.len() >= KEPT_AT_MOST && !kept.contains_key(name) {
        kept.clear();
    }
    kept.insert(name.to_owned(), (state, counts));
}
