//! Deleting, copying and moving pads (Etherpad's `Pad.remove`, `Pad.copy`,
//! `Pad.copyPadWithoutHistory`, `movePad`). Each is one decision over every stream it touches:
//! the pads, their groups and their authors.

use super::pad_creation::create;
use super::revision::{NewRevision, append_revision};
use super::{Authors, Decision, DomainError, Groups, Pad, attributes_of};
use crate::changes;
use crate::ids::group_of_pad;
use palimpsest_events::pads::{PAD, PadEvent};

/// The pads, groups and authors a copy or move works on.
#[derive(Debug, Clone)]
pub struct Transfer {
    /// The pad copied or moved.
    pub source: Pad,
    /// The pad it goes to (possibly existing).
    pub destination: Pad,
    /// The groups of both pads.
    pub groups: Groups,
    /// The authors of both pads.
    pub authors: Authors,
    /// Whether an existing destination is replaced.
    pub force: bool,
}

/// Etherpad's `Pad.remove`: the pad leaves its group, its authors forget it, and the pad with
/// its revisions, chat and read-only id is deleted.
fn remove(pad: &mut Pad, groups: &mut Groups, authors: &mut Authors, d: &mut Decision) {
    let id = pad.id.clone();
    let pad_authors = pad.authors();
    let deleted = PadEvent::PadDeleted { pad_id: id.clone() };
    pad.apply(&deleted);
    d.pad(&id, deleted);
    if let Some(group_id) = group_of_pad(&id) {
        groups.remove_pad(group_id, &id, d);
    }
    for author in pad_authors {
        authors.unlink(&author, &id, d);
    }
}

/// Removes one pad of a group being deleted.
pub(super) fn remove_for_group(
    pad: &mut Pad,
    groups: &mut Groups,
    authors: &mut Authors,
    d: &mut Decision,
) {
    remove(pad, groups, authors, d);
}

/// `deletePad(padID)`.
pub fn delete_pad(
    pad: &Pad,
    mut groups: Groups,
    mut authors: Authors,
) -> Result<Decision, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    let mut d = Decision::none();
    remove(&mut pad.clone(), &mut groups, &mut authors, &mut d);
    Ok(d)
}

/// The checks and clearing every copy starts with: the source exists, the destination's group
/// exists, an existing destination is refused or (with `force`) removed.
fn prepare(t: &mut Transfer, d: &mut Decision) -> Result<(), DomainError> {
    if !t.source.exists {
        return Err(DomainError::PadMissing);
    }
    if t.source.id == t.destination.id {
        return Err(DomainError::SamePad);
    }
    if let Some(group_id) = group_of_pad(&t.destination.id)
        && !t.groups.exists(group_id)
    {
        return Err(DomainError::DestinationGroupMissing);
    }
    if t.destination.exists {
        if !t.force {
            return Err(DomainError::DestinationExists);
        }
        remove(&mut t.destination, &mut t.groups, &mut t.authors, d);
    }
    d.check(PAD, &t.source.id);
    Ok(())
}

/// Links the source's authors to the destination and lists the destination in its group.
fn adopt(t: &mut Transfer, d: &mut Decision) {
    let dest = t.destination.id.clone();
    for author in t.source.authors() {
        t.authors.link(&author, &dest, d);
    }
    if let Some(group_id) = group_of_pad(&dest) {
        t.groups.add_pad(group_id, &dest, d);
    }
}

/// Copies the source with its whole history onto the destination.
fn copy_into(t: &mut Transfer, d: &mut Decision) -> Result<(), DomainError> {
    prepare(t, d)?;
    let copied = PadEvent::PadCopied {
        source_id: t.source.id.clone(),
        snapshot: t.source.snapshot(),
    };
    t.destination.apply(&copied);
    d.pad(&t.destination.id, copied);
    adopt(t, d);
    Ok(())
}

/// `copyPad(sourceID, destinationID, force)`.
pub fn copy_pad(mut t: Transfer) -> Result<Decision, DomainError> {
    let mut d = Decision::none();
    copy_into(&mut t, &mut d)?;
    Ok(d)
}

/// `movePad(sourceID, destinationID, force)`: a copy, then the source's removal.
pub fn move_pad(mut t: Transfer) -> Result<Decision, DomainError> {
    let mut d = Decision::none();
    copy_into(&mut t, &mut d)?;
    remove(&mut t.source, &mut t.groups, &mut t.authors, &mut d);
    Ok(d)
}

/// `copyPadWithoutHistory(sourceID, destinationID, force, authorId)`: a new pad whose first
/// revisions recreate the source's text and attributes. As in Etherpad, the new pad starts as
/// `"\n\n"` and the copied text is inserted before those two newlines, so it ends with one more
/// newline than the source; the changeset recorded here states its lengths correctly.
pub fn copy_pad_without_history(
    mut t: Transfer,
    author: &str,
    now: i64,
) -> Result<Decision, DomainError> {
    let mut d = Decision::none();
    prepare(&mut t, &mut d)?;
    adopt(&mut t, &mut d);
    let mut dest = t.destination.clone();
    create(&mut dest, Some("\n"), author, now, &mut t.authors, &mut d)?;
    let pool = attributes_of(&t.source.pool);
    let replaced = PadEvent::AttributePoolReplaced { pool };
    dest.apply(&replaced);
    d.pad(&dest.id.clone(), replaced);
    let changeset =
        changes::insert_before_blank(&t.source.atext, changes::text_length(&dest.atext.text))
            .map_err(|e| DomainError::BadChangeset(e.to_string()))?;
    append_revision(
        &mut dest,
        NewRevision {
            changeset,
            new_attributes: Vec::new(),
            author: author.to_owned(),
            now,
        },
        &mut t.authors,
        &mut d,
    )?;
    Ok(d)
}
