//! Running an approval: the multi-stream command, through the platform's command runner.
//!
//! 1. Load the section stream and check the submission is pending.
//! 2. Load the publication stream (version `pv`); wait until the read model has applied it, and
//!    ask it (in one snapshot, refused unless it stands exactly at `pv`) which geometries hang
//!    on the rows the snapshot deletes and who holds the slugs it writes. Every published row
//!    changes only through an approval, and every approval appends to the publication stream,
//!    so that answer is the published state at `pv`, and the append checks `pv` still holds.
//! 3. Load every entity and geometry stream involved.
//! 4. Decide ([`crate::review::decide_approve`]).
//! 5. Append, in ONE request: each entity and geometry stream at the version read (with its
//!    events, or none as a pure check), the publication stream at `pv`, the section.
//!    A conflict appends only the section's `SubmissionConflicted`, still checking `pv`.
//! 6. If any stream moved, nothing was written and the runner decides again from 1. The loser
//!    of two overlapping approvals thus decides against the winner's published state and gets
//!    a real conflict (its base no longer matches), never a mix of both.

use crate::http::auth::{Caller, forbidden};
use crate::http::command::{command, now, rejected};
use crate::http::load::{encode, stream_of};
use crate::projection::NAME;
use crate::published::PublishedView;
use crate::read::publication::{Answer, Candidates, candidates};
use crate::review::{ApprovalDecision, ApproveCommand, decide_approve};
use crate::section::decide::pending;
use crate::section::{SectionState, evolve};
use crate::snapshot::Snapshot;
use crate::streams;
use crate::user::policy::may_approve;
use crate::validation::parse_snapshot;
use axum::http::StatusCode;
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::{
    Attempt, CommandError, CommandRequest, Decision, Reply, StreamState,
};
use palimpsest_web::{ApiError, AppState};

/// The reviewer's part of the command.
pub struct Review {
    /// The submission.
    pub submission_id: String,
    /// The reviewer.
    pub reviewer: Option<String>,
    /// `review_note`.
    pub note: Option<String>,
}

/// The publication stream as an approval needs it: where its last event stands in the log, so
/// the read model can be waited for up to it.
#[derive(Debug, Clone, Default)]
struct Publication {
    last_position: i64,
}

impl StreamState for Publication {
    fn initial(_: &StreamName) -> Self {
        Publication::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        self.last_position = event.position;
        Ok(())
    }
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
        .run(
            command(request, Some(caller.actor())),
            |attempt| async move {
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
                let publication: Publication = attempt.load(publication_stream).await?;
                let found = published_candidates(
                    state,
                    &attempt,
                    publication_stream,
                    &publication,
                    &snapshot,
                )
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
            },
        )
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

/// Step 2: the read model's answer at exactly the publication version read. A read model
/// already past it means another approval published meanwhile: decide again.
async fn published_candidates(
    state: &AppState,
    attempt: &Attempt,
    publication_stream: &StreamName,
    publication: &Publication,
    snapshot: &Snapshot,
) -> Result<Candidates, CommandError<ApiError>> {
    let pv = attempt.version(publication_stream);
    if publication.last_position > 0 {
        state.wait_for(NAME, publication.last_position).await?;
    }
    let mut client = state
        .read
        .get()
        .await
        .map_err(|e| CommandError::Unavailable(format!("atlas read model: {e}")))?;
    let asked = candidates(
        &mut client,
        pv,
        &snapshot.deleted_entity_ids(),
        &snapshot.deleted_geometry_ids(),
        &snapshot.written_slugs(),
    )
    .await
    .map_err(|e| rejected(ApiError::internal(e)))?;
    match asked {
        Answer::Exact(found) => Ok(found),
        Answer::Elsewhere(at) if at > pv => Err(CommandError::Conflict {
            stream: publication_stream.clone(),
        }),
        Answer::Elsewhere(at) => Err(CommandError::Unavailable(format!(
            "the atlas read model is behind the log (publication {at} of {pv}); retry"
        ))),
    }
}

/// Step 3: every entity and geometry the approval reads, from their streams.
async fn load_view(
    attempt: &Attempt,
    snapshot: &Snapshot,
    found: Candidates,
) -> Result<PublishedView, CommandError<ApiError>> {
    let mut view = PublishedView {
        slug_owners: found.slug_owners,
        ..PublishedView::default()
    };
    for id in snapshot.entity_ids() {
        let stream = stream_of(streams::entity, &id).map_err(rejected)?;
        view.entities.insert(id, attempt.load(&stream).await?);
    }
    let mut geometry_ids = snapshot.geometry_ids();
    geometry_ids.extend(found.geometries);
    geometry_ids.sort();
    geometry_ids.dedup();
    for id in geometry_ids {
        let stream = stream_of(streams::geometry, &id).map_err(rejected)?;
        view.geometries.insert(id, attempt.load(&stream).await?);
    }
    Ok(view)
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

/// The status of an approval's answer: 200 published, 409 conflicted.
pub fn status(conflict: &Option<String>) -> StatusCode {
    if conflict.is_some() {
        StatusCode::CONFLICT
    } else {
        StatusCode::OK
    }
}
