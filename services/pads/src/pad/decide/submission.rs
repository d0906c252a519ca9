//! A changeset submitted by an editing client against a base revision (Etherpad's
//! `handleUserChanges`): checked, moved into the pad's pool, transformed with `follow` over every
//! revision since its base so that concurrent writers both land, then appended.

use super::revision::append_revision;
use crate::author::Authors;
use crate::changes::{self, OpCode};
use crate::error::DomainError;
use crate::outcome::Outcome;
use crate::pad::{NewRevision, Pad, Recorded, Submission};
use palimpsest_events::pads::Attribute;

/// The line attributes that may only sit on a line's first character (Etherpad's
/// `AttributeManager.lineAttributes`).
const LINE_ATTRIBUTES: [&str; 2] = ["lmkr", "list"];

/// Etherpad's `_correctMarkersInPad`: a changeset removing line markers that are not at the start
/// of a line, if there are any.
fn marker_correction(pad: &Pad) -> Result<Option<String>, changes::Error> {
    let text: Vec<u16> = pad.atext.text.encode_utf16().collect();
    let mut bad = Vec::new();
    let mut offset = 0usize;
    for op in changes::parse_ops(&pad.atext.attribs)? {
        let attribs = changes::AttributeMap::from_attribs(&op.attribs, &pad.pool)?;
        if LINE_ATTRIBUTES.iter().any(|a| attribs.get(a).is_some()) {
            for _ in 0..op.chars {
                if offset > 0 && text.get(offset - 1) != Some(&u16::from(b'\n')) {
                    bad.push(offset);
                }
                offset += 1;
            }
        } else {
            offset += op.chars;
        }
    }
    if bad.is_empty() {
        return Ok(None);
    }
    let mut ops = Vec::new();
    let mut from = 0usize;
    for pos in bad {
        let kept = String::from_utf16_lossy(&text[from..pos]);
        ops.extend(changes::ops_from_text(OpCode::Keep, &kept, ""));
        ops.push(changes::Op::new(OpCode::Remove, 1, 0));
        from = pos + 1;
    }
    changes::pack_ops(text.len(), ops, String::new()).map(Some)
}

/// Etherpad's checks of a submission before anything is applied: the pad exists, the base is
/// one of its revisions, every revision since was read, and every `author` attribute of the
/// changeset names the submitting author. Returns the parsed changeset.
fn check_submission(
    pad: &Pad,
    submission: &Submission,
    since: &[Recorded],
) -> Result<changes::Changeset, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    if submission.base_rev < 0 || submission.base_rev > pad.head {
        return Err(DomainError::BadChangeset(format!(
            "baseRev {} is not a revision of the pad (head is {})",
            submission.base_rev, pad.head
        )));
    }
    if since.len() as i64 != pad.head - submission.base_rev {
        return Err(DomainError::BadChangeset(
            "the revisions since baseRev could not be read".into(),
        ));
    }
    let parsed = changes::Changeset::parse(&submission.changeset).map_err(bad)?;
    for op in &parsed.ops {
        let attribs =
            changes::AttributeMap::from_attribs(&op.attribs, &submission.pool).map_err(bad)?;
        if let Some(who) = attribs.get("author")
            && !who.is_empty()
            && who != submission.author
        {
            return Err(DomainError::BadChangeset(format!(
                "Author {} tried to submit changes as author {} in changeset {}",
                submission.author, who, submission.changeset
            )));
        }
    }
    Ok(parsed)
}

/// The submitted changeset moved into the pad's pool and followed over every revision `since`
/// its base (a revision that is the same change by the same author counts as this one, already
/// applied), so that it applies to the head. Returns it with the attributes it adds to the pool.
fn rebase(
    pad: &Pad,
    submission: &Submission,
    parsed: &changes::Changeset,
    since: &[Recorded],
) -> Result<(String, Vec<Attribute>), DomainError> {
    let mut pool = pad.pool.clone();
    let before = pool.next_num();
    let mut rebased =
        changes::move_ops_to_new_pool(&submission.changeset, &submission.pool, &mut pool)
            .map_err(bad)?;
    let new_attributes: Vec<_> = pool
        .iter()
        .filter(|(n, _, _)| *n >= before)
        .map(|(_, k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    for r in since {
        if r.changeset == submission.changeset && r.author == submission.author {
            rebased = changes::identity(parsed.old_len);
        }
        rebased = changes::follow(&r.changeset, &rebased, false, &pool).map_err(bad)?;
    }
    let text_len = changes::text_length(&pad.atext.text);
    let old_len = changes::Changeset::unpack(&rebased).map_err(bad)?.old_len;
    if old_len != text_len {
        return Err(DomainError::BadChangeset(format!(
            "Can't apply changeset {rebased} with oldLen {old_len} to document of length {text_len}"
        )));
    }
    Ok((rebased, new_attributes))
}

/// An easysync failure, as the refusal of a submitted changeset.
fn bad(e: changes::Error) -> DomainError {
    DomainError::BadChangeset(e.to_string())
}

/// Applies a client's changeset. `since` holds the revisions `base_rev + 1 ..= head`, read by the
/// caller. Returns the outcome and the revision the client's change became.
pub fn submit_changeset(
    pad: &Pad,
    submission: Submission,
    since: &[Recorded],
    mut authors: Authors,
) -> Result<(Outcome, i64), DomainError> {
    let parsed = check_submission(pad, &submission, since)?;
    let (rebased, new_attributes) = rebase(pad, &submission, &parsed, since)?;
    let mut outcome = Outcome::none();
    let mut scratch = pad.clone();
    let (new_rev, _) = append_revision(
        &mut scratch,
        NewRevision {
            changeset: rebased,
            new_attributes,
            author: submission.author.clone(),
            now: submission.now,
        },
        &mut authors,
        &mut outcome,
    )?;
    if let Some(correction) = marker_correction(&scratch).map_err(bad)? {
        append_revision(
            &mut scratch,
            NewRevision {
                changeset: correction,
                new_attributes: Vec::new(),
                author: submission.author.clone(),
                now: submission.now,
            },
            &mut authors,
            &mut outcome,
        )?;
    }
    if !scratch.atext.text.ends_with('\n') {
        let len = changes::text_length(&scratch.atext.text);
        let changeset = changes::make_splice(&scratch.atext.text, len.saturating_sub(1), 0, "\n")
            .map_err(bad)?;
        append_revision(
            &mut scratch,
            NewRevision {
                changeset,
                new_attributes: Vec::new(),
                author: submission.author,
                now: submission.now,
            },
            &mut authors,
            &mut outcome,
        )?;
    }
    Ok((outcome, new_rev))
}
