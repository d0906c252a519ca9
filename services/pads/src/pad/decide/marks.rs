//! What is kept about a pad besides its text: saved revisions, the public status and the
//! read-only id.

use crate::error::DomainError;
use crate::outcome::Outcome;
use crate::pad::{ApiAuthor, Pad};
use palimpsest_events::pads::{AuthorEvent, AuthorName, PadEvent, SavedRevision};

/// `saveRevision(padID, rev)`: marks `rev` (the head when `None`) as saved by a new author named
/// `API`, unless it is saved already (the author is created either way, as in Etherpad).
pub fn save_revision(
    pad: &Pad,
    rev: Option<i64>,
    api_author: ApiAuthor,
    saved_id: String,
    now: i64,
) -> Result<Outcome, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    let rev = match rev {
        Some(r) if r > pad.head => return Err(DomainError::RevAboveHead),
        Some(r) => r,
        None => pad.head,
    };
    let mut outcome = Outcome::none();
    outcome.author(
        &api_author.author_id,
        AuthorEvent::AuthorCreated {
            author_id: api_author.author_id.clone(),
            name: AuthorName::Text("API".into()),
            color_id: api_author.color_id,
            timestamp: now,
        },
    );
    if !pad.saved_revisions.iter().any(|s| s.rev_num == rev) {
        outcome.pad(
            &pad.id,
            PadEvent::RevisionSaved {
                saved: SavedRevision {
                    rev_num: rev,
                    saved_by_id: api_author.author_id,
                    label: "Saved through API call".into(),
                    timestamp: now,
                    id: saved_id,
                },
            },
        );
    }
    Ok(outcome)
}

/// `setPublicStatus(padID, publicStatus)`.
pub fn set_public_status(pad: &Pad, public_status: bool) -> Result<Outcome, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    let mut outcome = Outcome::none();
    outcome.pad(&pad.id, PadEvent::PublicStatusSet { public_status });
    Ok(outcome)
}

/// `getReadOnlyID(padID)`: the pad's read-only id, given `candidate` as its id if it has none
/// yet. Returns the decision and the id.
pub fn read_only_id(pad: &Pad, candidate: String) -> Result<(Outcome, String), DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    if let Some(id) = &pad.read_only_id {
        return Ok((Outcome::none(), id.clone()));
    }
    let mut outcome = Outcome::none();
    outcome.pad(
        &pad.id,
        PadEvent::ReadOnlyIdAssigned {
            read_only_id: candidate.clone(),
        },
    );
    Ok((outcome, candidate))
}
