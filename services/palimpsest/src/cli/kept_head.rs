//! An auditor's kept head: `palimpsest audit head --save FILE` and `audit verify --since FILE`.
//!
//! A kept head is a signed tree head, the log's public key, and the leaves it covers (32 bytes
//! each, base64): the head proves what the log was, and the leaves let a later check name the
//! first position that differs even when the log was restored from a backup and grew again
//! (decision 0024). It is saved only after every leaf it covers was recomputed from its event
//! and found signed by the appender.

use crate::config::Settings;
use anyhow::{Context, bail};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::VerifyingKey;
use palimpsest_events::merkle::{self, Hash};
use palimpsest_events::tree_head::{LogKey, SignedTreeHead};
use palimpsest_log::EventStore;
use palimpsest_log::tree::{proof, since};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The file's `format`.
const FORMAT: &str = "palimpsest-kept-head-v1";

/// What `audit head --save` writes.
#[derive(Debug, Serialize, Deserialize)]
pub struct KeptHead {
    /// Always [`FORMAT`].
    pub format: String,
    /// The log's key when the head was kept.
    pub key: LogKey,
    /// The head.
    pub head: SignedTreeHead,
    /// The leaves of positions `1..=tree_size`, concatenated, base64.
    pub leaves: String,
}

impl KeptHead {
    /// Reads `file` and checks it holds together: its format, the head's signature by its
    /// key, and its leaves' root as the head's.
    pub fn load(file: &Path) -> anyhow::Result<(KeptHead, VerifyingKey, Vec<Hash>)> {
        let text = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
        let kept: KeptHead = serde_json::from_slice(&text)
            .with_context(|| format!("{} is not a kept head", file.display()))?;
        if kept.format != FORMAT {
            bail!(
                "{}: format {:?}, expected {FORMAT}",
                file.display(),
                kept.format
            );
        }
        let key = kept
            .key
            .verifying_key()
            .context("the kept key is not an Ed25519 key")?;
        if !kept.head.verify(&key) {
            bail!(
                "{}: the head's signature does not verify with its key",
                file.display()
            );
        }
        let bytes = STANDARD
            .decode(&kept.leaves)
            .context("leaves are not base64")?;
        let leaves: Vec<Hash> = bytes
            .chunks_exact(32)
            .map(|c| c.try_into().unwrap_or([0u8; 32]))
            .collect();
        if bytes.len() % 32 != 0
            || leaves.len() as u64 != kept.head.head.tree_size
            || merkle::root(&leaves) != kept.head.head.root_hash
        {
            bail!(
                "{}: the kept leaves are not those of the head",
                file.display()
            );
        }
        Ok((kept, key, leaves))
    }
}

/// The log's public key: `--key` (hex, as `GET /v1/log/key` gives it), else the half of the
/// key kept in `<data-dir>/log-signing-key`. Never generates one: an auditor checks with the
/// key the log signed with.
pub fn public_key(settings: &Settings, given: Option<&str>) -> anyhow::Result<VerifyingKey> {
    if let Some(hex) = given {
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(hex.trim(), &mut bytes).context("--key is not 64 hex digits")?;
        return VerifyingKey::from_bytes(&bytes).context("--key is not an Ed25519 key");
    }
    let file = settings.data_dir.join("log-signing-key");
    if !file.exists() && settings.log_signing_key.is_none() {
        bail!(
            "no --key given and no {}: give the log's public key (GET /v1/log/key)",
            file.display()
        );
    }
    Ok(settings.log_signer()?.verifying_key())
}

/// `audit head --save FILE`: keeps the latest signed head, after checking every leaf it covers.
pub async fn save(store: &EventStore, key: VerifyingKey, file: &Path) -> anyhow::Result<()> {
    let client = store.pool().get().await?;
    let Some(head) = proof::head(&client, store.log_id(), None).await? else {
        bail!("the log has no signed head yet (is the tree maker running?)");
    };
    if !head.verify(&key) {
        bail!("the latest head is not signed by the log's key");
    }
    let size = head.head.tree_size as usize;
    let now = since::leaves(&client, &key).await?;
    if let Some(fault) = now.fault.as_ref().filter(|f| f.position as usize <= size) {
        bail!("not kept: position {}: {}", fault.position, fault.reason);
    }
    if now.leaves.len() < size || merkle::root(&now.leaves[..size]) != head.head.root_hash {
        bail!("not kept: the latest head is not the root of the log's events");
    }
    let kept = KeptHead {
        format: FORMAT.into(),
        key: LogKey {
            log_id: store.log_id(),
            algorithm: "ed25519".into(),
            public_key: key.to_bytes(),
            unsigned_until: palimpsest_log::tree::maker::origin(&client).await?,
        },
        leaves: STANDARD.encode(now.leaves[..size].concat()),
        head,
    };
    let written = serde_json::to_vec_pretty(&kept)?;
    std::fs::write(file, written).with_context(|| format!("writing {}", file.display()))?;
    println!(
        "kept the head of {} events (root {}) in {}",
        size,
        hex::encode(kept.head.head.root_hash),
        file.display()
    );
    Ok(())
}

/// `audit verify --since FILE`: the log against a kept head. Gives the first fault as an
/// error naming its position.
pub async fn verify_since(
    store: &EventStore,
    key: Option<VerifyingKey>,
    file: &Path,
) -> anyhow::Result<()> {
    let (kept, kept_key, leaves) = KeptHead::load(file)?;
    if key.is_some_and(|k| k != kept_key) {
        bail!("the log's key is not the one the kept head was signed with");
    }
    if kept.key.log_id != store.log_id() {
        bail!(
            "the kept head is of log {}, this is log {}",
            kept.key.log_id,
            store.log_id()
        );
    }
    let client = store.pool().get().await?;
    let report =
        since::verify_since(&client, &kept_key, store.log_id(), &kept.head, &leaves).await?;
    println!(
        "checked {} events against the head kept at {} events",
        report.events, report.kept_size
    );
    if let Some(fault) = report.fault {
        bail!("position {}: {}", fault.position, fault.reason);
    }
    if let Some(latest) = report.latest {
        extends(&client, &kept.head, &latest).await?;
        println!(
            "the latest head ({} events) extends the kept one (consistency proof checked)",
            latest.head.tree_size
        );
    }
    Ok(())
}

/// Checks the stored tree's consistency proof from the kept head to the latest.
async fn extends(
    client: &deadpool_postgres::Object,
    kept: &SignedTreeHead,
    latest: &SignedTreeHead,
) -> anyhow::Result<()> {
    let (from, to) = (kept.head.tree_size, latest.head.tree_size);
    if to < from {
        bail!(
            "position {}: the latest head covers {to} events, the kept {from}",
            to + 1
        );
    }
    let proof = proof::consistency(client, from, to).await?;
    let hashes = proof
        .proof
        .iter()
        .map(|h| {
            let mut out = [0u8; 32];
            hex::decode_to_slice(h, &mut out).map(|_| out)
        })
        .collect::<Result<Vec<Hash>, _>>()?;
    let (a, b) = (&kept.head.root_hash, &latest.head.root_hash);
    if !merkle::verify_consistency(from, to, a, b, &hashes) {
        bail!("the latest head does not extend the kept one: the consistency proof fails");
    }
    Ok(())
}
