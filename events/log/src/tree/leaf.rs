//! An event's leaf, recomputed from what the event holds: its chain hash from its content and
//! previous hash, then the leaf of its position. A stored `hash` that its content does not
//! give back is an edit, whatever a batch signature says.

use palimpsest_events::RecordedEvent;
use palimpsest_events::canonical::chain_hash;
use palimpsest_events::merkle::{self, Hash};

/// The leaf of `event`, or why its stored hash cannot stand.
pub fn recompute(event: &RecordedEvent) -> Result<Hash, String> {
    let previous = match &event.prev_hash {
        None => None,
        Some(h) => Some(decode(h).ok_or("its previous hash is not 32 bytes of hex")?),
    };
    let recomputed = chain_hash(previous.as_ref(), &event.canonical_content());
    if hex::encode(recomputed) != event.hash {
        return Err("its hash does not match its content: it was edited".into());
    }
    Ok(merkle::event_leaf(event.position as u64, &recomputed))
}

fn decode(h: &str) -> Option<Hash> {
    hex::decode(h).ok()?.try_into().ok()
}
