//! Changing a pad's text through the API: `setText`, `appendText` (Etherpad's `spliceText`) and
//! `restoreRevision`.

use super::creation::clean_text;
use super::revision::append_revision;
use crate::author::Authors;
use crate::changes::{self, OpCode};
use crate::error::DomainError;
use crate::outcome::Outcome;
use crate::pad::{NewRevision, Pad};
use palimpsest_events::pads::AText;

/// The UTF-16 unit at index `i` of `s` (JavaScript's `s[i]`).
fn unit_at(s: &str, i: usize) -> Option<u16> {
    s.encode_utf16().nth(i)
}

/// Etherpad's `Pad.spliceText`: removes `ndel` units at `start`, inserts `ins` (cleaned) and
/// keeps the pad ending with a newline. Returns the new head.
pub fn splice_text(
    pad: &mut Pad,
    (start, ndel): (usize, usize),
    ins: &str,
    author: &str,
    now: i64,
    authors: &mut Authors,
    outcome: &mut Outcome,
) -> Result<i64, DomainError> {
    let orig = pad.atext.text.clone();
    let len = changes::text_length(&orig);
    if start + ndel > len {
        return Err(DomainError::BadChangeset(
            "start/delete past the end of the text".into(),
        ));
    }
    let mut ins = clean_text(ins);
    let will_end_with_newline = start + ndel < len
        || ins.ends_with('\n')
        || (ins.is_empty() && start > 0 && unit_at(&orig, start - 1) == Some(u16::from(b'\n')));
    if !will_end_with_newline {
        ins.push('\n');
    }
    if ndel == 0 && ins.is_empty() {
        return Ok(pad.head);
    }
    let changeset = changes::make_splice(&orig, start, ndel, &ins)
        .map_err(|e| DomainError::BadChangeset(e.to_string()))?;
    let (head, _) = append_revision(
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
    Ok(head)
}

/// `setText(padID, text, authorId)`: replaces the whole text.
pub fn set_text(
    pad: &Pad,
    text: &str,
    author: &str,
    now: i64,
    mut authors: Authors,
) -> Result<Outcome, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    let mut outcome = Outcome::none();
    let mut scratch = pad.clone();
    let len = changes::text_length(&scratch.atext.text);
    splice_text(
        &mut scratch,
        (0, len),
        text,
        author,
        now,
        &mut authors,
        &mut outcome,
    )?;
    Ok(outcome)
}

/// `appendText(padID, text, authorId)`: inserts before the pad's final newline.
pub fn append_text(
    pad: &Pad,
    text: &str,
    author: &str,
    now: i64,
    mut authors: Authors,
) -> Result<Outcome, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    let mut outcome = Outcome::none();
    let mut scratch = pad.clone();
    let len = changes::text_length(&scratch.atext.text);
    splice_text(
        &mut scratch,
        (len.saturating_sub(1), 0),
        text,
        author,
        now,
        &mut authors,
        &mut outcome,
    )?;
    Ok(outcome)
}

/// The changeset `restoreRevision` appends: the old revision's text with its attributes
/// inserted, and everything of the current text but its last character (its final newline)
/// removed, so that, as in Etherpad, the pad ends with one more newline than the old revision.
pub fn restoration_changeset(current: &str, old: &AText) -> Result<String, DomainError> {
    let bad = |e: changes::Error| DomainError::BadChangeset(e.to_string());
    let mut ops = Vec::new();
    let mut bank = String::new();
    let mut rest = old.text.as_str();
    for op in changes::parse_ops(&old.attribs).map_err(bad)? {
        let (piece, tail) = changes::split_at_units(rest, op.chars).map_err(bad)?;
        rest = tail;
        ops.extend(changes::ops_from_text(OpCode::Insert, piece, &op.attribs));
        bank.push_str(piece);
    }
    let old_len = changes::text_length(current);
    // Etherpad removes the first `lastNewline` characters as one multi-line operation, which
    // need not end with a newline; the same removal is written here in canonical form (through
    // the last removed newline, then the rest), which applies to the same text.
    let (removed, _) = changes::split_at_units(current, old_len.saturating_sub(1)).map_err(bad)?;
    ops.extend(changes::ops_from_text(OpCode::Remove, removed, ""));
    changes::pack_ops(old_len, ops, bank).map_err(bad)
}

/// `restoreRevision(padID, rev, authorId)`: appends a revision that brings back the text of
/// revision `rev`, whose attributed text the caller read from the store.
pub fn restore_revision(
    pad: &Pad,
    rev: i64,
    old: &AText,
    author: &str,
    now: i64,
    mut authors: Authors,
) -> Result<Outcome, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    if rev > pad.head {
        return Err(DomainError::RevAboveHead);
    }
    let changeset = restoration_changeset(&pad.atext.text, old)?;
    let mut outcome = Outcome::none();
    append_revision(
        &mut pad.clone(),
        NewRevision {
            changeset,
            new_attributes: Vec::new(),
            author: author.to_owned(),
            now,
        },
        &mut authors,
        &mut outcome,
    )?;
    Ok(outcome)
}
