//! Appending a revision, Etherpad's `Pad.appendRevision`: the changeset is applied to the head;
//! a change that leaves text and attributes as they were makes no revision (except a pad's
//! first); the author's attribute joins the pool and the author is linked to the pad.

use super::{Authors, Decision, DomainError, Pad};
use crate::changes;
use palimpsest_events::pads::{Attribute, PadEvent};

/// A revision to append.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewRevision {
    /// The changeset, against the pad's pool once `new_attributes` are in it.
    pub changeset: String,
    /// Attributes to put into the pool before applying (from a submitted changeset's pool).
    pub new_attributes: Vec<Attribute>,
    /// The author id, or `""`.
    pub author: String,
    /// When (ms).
    pub now: i64,
}

/// Appends `rev` to `pad` (a scratch copy the command keeps changing), recording the events in
/// `d`. Returns the pad's head afterwards and whether a revision was made.
pub fn append_revision(
    pad: &mut Pad,
    rev: NewRevision,
    authors: &mut Authors,
    d: &mut Decision,
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
    d.pad(
        &pad.id,
        PadEvent::RevisionAppended {
            rev: pad.head,
            changeset: rev.changeset,
            author: rev.author.clone(),
            timestamp: rev.now,
            new_attributes: rev.new_attributes,
        },
    );
    authors.link(&rev.author, &pad.id, d);
    Ok((pad.head, true))
}
