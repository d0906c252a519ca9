//! Document revisions (and the admin `_resync`'s reroutings) into the read model, a run of them at
//! a time: one query reads the databases' `revs_limit`s, one the stored documents the run touches;
//! the revisions are applied in memory in event order (several revisions of one document in a run
//! see each other); then one multi-row statement each writes `kv`, `channels`, `access` and
//! `role_access` (`unnest` arrays), however many documents the run holds, the reads and the writes
//! each sent at once (pipelined). A `_bulk_docs` batch of a hundred documents costs the projector
//! eight statements in two round trips, not five hundred statements in a thousand.
//!
//! The rows written are those of applying the revisions one by one: a document's `kv` row and
//! its live grants are its last state in the run; a grant it stopped making keeps its row with
//! the sequence of the revision that dropped it (`revoked_seq`); a `channels` row is the last
//! one any revision of the run wrote for it; a leaf that gains a child keeps its body in
//! `old_revs` (until compaction). Replays use the same path (`apply_batch`), so a
//! rebuild equals the live read model.

use super::{Grants, invalid, route};
use crate::rev::RevId;
use crate::stored::{StoredDoc, SyncData};
use crate::tree::RevTree;
use deadpool_postgres::Transaction;
use palimpsest_events::RecordedEvent;
use palimpsest_events::docs::DocumentEvent;
use palimpsest_projections::ProjectionError;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tokio_postgres::types::ToSql;

/// A document's key in the read model: its database and id.
type Key = (String, String);

/// One grant row: `(db, grantee, channel or role, document key)`.
type Grant = (String, String, String, String);

/// What a run of revisions leaves to write.
#[derive(Default)]
struct Rows {
    /// Each touched document's last stored form, in first-touched order.
    docs: Vec<(Key, StoredDoc)>,
    /// Where each touched document is in `docs`.
    at: HashMap<Key, usize>,
    /// `(db, channel, key)` → the sequence it last changed at and whether it was a removal.
    channels: BTreeMap<(String, String, String), (i64, bool)>,
    /// `access()` grants the run's revisions stopped making → the sequence that revoked them.
    revoked_access: BTreeMap<Grant, i64>,
    /// `role()` grants the run's revisions stopped making → the sequence that revoked them.
    revoked_roles: BTreeMap<Grant, i64>,
    /// The revisions that stopped being leaves in the run, with their bodies.
    old_revs: OldRevColumns,
    /// Each database's sequence: its last change's before the run, then counted up per change.
    last_seq: HashMap<String, i64>,
    /// The log position of each touched document's last change in the run.
    positions: HashMap<Key, i64>,
}

impl Rows {
    /// The database's next sequence (a change of one of its documents).
    fn next_seq(&mut self, db: &str) -> Result<i64, ProjectionError> {
        let last = self
            .last_seq
            .get_mut(db)
            .ok_or_else(|| invalid(format!("change in missing database `{db}`")))?;
        *last += 1;
        Ok(*last)
    }
}

/// `old_revs` rows as the columns of one multi-row insert: `(db, key, rev, body, channels as
/// JSON)`.
#[derive(Default)]
struct OldRevColumns {
    dbs: Vec<String>,
    keys: Vec<String>,
    revs: Vec<String>,
    bodies: Vec<String>,
    channels: Vec<String>,
}

impl OldRevColumns {
    /// Keeps the body of the leaf in `tree` that `ancestry` extends, if storing a revision with
    /// that ancestry makes it stop being a leaf (`rev_channels`: the leaves' channels before).
    fn keep_parent(
        &mut self,
        key: &Key,
        tree: &RevTree,
        ancestry: &[RevId],
        rev_channels: &BTreeMap<String, Vec<String>>,
    ) -> Result<(), ProjectionError> {
        let Some(parent) = ancestry.iter().find(|a| tree.contains(a)) else {
            return Ok(());
        };
        let Some(body) = tree
            .get(parent)
            .filter(|node| node.children == 0)
            .and_then(|node| node.body.clone())
        else {
            return Ok(());
        };
        let rev = parent.to_string();
        let channels = rev_channels.get(&rev).cloned().unwrap_or_default();
        self.dbs.push(key.0.clone());
        self.keys.push(key.1.clone());
        self.channels
            .push(serde_json::to_string(&channels).map_err(invalid)?);
        self.revs.push(rev);
        self.bodies.push(body);
        Ok(())
    }

    fn params(&self) -> [&(dyn ToSql + Sync); 5] {
        [
            &self.dbs,
            &self.keys,
            &self.revs,
            &self.bodies,
            &self.channels,
        ]
    }
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
    // Timed for the write's budget: this runs inside the writer's read-your-writes wait.
    let mut phases = crate::phases::Phases::start("projector run");
    // Both reads sent at once (pipelined on the transaction's connection).
    let ((limits, last_seq), stored) =
        tokio::try_join!(revs_limits(tx, s, run), stored_docs(tx, s, run))?;
    phases.lap("read");
    let mut rows = Rows {
        last_seq,
        ..Rows::default()
    };
    for (key, doc) in stored {
        rows.at.insert(key.clone(), rows.docs.len());
        rows.docs.push((key, doc));
    }
    for (event, payload) in run {
        match payload {
            DocumentEvent::RevisionStored { .. } => revision(&mut rows, &limits, event, payload)?,
            DocumentEvent::DocumentResynced { .. } => resync(&mut rows, event, payload)?,
            DocumentEvent::DocumentPurged { .. } => {
                return Err(invalid("a purge is not applied in a run"));
            }
        }
    }
    phases.lap("apply");
    write(tx, s, &rows).await?;
    phases.lap("write");
    Ok(())
}

/// Each database's `revs_limit` and sequence, for the databases of the run.
async fn revs_limits(
    tx: &Transaction<'_>,
    s: &str,
    run: &[(&RecordedEvent, DocumentEvent)],
) -> Result<(HashMap<String, i32>, HashMap<String, i64>), ProjectionError> {
    let mut names: Vec<&str> = run
        .iter()
        .filter_map(|(_, payload)| key_of(payload))
        .map(|(db, _)| db)
        .collect();
    names.sort_unstable();
    names.dedup();
    let statement = tx
        .prepare_cached(&format!(
            "SELECT name, revs_limit, last_seq FROM {s}.databases WHERE name = ANY($1)"
        ))
        .await?;
    let rows = tx.query(&statement, &[&names]).await?;
    let limits = rows.iter().map(|row| (row.get(0), row.get(1))).collect();
    let seqs = rows.iter().map(|row| (row.get(0), row.get(2))).collect();
    Ok((limits, seqs))
}

/// The rows of `kv` in schema `schema` of the documents `($1 dbs, $2 ids)` (each named once):
/// one probe of the primary key per document (`CROSS JOIN LATERAL … LIMIT 1`), whatever the
/// table's statistics. A plain join of the `unnest` with `kv`, planned once by the projector's
/// connection while the table was small, stays a hash join over a scan of the whole table (7 ms
/// per `_bulk_docs` batch at 30,000 rows, inside the writer's read-your-writes wait). Public so
/// a test can check its plan.
pub fn stored_documents_query(schema: &str) -> String {
    format!(
        "SELECT k.db, k.key, k.value FROM unnest($1::text[], $2::text[]) AS u(db, key) \
         CROSS JOIN LATERAL (SELECT db, key, value FROM {schema}.kv \
           WHERE db = u.db AND key = u.key LIMIT 1) k"
    )
}

/// The stored documents the run touches, in one query ([`stored_documents_query`]).
async fn stored_docs(
    tx: &Transaction<'_>,
    s: &str,
    run: &[(&RecordedEvent, DocumentEvent)],
) -> Result<Vec<(Key, StoredDoc)>, ProjectionError> {
    let mut dbs = Vec::with_capacity(run.len());
    let mut keys = Vec::with_capacity(run.len());
    let mut asked = BTreeSet::new();
    for (db, doc_id) in run.iter().filter_map(|(_, payload)| key_of(payload)) {
        // A document revised twice in the run is read once.
        if asked.insert((db, doc_id)) {
            dbs.push(db);
            keys.push(doc_id);
        }
    }
    let statement = tx.prepare_cached(&stored_documents_query(s)).await?;
    let rows = tx.query(&statement, &[&dbs, &keys]).await?;
    rows.iter()
        .map(|row| {
            let doc = StoredDoc::parse(row.get(2)).map_err(invalid)?;
            Ok(((row.get(0), row.get(1)), doc))
        })
        .collect()
}

/// Whether the event is applied in a run: a stored revision, or the admin `_resync`'s
/// rerouting (a purge removes rows and is applied on its own).
pub fn in_run(payload: &DocumentEvent) -> bool {
    key_of(payload).is_some()
}

/// The database and document id of an event applied in a run.
fn key_of(payload: &DocumentEvent) -> Option<(&str, &str)> {
    match payload {
        DocumentEvent::RevisionStored { db, doc_id, .. }
        | DocumentEvent::DocumentResynced { db, doc_id, .. } => Some((db, doc_id)),
        DocumentEvent::DocumentPurged { .. } => None,
    }
}

/// The document's `access()` grants as rows.
fn access_grants(db: &str, key: &str, sync: &SyncData) -> BTreeSet<Grant> {
    let mut grants = BTreeSet::new();
    for (grantee, channels) in &sync.access {
        for channel in channels {
            grants.insert((db.into(), grantee.clone(), channel.clone(), key.into()));
        }
    }
    grants
}

/// The document's `role()` grants as rows. Sync Gateway's `role()` names roles `role:<name>`;
/// a bare name is taken as it is.
fn role_grants(db: &str, key: &str, sync: &SyncData) -> BTreeSet<Grant> {
    let mut grants = BTreeSet::new();
    for (grantee, roles) in &sync.role_access {
        for role in roles {
            let role = role.strip_prefix("role:").unwrap_or(role);
            grants.insert((db.into(), grantee.clone(), role.into(), key.into()));
        }
    }
    grants
}

/// Remembers the grants in `before` that are not in `after` as revoked at `seq`, and forgets
/// an earlier revocation of those in `after` (granted again).
fn revoke(
    revoked: &mut BTreeMap<Grant, i64>,
    before: &BTreeSet<Grant>,
    after: &BTreeSet<Grant>,
    seq: i64,
) {
    for grant in before.difference(after) {
        revoked.insert(grant.clone(), seq);
    }
    for grant in after {
        revoked.remove(grant);
    }
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
        roles,
    } = payload
    else {
        return Err(invalid("only stored revisions are applied in a run"));
    };
    let limit = *limits
        .get(db)
        .ok_or_else(|| invalid(format!("revision for missing database `{db}`")))?;
    let key: Key = (db.clone(), doc_id.clone());
    let seq = rows.next_seq(db)?;
    rows.positions.insert(key.clone(), event.position);
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
    if !tree.contains(&rev_id) {
        let leaves_channels = before.map(|doc| &doc.sync.rev_channels);
        let empty = BTreeMap::new();
        rows.old_revs
            .keep_parent(&key, &tree, &ancestry, leaves_channels.unwrap_or(&empty))?;
    }
    tree.insert(rev_id, &ancestry, body.clone(), *deleted);
    tree.prune(usize::try_from(limit).unwrap_or(1));
    let mut stored =
        StoredDoc::of_tree(&tree, seq).ok_or_else(|| invalid("a document without revisions"))?;
    let empty = SyncData::default();
    let previous = before.map_or(&empty, |doc| &doc.sync);
    stored.sync.channels = previous.channels.clone();
    stored.sync.access = previous.access.clone();
    stored.sync.role_access = previous.role_access.clone();
    if stored.sync.rev == *rev {
        let grants = Grants { access, roles };
        route(&mut stored.sync, channels, grants, *deleted, seq);
    }
    let parent = ancestry.first().map(ToString::to_string);
    let own = RevisionChannels {
        rev,
        channels,
        deleted: *deleted,
        parent: parent.as_deref(),
    };
    stored.sync.rev_channels = leaf_channels(&previous.rev_channels, &tree, &own);
    let held = HeldGrants::of(db, doc_id, previous);
    settle(rows, key, held, stored, seq);
    Ok(())
}

/// A stored revision's own routing, as [`leaf_channels`] records it.
struct RevisionChannels<'a> {
    rev: &'a str,
    channels: &'a [String],
    deleted: bool,
    /// The revision it descends from (its first ancestor), if any.
    parent: Option<&'a str>,
}

/// The leaves' channels after a revision is stored: the earlier leaves' as they were, the new
/// revision's from the sync function; a tombstone is also in the channels of the revision it
/// deleted (so their readers can fetch the deletion). Revisions that are no longer leaves are
/// dropped: only leaves have bodies to read.
fn leaf_channels(
    before: &BTreeMap<String, Vec<String>>,
    tree: &RevTree,
    stored: &RevisionChannels<'_>,
) -> BTreeMap<String, Vec<String>> {
    let mut channels: BTreeSet<String> = stored.channels.iter().cloned().collect();
    if stored.deleted
        && let Some(deleted) = stored.parent.and_then(|parent| before.get(parent))
    {
        channels.extend(deleted.iter().cloned());
    }
    let mut out = before.clone();
    out.insert(stored.rev.to_owned(), channels.into_iter().collect());
    out.retain(|rev, _| {
        RevId::parse(rev)
            .ok()
            .is_some_and(|parsed| tree.is_leaf(&parsed))
    });
    out
}

/// Applies the admin `_resync`'s rerouting of the document's winner: the current sync
/// function's channels and grants replace the document's, at the event's sequence (so
/// `_changes` shows it again, with `removed` where it left a channel).
fn resync(
    rows: &mut Rows,
    event: &RecordedEvent,
    payload: &DocumentEvent,
) -> Result<(), ProjectionError> {
    let DocumentEvent::DocumentResynced {
        db,
        doc_id,
        rev,
        channels,
        access,
        roles,
    } = payload
    else {
        return Err(invalid("only a resync is applied as one"));
    };
    let key: Key = (db.clone(), doc_id.clone());
    let before = rows
        .at
        .get(&key)
        .map(|&i| &rows.docs[i].1)
        .ok_or_else(|| invalid(format!("resync of missing document `{doc_id}`")))?;
    if before.sync.rev != *rev {
        return Err(invalid(format!(
            "resync of `{doc_id}` ran on {rev}, the read model's winner is {}",
            before.sync.rev
        )));
    }
    let held = HeldGrants::of(db, doc_id, &before.sync);
    let mut stored = before.clone();
    let seq = rows.next_seq(db)?;
    rows.positions.insert(key.clone(), event.position);
    route(
        &mut stored.sync,
        channels,
        Grants { access, roles },
        false,
        seq,
    );
    stored.sync.sequence = seq;
    stored
        .sync
        .rev_channels
        .insert(rev.clone(), channels.clone());
    settle(rows, key, held, stored, seq);
    Ok(())
}

/// A document's grants as rows: its `access()` ones and its `role()` ones.
struct HeldGrants {
    access: BTreeSet<Grant>,
    roles: BTreeSet<Grant>,
}

impl HeldGrants {
    /// The grants `sync` holds, as rows of document `doc_id` in `db`.
    fn of(db: &str, doc_id: &str, sync: &SyncData) -> HeldGrants {
        HeldGrants {
            access: access_grants(db, doc_id, sync),
            roles: role_grants(db, doc_id, sync),
        }
    }
}

/// Keeps the document's new state in `rows`: the channel rows that changed at `seq`, the
/// grants it stopped making since `held` (revoked at `seq`), and the state itself.
fn settle(rows: &mut Rows, key: Key, held: HeldGrants, stored: StoredDoc, seq: i64) {
    let (db, doc_id) = &key;
    let now = HeldGrants::of(db, doc_id, &stored.sync);
    revoke(&mut rows.revoked_access, &held.access, &now.access, seq);
    revoke(&mut rows.revoked_roles, &held.roles, &now.roles, seq);
    for (channel, removal) in &stored.sync.channels {
        let removed = match removal {
            None => false,
            Some(r) if r.seq == seq => true,
            Some(_) => continue,
        };
        rows.channels.insert(
            (db.clone(), channel.clone(), doc_id.clone()),
            (seq, removed),
        );
    }
    match rows.at.get(&key) {
        Some(&i) => rows.docs[i].1 = stored,
        None => {
            rows.at.insert(key.clone(), rows.docs.len());
            rows.docs.push((key, stored));
        }
    }
}

/// Writes the run's rows: `kv`, `channels`, and the grants in `access` and `role_access`.
async fn write(tx: &Transaction<'_>, s: &str, rows: &Rows) -> Result<(), ProjectionError> {
    let mut dbs = Vec::with_capacity(rows.docs.len());
    let mut keys = Vec::with_capacity(rows.docs.len());
    let mut values = Vec::with_capacity(rows.docs.len());
    let mut seqs = Vec::with_capacity(rows.docs.len());
    let mut revs = Vec::with_capacity(rows.docs.len());
    let mut deleted = Vec::with_capacity(rows.docs.len());
    let mut positions = Vec::with_capacity(rows.docs.len());
    let mut access = GrantColumns::default();
    let mut roles = GrantColumns::default();
    for ((db, key), doc) in &rows.docs {
        dbs.push(db.as_str());
        keys.push(key.as_str());
        values.push(doc.to_text().map_err(invalid)?);
        seqs.push(doc.sync.sequence);
        revs.push(doc.sync.rev.as_str());
        deleted.push(doc.sync.deleted);
        positions.push(rows.positions.get(&(db.clone(), key.clone())).copied());
        access.live(access_grants(db, key, &doc.sync));
        roles.live(role_grants(db, key, &doc.sync));
    }
    access.revoked(&rows.revoked_access);
    roles.revoked(&rows.revoked_roles);
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
            "INSERT INTO {s}.kv (db, key, value, seq, rev, deleted, position) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::bool[], $7::bigint[]) \
             ON CONFLICT (db, key) DO UPDATE SET value = EXCLUDED.value, seq = EXCLUDED.seq, \
             rev = EXCLUDED.rev, deleted = EXCLUDED.deleted, position = EXCLUDED.position"
        ))
        .await?;
    let index = tx
        .prepare_cached(&format!(
            "INSERT INTO {s}.channels (db, channel, key, seq, removed) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bool[]) \
             ON CONFLICT (db, channel, key) DO UPDATE SET seq = EXCLUDED.seq, removed = EXCLUDED.removed"
        ))
        .await?;
    let grant_access = tx
        .prepare_cached(&GrantColumns::upsert(s, "access", "channel"))
        .await?;
    let grant_roles = tx
        .prepare_cached(&GrantColumns::upsert(s, "role_access", "role"))
        .await?;
    let keep_old = tx
        .prepare_cached(&format!(
            "INSERT INTO {s}.old_revs (db, key, rev, body, channels) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) \
             ON CONFLICT (db, key, rev) DO NOTHING"
        ))
        .await?;
    let kv_params: [&(dyn ToSql + Sync); 7] =
        [&dbs, &keys, &values, &seqs, &revs, &deleted, &positions];
    let counted = tx
        .prepare_cached(&format!(
            "UPDATE {s}.databases d SET last_seq = u.seq \
             FROM unnest($1::text[], $2::bigint[]) AS u(name, seq) WHERE d.name = u.name"
        ))
        .await?;
    let (counted_dbs, counted_seqs): (Vec<&String>, Vec<i64>) =
        rows.last_seq.iter().map(|(db, seq)| (db, *seq)).unzip();
    let counted_params: [&(dyn ToSql + Sync); 2] = [&counted_dbs, &counted_seqs];
    let channel_params: [&(dyn ToSql + Sync); 5] = [
        &channels.dbs,
        &channels.channels,
        &channels.keys,
        &channels.seqs,
        &channels.removed,
    ];
    let (access_params, role_params) = (access.params(), roles.params());
    let old_params = rows.old_revs.params();
    // Sent at once; no two statements touch the same rows. A statement with no row to write
    // is not sent: most runs grant nothing and keep no older body.
    tokio::try_join!(
        execute_rows(tx, &upsert, &kv_params, dbs.len()),
        execute_rows(tx, &index, &channel_params, channels.dbs.len()),
        execute_rows(tx, &grant_access, &access_params, access.dbs.len()),
        execute_rows(tx, &grant_roles, &role_params, roles.dbs.len()),
        execute_rows(tx, &keep_old, &old_params, rows.old_revs.dbs.len()),
        execute_rows(tx, &counted, &counted_params, counted_dbs.len()),
    )?;
    Ok(())
}

/// Executes a multi-row statement whose columns hold `rows` rows; none: nothing is sent (the
/// statement would change nothing, and costs the server a statement).
async fn execute_rows(
    tx: &Transaction<'_>,
    statement: &tokio_postgres::Statement,
    params: &[&(dyn ToSql + Sync)],
    rows: usize,
) -> Result<u64, tokio_postgres::Error> {
    if rows == 0 {
        return Ok(0);
    }
    tx.execute(statement, params).await
}

/// Grant rows of a run as the columns of one multi-row upsert: live ones (`revoked_seq` null)
/// and revoked ones (the sequence that revoked them). A grant is never both.
#[derive(Default)]
struct GrantColumns {
    dbs: Vec<String>,
    grantees: Vec<String>,
    names: Vec<String>,
    keys: Vec<String>,
    revoked: Vec<Option<i64>>,
}

impl GrantColumns {
    /// The upsert into `table`, whose granted thing is in `column`.
    fn upsert(s: &str, table: &str, column: &str) -> String {
        format!(
            "INSERT INTO {s}.{table} (db, grantee, {column}, key, revoked_seq) \
             SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[]) \
             ON CONFLICT (db, grantee, {column}, key) DO UPDATE SET revoked_seq = EXCLUDED.revoked_seq"
        )
    }

    fn push(&mut self, (db, grantee, name, key): Grant, revoked: Option<i64>) {
        self.dbs.push(db);
        self.grantees.push(grantee);
        self.names.push(name);
        self.keys.push(key);
        self.revoked.push(revoked);
    }

    /// Grants the documents make at the end of the run.
    fn live(&mut self, grants: BTreeSet<Grant>) {
        for grant in grants {
            self.push(grant, None);
        }
    }

    /// Grants the run's revisions stopped making.
    fn revoked(&mut self, revoked: &BTreeMap<Grant, i64>) {
        for (grant, seq) in revoked {
            self.push(grant.clone(), Some(*seq));
        }
    }

    fn params(&self) -> [&(dyn ToSql + Sync); 5] {
        [
            &self.dbs,
            &self.grantees,
            &self.names,
            &self.keys,
            &self.revoked,
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rev(text: &str) -> RevId {
        RevId::parse(text).expect("valid")
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|name| (*name).to_owned()).collect()
    }

    /// `1-a` in `ch-b` then, when `stored` is added to the tree, the leaves' channels.
    fn after(stored: &RevisionChannels<'_>, ancestry: &[RevId]) -> BTreeMap<String, Vec<String>> {
        let mut tree = RevTree::default();
        tree.insert(rev("1-a"), &[], "{}".into(), false);
        let before = BTreeMap::from([("1-a".to_owned(), names(&["ch-b"]))]);
        tree.insert(rev(stored.rev), ancestry, "{}".into(), stored.deleted);
        leaf_channels(&before, &tree, stored)
    }

    #[test]
    fn a_grafted_branch_keeps_its_own_channels_beside_the_other_leaf() {
        let channels = names(&["ch-a"]);
        let graft = RevisionChannels {
            rev: "9-x",
            channels: &channels,
            deleted: false,
            parent: None,
        };
        assert_eq!(
            after(&graft, &[]),
            BTreeMap::from([
                ("1-a".to_owned(), names(&["ch-b"])),
                ("9-x".to_owned(), names(&["ch-a"])),
            ])
        );
    }

    #[test]
    fn a_child_replaces_its_parent_and_a_tombstone_keeps_the_deleted_revisions_channels() {
        let none = Vec::new();
        let tombstone = RevisionChannels {
            rev: "2-d",
            channels: &none,
            deleted: true,
            parent: Some("1-a"),
        };
        assert_eq!(
            after(&tombstone, &[rev("1-a")]),
            BTreeMap::from([("2-d".to_owned(), names(&["ch-b"]))])
        );
    }
}
