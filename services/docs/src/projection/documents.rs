//! Document revisions into the read model, a run of them at a time: one query reads the
//! databases' `revs_limit`s, one the stored documents the run touches; the revisions are applied
//! in memory in event order (several revisions of one document in a run see each other); then
//! one multi-row statement each writes `kv`, `channels` and `access` (`unnest` arrays), however
//! many documents the run holds, the reads and the writes each sent at once (pipelined). A
//! `_bulk_docs` batch of a hundred documents costs the projector six statements in two round
//! trips, not five hundred statements in a thousand.
//!
//! The rows written are those of applying the revisions one by one: a document's `kv` row and
//! its `access` grants are its last state in the run; a `channels` row is the last one any
//! revision of the run wrote for it. Replays use the same path (`apply_batch`), so a rebuild
//! equals the live read model.

use super::{invalid, route};
use crate::rev::RevId;
use crate::stored::StoredDoc;
use crate::tree::RevTree;
use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_events::docs::DocumentEvent;
use palimpsest_projections::ProjectionError;
use std::collections::{BTreeMap, HashMap};
use tokio_postgres::types::ToSql;

/// A document's key in the read model: its database and id.
type Key = (String, String);

/// What a run of revisions leaves to write.
#[derive(Default)]
struct Rows {
    /// Each touched document's last stored form, in first-touched order.
    docs: Vec<(Key, StoredDoc)>,
    /// Where each touched document is in `docs`.
    at: HashMap<Key, usize>,
    /// `(db, channel, key)` → the sequence it last changed at and whether it was a removal.
    channels: BTreeMap<(String, String, String), (i64, bool)>,
}

/// The `channels` rows of a run as the columns of one multi-row statement.
#[derive(Default)]
struct ChannelColumns<'a> {
    dbs: Vec<&'a str>,
    channels: Vec<&'a str>,
    keys: Vec<&'a str>,
    seqs: Vec<i64>,
    removed: Vec<bool>,
}

/// Applies a run of document revisions (each with its recorded event) in order.
pub async fn apply(
    tx: &Transaction<'_>,
    s: &str,
    run: &[(&RecordedEvent, DocumentEvent)],
) -> Result<(), ProjectionError> {
    if run.is_empty() {
        return Ok(());
    }
    // Commit without waiting for the flush: the checkpoint is in the same transaction, so a
    // crash loses both together and the events are applied again from the durable log.
    tx.batch_execute("SET LOCAL synchronous_commit = off")
        .await?;
    // Both reads sent at once (pipelined on the transaction's connection).
    let (limits, stored) = tokio::try_join!(revs_limits(tx, s, run), stored_docs(tx, s, run))?;
    let mut rows = Rows::default();
    for (key, doc) in stored {
        rows.at.insert(key.clone(), rows.docs.len());
        rows.docs.push((key, doc));
    }
    for (event, payload) in run {
        revision(&mut rows, &limits, event, payload)?;
    }
    write(tx, s, &rows).await
}

/// Each database's `revs_limit`, for the databases of the run.
async fn revs_limits(
    tx: &Transaction<'_>,
    s: &str,
    run: &[(&RecordedEvent, DocumentEvent)],
) -> Result<HashMap<String, i32>, ProjectionError> {
    let mut names: Vec<&str> = run
        .iter()
        .map(|(_, DocumentEvent::RevisionStored { db, .. })| db.as_str())
        .collect();
    names.sort_unstable();
    names.dedup();
    let statement = tx
        .prepare_cached(&format!(
            "SELECT name, revs_limit FROM {s}.databases WHERE name = ANY($1)"
        ))
        .await?;
    let rows = tx.query(&statement, &[&names]).await?;
    Ok(rows.iter().map(|row| (row.get(0), row.get(1))).collect())
}

/// The stored documents the run touches, in one query.
async fn stored_docs(
    tx: &Transaction<'_>,
    s: &str,
    run: &[(&RecordedEvent, DocumentEvent)],
) -> Result<Vec<(Key, StoredDoc)>, ProjectionError> {
    let mut dbs = Vec::with_capacity(run.len());
    let mut keys = Vec::with_capacity(run.len());
    for (_, DocumentEvent::RevisionStored { db, doc_id, .. }) in run {
        dbs.push(db.as_str());
        keys.push(doc_id.as_str());
    }
    let statement = tx
        .prepare_cached(&format!(
            "SELECT DISTINCT k.db, k.key, k.value FROM unnest($1::text[], $2::text[]) AS u(db, key) \
             JOIN {s}.kv k ON k.db = u.db AND k.key = u.key"
        ))
        .await?;
    let rows = tx.query(&statement, &[&dbs, &keys]).await?;
    rows.iter()
        .map(|row| {
            let doc = StoredDoc::parse(row.get(2)).map_err(invalid)?;
            Ok(((row.get(0), row.get(1)), doc))
        })
        .collect()
}

/// Applies one revision to the document's state in `rows`.
fn revision(
    rows: &mut Rows,
    limits: &HashMap<String, i32>,
    event: &RecordedEvent,
    payload: &DocumentEvent,
) -> Result<(), ProjectionError> {
    let DocumentEvent::RevisionStored {
        db,
        doc_id,
        rev,
        ancestry,
        body,
        deleted,
        channels,
        access,
    } = payload;
    let limit = *limits
        .get(db)
        .ok_or_else(|| invalid(format!("revision for missing database `{db}`")))?;
    let key: Key = (db.clone(), doc_id.clone());
    let before = rows.at.get(&key).map(|&i| &rows.docs[i].1);
    let mut tree = match before {
        Some(doc) => doc.tree().map_err(invalid)?,
        None => RevTree::default(),
    };
    let rev_id = RevId::parse(rev).map_err(invalid)?;
    let ancestry = ancestry
        .iter()
        .map(|a| RevId::parse(a))
        .collect::<Result<Vec<_>, _>>()
        .map_err(invalid)?;
    tree.insert(rev_id, &ancestry, body.clone(), *deleted);
    tree.prune(usize::try_from(limit).unwrap_or(1));
    let mut stored = StoredDoc::of_tree(&tree, event.position)
        .ok_or_else(|| invalid("a document without revisions"))?;
    if let Some(previous) = before {
        stored.sync.channels = previous.sync.channels.clone();
        stored.sync.access = previous.sync.access.clone();
    }
    if stored.sync.rev == *rev {
        route(&mut stored.sync, channels, access, *deleted, event.position);
    }
    for (channel, removal) in &stored.sync.channels {
        let removed = match removal {
            None => false,
            Some(r) if r.seq == event.position => true,
            Some(_) => continue,
        };
        rows.channels.insert(
            (db.clone(), channel.clone(), doc_id.clone()),
            (event.position, removed),
        );
    }
    match rows.at.get(&key) {
        Some(&i) => rows.docs[i].1 = stored,
        None => {
            rows.at.insert(key.clone(), rows.docs.len());
            rows.docs.push((key, stored));
        }
    }
    Ok(())
}

/// Writes the run's rows: `kv`, `channels`, then each document's grants replaced.
async fn write(tx: &Transaction<'_>, s: &str, rows: &Rows) -> Result<(), ProjectionError> {
    let mut dbs = Vec::with_capacity(rows.docs.len());
    let mut keys = Vec::with_capacity(rows.docs.len());
    let mut values = Vec::with_capacity(rows.docs.len());
    let mut seqs = Vec::with_capacity(rows.docs.len());
    let mut revs = Vec::with_capacity(rows.docs.len());
    let mut deleted = Vec::with_capacity(rows.docs.len());
    let mut grants: [Vec<&str>; 4] = Default::default();
    for ((db, key), doc) in &rows.docs {
        dbs.push(db.as_str());
        keys.push(key.as_str());
        values.push(doc.to_text().map_err(invalid)?);
        seqs.push(doc.sync.sequence);
        revs.push(doc.sync.rev.as_str());
        deleted.push(doc.sync.deleted);
        for (grantee, channels) in &doc.sync.access {
            for channel in channels {
                grants[0].push(db);
                grants[1].push(grantee);
                grants[2].push(channel);
                grants[3].push(key);
            }
        }
    }
    let mut channels = ChannelColumns::default();
    for ((db, channel, key), (seq, removed)) in &rows.channels {
        channels.dbs.push(db);
        channels.channels.push(channel);
        channels.keys.push(key);
        channels.seqs.push(*seq);
        channels.removed.push(*removed);
    }
    let upsert = tx
        .prepare_cached(&format!(
            "INSERT INTO {s}.kv (db, key, value, seq, rev, deleted) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bool[]) \
             ON CONFLICT (db, key) DO UPDATE SET value = EXCLUDED.value, seq = EXCLUDED.seq, \
             rev = EXCLUDED.rev, deleted = EXCLUDED.deleted"
        ))
        .await?;
    let index = tx
        .prepare_cached(&format!(
            "INSERT INTO {s}.channels (db, channel, key, seq, removed) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bool[]) \
             ON CONFLICT (db, channel, key) DO UPDATE SET seq = EXCLUDED.seq, removed = EXCLUDED.removed"
        ))
        .await?;
    let clear = tx
        .prepare_cached(&format!(
            "DELETE FROM {s}.access a USING unnest($1::text[], $2::text[]) AS u(db, key) \
             WHERE a.db = u.db AND a.key = u.key"
        ))
        .await?;
    let grant = tx
        .prepare_cached(&format!(
            "INSERT INTO {s}.access (db, grantee, channel, key) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) \
             ON CONFLICT DO NOTHING"
        ))
        .await?;
    // Sent at once, run in the order sent: the grants are cleared before they are written.
    let kv_params: [&(dyn ToSql + Sync); 6] = [&dbs, &keys, &values, &seqs, &revs, &deleted];
    let channel_params: [&(dyn ToSql + Sync); 5] = [
        &channels.dbs,
        &channels.channels,
        &channels.keys,
        &channels.seqs,
        &channels.removed,
    ];
    let clear_params: [&(dyn ToSql + Sync); 2] = [&dbs, &keys];
    let grant_params: [&(dyn ToSql + Sync); 4] = [&grants[0], &grants[1], &grants[2], &grants[3]];
    tokio::try_join!(
        tx.execute(&upsert, &kv_params),
        tx.execute(&index, &channel_params),
        tx.execute(&clear, &clear_params),
        tx.execute(&grant, &grant_params),
    )?;
    Ok(())
}
