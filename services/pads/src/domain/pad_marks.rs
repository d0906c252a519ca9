//! What is kept about a pad besides its text: saved revisions, the public status and the
//! read-only id.

use super::{Decision, DomainError, Pad};
use palimpsest_events::pads::{AuthorEvent, AuthorName, PadEvent, SavedRevision};

/// The author Etherpad creates for every `saveRevision` call (named `API`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiAuthor {
    /// Its new id.
    pub author_id: String,
    /// Its color.
    pub color_id: i64,
}

/// `saveRevision(padID, rev)`: marks `rev` (the head when `None`) as saved by a new author named
/// `API`, unless it is saved already (the author is created either way, as in Etherpad).
pub fn save_revision(
    pad: &Pad,
    rev: Option<i64>,
    api_author: ApiAuthor,
    saved_id: String,
    now: i64,
) -> Result<Decision, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    let rev = match rev {
        Some(r) if r > pad.head => return Err(DomainError::RevAboveHead),
        Some(r) => r,
        None => pad.head,
    };
    let mut d = Decision::none();
    d.author(
        &api_author.author_id,
        AuthorEvent::AuthorCreated {
            author_id: api_author.author_id.clone(),
            name: AuthorName::Text("API".into()),
            color_id: api_author.color_id,
            timestamp: now,
        },
    );
    if !pad.saved_revisions.iter().any(|s| s.rev_num == rev) {
        d.pad(
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
    Ok(d)
}

/// `setPublicStatus(padID, publicStatus)`.
pub fn set_public_status(pad: &Pad, public_status: bool) -> Result<Decision, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    let mut d = Decision::none();
    d.pad(&pad.id, PadEvent::PublicStatusSet { public_status });
    Ok(d)
}

/// `getReadOnlyID(padID)`: the pad's read-only id, given `candidate` as its id if it has none
/// yet. Returns the decision and the id.
pub fn read_only_id(pad: &Pad, candidate: String) -> Result<(Decision, String), DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    if let Some(id) = &pad.read_only_id {
        return Ok((Decision::none(), id.clone()));
    }
    let mut d = Decision::none();
    d.pad(
        &pad.id,
        PadEvent::ReadOnlyIdAssigned {
            read_only_id: candidate.clone(),
        },
    );
    Ok((d, candidate))
}
