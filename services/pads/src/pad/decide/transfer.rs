//! Deleting, copying and moving pads (Etherpad's `Pad.remove`, `Pad.copy`,
//! `Pad.copyPadWithoutHistory`, `movePad`). Each is one decision over every stream it touches:
//! the pads, their groups and their authors.

use super::creation::create;
use super::revision::append_revision;
use crate::author::Authors;
use crate::changes;
use crate::error::DomainError;
use crate::group::Groups;
use crate::ids::group_of_pad;
use crate::outcome::Outcome;
use crate::pad::{NewRevision, Pad, Transfer, attributes_of};
use palimpsest_events::pads::{PAD, PadEvent};

/// Etherpad's `Pad.remove`: the pad leaves its group, its authors forget it, and the pad with
/// its revisions, chat and read-only id is deleted.
fn remove(pad: &mut Pad, groups: &mut Groups, authors: &mut Authors, outcome: &mut Outcome) {
    let id = pad.id.clone();
    let pad_authors = pad.authors();
    let deleted = PadEvent::PadDeleted { pad_id: id.clone() };
    pad.apply(&deleted);
    outcome.pad(&id, deleted);
    if let Some(group_id) = group_of_pad(&id) {
        groups.remove_pad(group_id, &id, outcome);
    }
    for author in pad_authors {
        authors.unlink(&author, &id, outcome);
    }
}

/// Removes one pad of a group being deleted.
pub(crate) fn remove_for_group(
    pad: &mut Pad,
    groups: &mut Groups,
    authors: &mut Authors,
    outcome: &mut Outcome,
) {
    remove(pad, groups, authors, outcome);
}

/// `deletePad(padID)`.
pub fn delete_pad(
    pad: &Pad,
    mut groups: Groups,
    mut authors: Authors,
) -> Result<Outcome, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    let mut outcome = Outcome::none();
    remove(&mut pad.clone(), &mut groups, &mut authors, &mut outcome);
    Ok(outcome)
}

/// The checks and clearing every copy starts with: the source exists, the destination's group
/// exists, an existing destination is refused or (with `force`) removed.
fn prepare(t: &mut Transfer, outcome: &mut Outcome) -> Result<(), DomainError> {
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
        remove(&mut t.destination, &mut t.groups, &mut t.authors, outcome);
    }
    outcome.check(PAD, &t.source.id);
    Ok(())
}

/// Links the source's authors to the destination and lists the destination in its group.
fn adopt(t: &mut Transfer, outcome: &mut Outcome) {
    let dest = t.destination.id.clone();
    for author in t.source.authors() {
        t.authors.link(&author, &dest, outcome);
    }
    if let Some(group_id) = group_of_pad(&dest) {
        t.groups.add_pad(group_id, &dest, outcome);
    }
}

/// Copies the source with its whole history onto the destination.
fn copy_into(t: &mut Transfer, outcome: &mut Outcome) -> Result<(), DomainError> {
    prepare(t, outcome)?;
    let copied = PadEvent::PadCopied {
        source_id: t.source.id.clone(),
        snapshot: t.source.snapshot(),
    };
    t.destination.apply(&copied);
    outcome.pad(&t.destination.id, copied);
    adopt(t, outcome);
    Ok(())
}

/// `copyPad(sourceID, destinationID, force)`.
pub fn copy_pad(mut t: Transfer) -> Result<Outcome, DomainError> {
    let mut outcome = Outcome::none();
    copy_into(&mut t, &mut outcome)?;
    Ok(outcome)
}

/// `movePad(sourceID, destinationID, force)`: a copy, then the source's removal.
pub fn move_pad(mut t: Transfer) -> Result<Outcome, DomainError> {
    let mut outcome = Outcome::none();
    copy_into(&mut t, &mut outcome)?;
    remove(&mut t.source, &mut t.groups, &mut t.authors, &mut outcome);
    Ok(outcome)
}

/// `copyPadWithoutHistory(sourceID, destinationID, force, authorId)`: a new pad whose first
/// revisions recreate the source's text and attributes. As in Etherpad, the new pad starts as
/// `"\n\n"` and the copied text is inserted before those two newlines, so it ends with one more
/// newline than the source; the changeset recorded here states its lengths correctly.
pub fn copy_pad_without_history(
    mut t: Transfer,
    author: &str,
    now: i64,
) -> Result<Outcome, DomainError> {
    let mut outcome = Outcome::none();
    prepare(&mut t, &mut outcome)?;
    adopt(&mut t, &mut outcome);
    let mut dest = t.destination.clone();
    create(
        &mut dest,
        Some("\n"),
        author,
        now,
        &mut t.authors,
        &mut outcome,
    )?;
    let pool = attributes_of(&t.source.pool);
    let replaced = PadEvent::AttributePoolReplaced { pool };
    dest.apply(&replaced);
    outcome.pad(&dest.id.clone(), replaced);
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
        &mut outcome,
    )?;
    Ok(outcome)
}
