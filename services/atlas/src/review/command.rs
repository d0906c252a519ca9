//! The approval command, and how it runs: the multi-stream command, through the platform's
//! command runner.
//!
//! 1. Load the section stream and check the submission is pending.
//! 2. Load the publication stream (version `pv`); wait until the read model has applied it, and
//!    ask it (in one snapshot, refused unless it stands exactly at `pv`) which geometries hang
//!    on the rows the snapshot deletes and who holds the slugs it writes. Every published row
//!    changes only through an approval, and every approval appends to the publication stream,
//!    so that answer is the published state at `pv`, and the append checks `pv` still holds.
//! 3. Load every entity and geometry stream involved (steps 2 and 3: [`crate::review::load`]).
//! 4. Decide ([`decide_approve`]).
//! 5. Append, in ONE request: each entity and geometry stream at the version read (with its
//!    events, or none as a pure check), the publication stream at `pv`, the section.
//!    A conflict appends only the section's `SubmissionConflicted`, still checking `pv`.
//! 6. If any stream moved, nothing was written and the runner decides again from 1. The loser
//!    of two overlapping approvals thus decides against the winner's published state and gets
//!    a real conflict (its base no longer matches), never a mix of both.

use crate::command::{command, encode, now, rejected, stream_of};
use crate::published::PublishedView;
use crate::review::load::{load_view, published_candidates};
use crate::review::state::PublicationHead;
use crate::review::{ApprovalDecision, decide_approve};
use crate::section::decide::pending;
use crate::section::{SectionState, evolve};
use crate::streams;
use crate::user::policy::may_approve;
use crate::user::{Caller, forbidden};
use crate::validation::parse_snapshot;
use palimpsest_events::atlas::Timestamp;
use palimpsest_events::{DomainEvent, StreamName};
use palimpsest_web::command::{CommandError, CommandRequest, Decision, Reply};
use palimpsest_web::{ApiError, AppState};

/// `POST /submissions/:id/approve`.
#[derive(Debug, Clone, PartialEq)]
pub struct ApproveCommand {
    /// The submission.
    pub submission_id: String,
    /// The reviewer.
    pub reviewer: Option<String>,
    /// `review_note`.
    pub note: Option<String>,
    /// The time of the request.
    pub now: Timestamp,
}

/// The reviewer's part of the command.
pub struct Review {
    /// The submission.
    pub submission_id: String,
    /// The reviewer.
    pub reviewer: Option<String>,
    /// `review_note`.
    pub note: Option<String>,
}

/// Approves `review.submission_id` of section `section_id` as `caller`; `answer` renders the
/// section after (200 when published, 409 with the message when conflicted). A reviewer's own
/// submission is refused (403, [`may_approve`]).
pub async fn run(
    state: &AppState,
    request: &CommandRequest,
    section_id: &str,
    caller: &Caller,
    review: &Review,
    answer: impl Fn(&SectionState, Option<String>) -> Result<Reply, ApiError>,
) -> Result<Reply, ApiError> {
    let section_stream = &stream_of(streams::section, section_id)?;
    let publication_stream = &streams::publication().map_err(ApiError::internal)?;
    let answer = &answer;
    let reply = state
        .commands
        .run(command(request, caller.actor()), |attempt| async move {
            let section: SectionState = attempt.load(section_stream).await?;
            if section.info.is_none() {
                return Err(rejected(ApiError::not_found("Submission not found")));
            }
            pending(&section, &review.submission_id).map_err(rejected)?;
            own_submission(&section, &review.submission_id, caller).map_err(rejected)?;
            let snapshot = section
                .submission(&review.submission_id)
                .and_then(|s| parse_snapshot(&s.snapshot).ok())
                .unwrap_or_default();
            let publication: PublicationHead = attempt.load(publication_stream).await?;
            let found =
                published_candidates(state, &attempt, publication_stream, &publication, &snapshot)
                    .await?;
            let view = load_view(&attempt, &snapshot, found).await?;
            let approve = ApproveCommand {
                submission_id: review.submission_id.clone(),
                reviewer: review.reviewer.clone(),
                note: review.note.clone(),
                now: now(),
            };
            let decision = decide_approve(&approve, &section, &view).map_err(rejected)?;
            approval_decision(
                decision,
                section,
                section_stream,
                publication_stream,
                &view,
                answer,
            )
        })
        .await?;
    Ok(reply)
}

/// Refuses (403) a reviewer approving their own submission.
fn own_submission(
    section: &SectionState,
    submission_id: &str,
    caller: &Caller,
) -> Result<(), ApiError> {
    match section.submission(submission_id) {
        Some(s) if !may_approve(&s.submitted_by, caller.actor(), caller.is_admin()) => {
            Err(forbidden(format!(
                "user {} submitted this submission and may not approve it: another reviewer must",
                caller.actor()
            )))
        }
        _ => Ok(()),
    }
}

/// Steps 4–5: the decision's streams (each read entity and geometry written or checked, the
/// publication written or checked, the section written) and its answer.
fn approval_decision(
    decision: ApprovalDecision,
    section: SectionState,
    section_stream: &StreamName,
    publication_stream: &StreamName,
    view: &PublishedView,
    answer: &impl Fn(&SectionState, Option<String>) -> Result<Reply, ApiError>,
) -> Result<Decision, CommandError<ApiError>> {
    match decision {
        ApprovalDecision::Published {
            section: events,
            publication,
            published,
        } => {
            let after = events.iter().fold(section, evolve);
            let mut decision = Decision::new(answer(&after, None).map_err(CommandError::Rejected)?);
            for id in view.entities.keys() {
                let stream = stream_of(streams::entity, id).map_err(rejected)?;
                let new = publication.entities.get(id).cloned().unwrap_or_default();
                decision = decision
                    .check(stream.clone())
                    .write(stream, encode(&new).map_err(rejected)?);
            }
            for id in view.geometries.keys() {
                let stream = stream_of(streams::geometry, id).map_err(rejected)?;
                let new = publication.geometries.get(id).cloned().unwrap_or_default();
                decision = decision
                    .check(stream.clone())
                    .write(stream, encode(&new).map_err(rejected)?);
            }
            let published = vec![
                published
                    .encode()
                    .map_err(|e| rejected(ApiError::internal(e)))?,
            ];
            Ok(decision
                .write(publication_stream.clone(), published)
                .write(section_stream.clone(), encode(&events).map_err(rejected)?))
        }
        ApprovalDecision::Conflicted {
            section: events,
            message,
        } => {
            let after = events.iter().fold(section, evolve);
            let reply = answer(&after, Some(message)).map_err(CommandError::Rejected)?;
            Ok(Decision::new(reply)
                .check(publication_stream.clone())
                .write(section_stream.clone(), encode(&events).map_err(rejected)?))
        }
    }
}
