//! What a user lost: the channels that a revoked grant took away from it (a document that
//! granted it a role or a channel changed, was deleted or purged), each with the sequence of the
//! revocation. Sync Gateway's revocation: the user's `_changes` shows every document of such a
//! channel once, at that sequence, as `removed`, and reads it as `{"_removed": true}`; then the
//! client forgets it.
//!
//! Derived on each request from the read model's grant rows, which keep a revoked grant with
//! its `revoked_seq` (see [`crate::projection::schema`]).

use crate::http::error::CouchError;
use crate::stored::StoredDoc;
use deadpool_postgres::Object;
use std::collections::{BTreeMap, BTreeSet};

/// The channels `name` lost through revoked grants, with the sequence of the loss, given the
/// roles and channels it has now.
pub async fn lost(
    client: &Object,
    db: &str,
    name: &str,
    roles: &BTreeSet<String>,
    channels: &BTreeSet<String>,
) -> Result<BTreeMap<String, i64>, CouchError> {
    let mut lost_roles: BTreeMap<String, i64> = BTreeMap::new();
    for row in client
        .query(
            "SELECT role, max(revoked_seq) FROM docs.role_access \
             WHERE db = $1 AND grantee = $2 AND revoked_seq IS NOT NULL GROUP BY role",
            &[&db, &name],
        )
        .await?
    {
        let role: String = row.get(0);
        if !roles.contains(&role) {
            lost_roles.insert(role, row.get(1));
        }
    }
    let mut out: BTreeMap<String, i64> = BTreeMap::new();
    let mut lose = |channel: String, seq: i64| {
        if !channels.contains(&channel) {
            let at = out.entry(channel).or_insert(seq);
            *at = (*at).max(seq);
        }
    };
    if !lost_roles.is_empty() {
        let keys: Vec<String> = lost_roles.keys().map(|r| format!("role:{r}")).collect();
        for row in client
            .query(
                "SELECT key, value FROM docs.kv WHERE db = $1 AND key = ANY($2)",
                &[&db, &keys],
            )
            .await?
        {
            let key: String = row.get(0);
            let value: serde_json::Value =
                serde_json::from_str(row.get::<_, &str>(1)).map_err(CouchError::internal)?;
            let Some(&seq) = key.strip_prefix("role:").and_then(|r| lost_roles.get(r)) else {
                continue;
            };
            for channel in value["admin_channels"].as_array().into_iter().flatten() {
                if let Some(channel) = channel.as_str() {
                    lose(channel.to_owned(), seq);
                }
            }
        }
        for row in client
            .query(
                "SELECT grantee, channel FROM docs.access \
                 WHERE db = $1 AND grantee = ANY($2) AND revoked_seq IS NULL",
                &[&db, &keys],
            )
            .await?
        {
            let grantee: String = row.get(0);
            if let Some(&seq) = grantee
                .strip_prefix("role:")
                .and_then(|r| lost_roles.get(r))
            {
                lose(row.get(1), seq);
            }
        }
    }
    let mut grantees: Vec<String> = roles
        .iter()
        .chain(lost_roles.keys())
        .map(|r| format!("role:{r}"))
        .collect();
    grantees.push(name.to_owned());
    for row in client
        .query(
            "SELECT channel, max(revoked_seq) FROM docs.access \
             WHERE db = $1 AND grantee = ANY($2) AND revoked_seq IS NOT NULL GROUP BY channel",
            &[&db, &grantees],
        )
        .await?
    {
        lose(row.get(0), row.get(1));
    }
    Ok(out)
}

/// One document a user lost after `since`: the sequence of the loss, its id, the stored
/// document and the lost channels it is in.
pub struct Removed {
    /// The sequence of the loss (the latest, if it is in several lost channels).
    pub seq: i64,
    /// The document id.
    pub key: String,
    /// The stored document.
    pub stored: StoredDoc,
    /// The lost channels it is in.
    pub channels: Vec<String>,
}

/// The documents in the channels lost after `since` that no channel in `visible` still shows,
/// oldest loss first.
pub async fn removed_since(
    client: &Object,
    db: &str,
    since: i64,
    lost: &BTreeMap<String, i64>,
    visible: &[String],
    doc_ids: Option<&Vec<String>>,
) -> Result<Vec<Removed>, CouchError> {
    let (names, seqs): (Vec<&String>, Vec<i64>) = lost
        .iter()
        .filter(|(_, seq)| **seq > since)
        .map(|(name, seq)| (name, *seq))
        .unzip();
    if names.is_empty() {
        return Ok(Vec::new());
    }
    let rows = client
        .query(
            "SELECT c.key, k.value, l.seq, c.channel \
             FROM unnest($2::text[], $3::bigint[]) AS l(channel, seq) \
             JOIN docs.channels c ON c.db = $1 AND c.channel = l.channel AND NOT c.removed \
             JOIN docs.kv k ON k.db = $1 AND k.key = c.key AND k.seq IS NOT NULL \
             WHERE ($5::text[] IS NULL OR c.key = ANY($5)) AND NOT EXISTS ( \
               SELECT 1 FROM docs.channels v \
               WHERE v.db = $1 AND v.key = c.key AND v.channel = ANY($4) AND NOT v.removed)",
            &[&db, &names, &seqs, &visible, &doc_ids],
        )
        .await?;
    let mut by_key: BTreeMap<String, Removed> = BTreeMap::new();
    for row in rows {
        let key: String = row.get(0);
        let seq: i64 = row.get(2);
        let channel: String = row.get(3);
        match by_key.get_mut(&key) {
            Some(found) => {
                found.seq = found.seq.max(seq);
                found.channels.push(channel);
            }
            None => {
                let stored = StoredDoc::parse(row.get(1))?;
                by_key.insert(
                    key.clone(),
                    Removed {
                        seq,
                        key,
                        stored,
                        channels: vec![channel],
                    },
                );
            }
        }
    }
    let mut out: Vec<Removed> = by_key.into_values().collect();
    for removed in &mut out {
        removed.channels.sort();
    }
    out.sort_by(|a, b| a.seq.cmp(&b.seq).then_with(|| a.key.cmp(&b.key)));
    Ok(out)
}
