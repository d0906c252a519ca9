//! What `palimpsest audit verify --since` and `audit head --save` check, from the database:
//! every leaf recomputed from its event, every batch signature, and the leaves a kept head
//! covers. The first position that was altered, removed or reordered is named.

use super::maker::{Refusal, batches, check, origin};
use super::proof;
use crate::LogError;
use crate::store::read_all_with;
use deadpool_postgres::GenericClient;
use ed25519_dalek::VerifyingKey;
use palimpsest_events::merkle::{self, Hash};
use palimpsest_events::tree_head::SignedTreeHead;
use serde::Serialize;
use uuid::Uuid;

/// Events read per query.
const PAGE: i64 = 4096;

/// The log's leaves, recomputed, and the first position that does not hold.
#[derive(Debug, Clone, Default)]
pub struct Leaves {
    /// The leaf of each position from 1, up to the first fault.
    pub leaves: Vec<Hash>,
    /// The first position that is missing, edited, or not signed by the appender.
    pub fault: Option<Refusal>,
}

/// Recomputes every leaf of the log and checks each batch signature with `key`.
pub async fn leaves(client: &impl GenericClient, key: &VerifyingKey) -> Result<Leaves, LogError> {
    let origin = origin(client).await?;
    let mut out = Leaves::default();
    let mut limit = PAGE;
    loop {
        let after = out.leaves.len() as u64;
        let events = read_all_with(client, after as i64, limit).await?;
        let Some(last) = events.last().map(|e| e.position as u64) else {
            return Ok(out);
        };
        let signed = batches(client, after, last).await?;
        let checked = check(&events, &signed, after, origin, key);
        let complete = (events.len() as i64) < limit;
        out.leaves.extend(checked.leaves.iter().copied());
        if let Some(fault) = checked.refused {
            out.fault = Some(fault);
            return Ok(out);
        }
        if let Some((first, end)) = checked.pending.filter(|_| complete) {
            out.fault = Some(Refusal {
                position: last + 1,
                reason: format!(
                    "position {} is missing: batch {first}..{end} was signed with it",
                    last + 1
                ),
            });
            return Ok(out);
        }
        if complete && checked.pending.is_none() {
            return Ok(out);
        }
        limit = if checked.leaves.is_empty() {
            limit * 2
        } else {
            PAGE
        };
    }
}

/// What `verify --since` found.
#[derive(Debug, Clone, Serialize)]
pub struct SinceReport {
    /// Events in the log now.
    pub events: u64,
    /// The size of the head kept.
    pub kept_size: u64,
    /// The server's latest signed head, if any.
    pub latest: Option<SignedTreeHead>,
    /// The first position altered, removed or reordered since the kept head, or not signed.
    pub fault: Option<Refusal>,
}

/// Checks the log against a head kept before (`kept`, with the leaves it covers).
pub async fn verify_since(
    client: &impl GenericClient,
    key: &VerifyingKey,
    log_id: Uuid,
    kept: &SignedTreeHead,
    kept_leaves: &[Hash],
) -> Result<SinceReport, LogError> {
    let now = leaves(client, key).await?;
    let latest = proof::head(client, log_id, None).await?;
    let mut fault = against_kept(&now.leaves, kept_leaves);
    if let Some(f) = now.fault
        && fault.as_ref().is_none_or(|k| f.position <= k.position)
    {
        fault = Some(f);
    }
    if fault.is_none()
        && let Some(head) = &latest
    {
        fault = head_fault(head, key, &now.leaves);
    }
    Ok(SinceReport {
        events: now.leaves.len() as u64,
        kept_size: kept.head.tree_size,
        latest,
        fault,
    })
}

/// The first position where the log's leaves differ from those kept, or end before them.
pub fn against_kept(now: &[Hash], kept: &[Hash]) -> Option<Refusal> {
    if let Some(i) = (0..kept.len().min(now.len())).find(|&i| now[i] != kept[i]) {
        return Some(Refusal {
            position: i as u64 + 1,
            reason: format!(
                "position {}: the event is not the one the kept head covers (altered, \
                 removed with later positions renumbered, or reordered)",
                i + 1
            ),
        });
    }
    (now.len() < kept.len()).then(|| Refusal {
        position: now.len() as u64 + 1,
        reason: format!(
            "position {} is gone: the kept head covers {} events, the log holds {}",
            now.len() + 1,
            kept.len(),
            now.len()
        ),
    })
}

/// Whether the server's latest head is signed by `key` and is the root of the log's leaves.
fn head_fault(head: &SignedTreeHead, key: &VerifyingKey, leaves: &[Hash]) -> Option<Refusal> {
    let size = head.head.tree_size as usize;
    if !head.verify(key) {
        return Some(Refusal {
            position: size as u64,
            reason: format!("the latest head (size {size}) is not signed by the log's key"),
        });
    }
    if size > leaves.len() {
        return Some(Refusal {
            position: leaves.len() as u64 + 1,
            reason: format!(
                "the latest head covers {size} events; the log holds {} that verify",
                leaves.len()
            ),
        });
    }
    (merkle::root(&leaves[..size]) != head.head.root_hash).then(|| Refusal {
        position: size as u64,
        reason: format!("the latest head's root (size {size}) is not the root of the log's events"),
    })
}
