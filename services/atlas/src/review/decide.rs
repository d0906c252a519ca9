//! The approval decider: the section, the command and the published rows it reads in; what to
//! append (publish, or record a conflict) out.

use crate::hashing::snapshot_hash;
use crate::published::{Publication, PublishedView, plan_publication};
use crate::review::command::ApproveCommand;
use crate::section::decide::pending;
use crate::section::{SectionError, SectionState};
use crate::validation::parse_snapshot;
use palimpsest_events::atlas::{PublicationEvent, PublicationSource, SectionEvent};

/// What an approval appends.
#[derive(Debug, Clone, PartialEq)]
pub enum ApprovalDecision {
    /// The snapshot applies: publish it and mark the submission approved.
    Published {
        /// For the section stream: `SubmissionApproved`.
        section: Vec<SectionEvent>,
        /// For the entity and geometry streams.
        publication: Publication,
        /// For the publication stream.
        published: PublicationEvent,
    },
    /// The snapshot does not apply: publish nothing, mark the submission conflicted.
    Conflicted {
        /// For the section stream: `SubmissionConflicted`.
        section: Vec<SectionEvent>,
        /// Why (also in the event).
        message: String,
    },
}

/// Decides an approval: verifies the snapshot hash, validates the snapshot, checks it against
/// the published rows in `view` and plans its events.
pub fn decide_approve(
    command: &ApproveCommand,
    section: &SectionState,
    view: &PublishedView,
) -> Result<ApprovalDecision, SectionError> {
    let info = section.info.as_ref().ok_or(SectionError::SectionNotFound)?;
    pending(section, &command.submission_id)?;
    let submission = section
        .submission(&command.submission_id)
        .ok_or(SectionError::SubmissionNotFound)?;
    let conflicted = |message: String| ApprovalDecision::Conflicted {
        section: vec![SectionEvent::SubmissionConflicted {
            submission_id: command.submission_id.clone(),
            reviewed_by: command.reviewer.clone(),
            reviewed_at: command.now,
            message: message.clone(),
        }],
        message,
    };
    let actual = snapshot_hash(&submission.snapshot);
    if actual != submission.snapshot_hash {
        return Ok(conflicted(format!(
            "Conflict: snapshot hash is {actual}, submission says {}",
            submission.snapshot_hash
        )));
    }
    let snapshot = match parse_snapshot(&submission.snapshot) {
        Ok(s) => s,
        Err(e) => return Ok(conflicted(format!("Invalid snapshot: {e}"))),
    };
    let source = PublicationSource {
        submission_id: command.submission_id.clone(),
        section_id: info.id.clone(),
        reviewed_by: command.reviewer.clone(),
    };
    match plan_publication(&snapshot, view, &source, command.now) {
        Err(c) => Ok(conflicted(c.to_string())),
        Ok(publication) => Ok(ApprovalDecision::Published {
            section: vec![SectionEvent::SubmissionApproved {
                submission_id: command.submission_id.clone(),
                reviewed_by: command.reviewer.clone(),
                reviewed_at: command.now,
                review_note: command.note.clone(),
            }],
            published: PublicationEvent::SubmissionPublished {
                source,
                at: command.now,
                entity_ids: publication.entities.keys().cloned().collect(),
                geometry_ids: publication.geometries.keys().cloned().collect(),
            },
            publication,
        }),
    }
}
