//! Appending a revision, Etherpad's `Pad.appendRevision`: the changeset is applied to the head;
//! a change that leaves text and attributes as they were makes no revision (except a pad's
//! first); the author's attribute joins the pool and the author is linked to the pad.

use crate::author::Authors;
use crate::changes;
use crate::error::DomainError;
use crate::outcome::Outcome;
use crate::pad::{NewRevision, Pad};
use palimpsest_events::pads::PadEvent;

/// Appends `rev` to `pad` (a scratch copy the command keeps changing), recording the events in
/// `outcome`. Returns the pad's head afterwards and whether a revision was made.
pub fn append_revision(
    pad: &mut Pad,
    rev: NewRevision,
    authors: &mut Authors,
    outcome: &mut Outcome,
) -> Result<(i64, bool), DomainError> {
    let mut pool = pad.pool.clone();
    for (k, v) in &rev.new_attributes {
        pool.put_attrib(k, v);
    }
    let atext = changes::apply_to_atext(&rev.changeset, &pad.atext, &pool)
        .map_err(|e| DomainError::BadChangeset(e.to_string()))?;
    if atext == pad.atext && pad.head != -1 {
        return Ok((pad.head, false));
    }
    if !rev.author.is_empty() {
        pool.put_attrib("author", &rev.author);
    }
    pad.atext = atext;
    pad.pool = pool;
    pad.head += 1;
    outcome.pad(
        &pad.id,
        PadEvent::RevisionAppended {
            rev: pad.head,
            changeset: rev.changeset,
            author: rev.author.clone(),
            timestamp: rev.now,
            new_attributes: rev.new_attributes,
        },
    );
    authors.link(&rev.author, &pad.id, outcome);
    Ok((pad.head, true))
}
