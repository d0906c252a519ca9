//! Creating pads: `createPad`, `createGroupPad`, and the implicit creation Etherpad performs when
//! a missing pad is written to (a chat message, a copy without history).

use super::revision::append_revision;
use crate::author::Authors;
use crate::changes;
use crate::error::DomainError;
use crate::group::Group;
use crate::outcome::Outcome;
use crate::pad::{NewRevision, Pad};
use palimpsest_events::pads::{GroupEvent, PadEvent};

/// Etherpad's `settings.defaultPadText`, the text of a pad created without one.
pub const DEFAULT_TEXT: &str = "Welcome to Etherpad!\n\nThis pad text is synchronized as you type, so that everyone viewing this page sees the same text. This allows you to collaborate seamlessly on documents!\n\nEtherpad on Github: https://github.com/ether/etherpad-lite";

/// Longest initial text Etherpad accepts (UTF-16 units).
pub const MAX_INITIAL_TEXT: usize = 100_000;

/// Etherpad's `cleanText`: Windows and old Mac line breaks become `\n`, a tab eight spaces, a
/// no-break space a space.
pub fn clean_text(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "        ")
        .replace('\u{a0}', " ")
}

/// Gives `pad` (which must not exist) its first revision: `text` inserted before the blank
/// pad's newline, or the cleaned default text when `text` is `None` (Etherpad's `Pad.init`).
pub fn create(
    pad: &mut Pad,
    text: Option<&str>,
    author: &str,
    now: i64,
    authors: &mut Authors,
    outcome: &mut Outcome,
) -> Result<(), DomainError> {
    let text = match text {
        Some(t) => {
            if t.encode_utf16().count() > MAX_INITIAL_TEXT {
                return Err(DomainError::TextTooLong);
            }
            t.to_owned()
        }
        None => clean_text(DEFAULT_TEXT),
    };
    let created = PadEvent::PadCreated {
        pad_id: pad.id.clone(),
    };
    pad.apply(&created);
    outcome.pad(&pad.id.clone(), created);
    let changeset = changes::make_splice("\n", 0, 0, &text)
        .map_err(|e| DomainError::BadChangeset(e.to_string()))?;
    append_revision(
        pad,
        NewRevision {
            changeset,
            new_attributes: Vec::new(),
            author: author.to_owned(),
            now,
        },
        authors,
        outcome,
    )?;
    Ok(())
}

/// `createPad(padID, text, authorId)` on a pad outside any group.
pub fn create_pad(
    pad: &Pad,
    text: Option<&str>,
    author: &str,
    now: i64,
    mut authors: Authors,
) -> Result<Outcome, DomainError> {
    if pad.exists {
        return Err(DomainError::PadExists);
    }
    let mut outcome = Outcome::none();
    create(
        &mut pad.clone(),
        text,
        author,
        now,
        &mut authors,
        &mut outcome,
    )?;
    Ok(outcome)
}

/// `createGroupPad(groupID, padName, text, authorId)`: the pad `groupID$padName`, listed in the
/// group.
pub fn create_group_pad(
    group_id: &str,
    group: &Group,
    pad: &Pad,
    text: Option<&str>,
    author: &str,
    now: i64,
    mut authors: Authors,
) -> Result<Outcome, DomainError> {
    if !group.exists {
        return Err(DomainError::GroupMissing);
    }
    if pad.exists {
        return Err(DomainError::PadNameExists);
    }
    let mut outcome = Outcome::none();
    create(
        &mut pad.clone(),
        text,
        author,
        now,
        &mut authors,
        &mut outcome,
    )?;
    outcome.group(
        group_id,
        GroupEvent::GroupPadAdded {
            pad_id: pad.id.clone(),
        },
    );
    Ok(outcome)
}
