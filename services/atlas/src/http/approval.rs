//! Running an approval: the multi-stream command.
//!
//! 1. Load the section stream (version `sv`) and check the submission is pending.
//! 2. Read the publication stream's version `pv`; wait until the read model has applied it, and
//!    ask it (in one snapshot, refused unless it stands exactly at `pv`) which geometries hang
//!    on the rows the snapshot deletes and who holds the slugs it writes.
//! 3. Load every entity and geometry stream involved and fold it (its version noted).
//! 4. Decide ([`crate::review::decide_approve`]).
//! 5. Append, in ONE request: each entity and geometry stream at its exact version (with its
//!    events, or none as a pure check), the publication stream at `pv`, the section at `sv`.
//!    A conflict appends only the section's `SubmissionConflicted`, still checking `pv`.
//! 6. If any stream moved, nothing was written: start again from 1. The loser of two
//!    overlapping approvals thus decides against the winner's published state and gets a
//!    real conflict (its base no longer matches), never a mix of both.

use crate::http::command::{ATTEMPTS, metadata, now};
use crate::http::load::{self, encode, expected, stream_of};
use crate::projection::NAME;
use crate::published::PublishedView;
use crate::read::publication::{Answer, candidates};
use crate::review::{ApprovalDecision, ApproveCommand, decide_approve};
use crate::section::decide::pending;
use crate::section::{SectionState, evolve};
use crate::streams;
use crate::validation::parse_snapshot;
use axum::http::StatusCode;
use palimpsest_events::DomainEvent;
use palimpsest_events::atlas::PublicationEvent;
use palimpsest_log::{AppendError, AppendRequest};
use palimpsest_web::{ApiError, AppState};
use std::collections::BTreeMap;

/// How an approval ended.
pub enum Outcome {
    /// Published; the section after.
    Approved(SectionState),
    /// Conflicted; the section after and the message.
    Conflicted(SectionState, String),
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

/// Approves `review.submission_id` of section `section_id`.
pub async fn run(state: &AppState, section_id: &str, review: &Review) -> Result<Outcome, ApiError> {
    let section_stream = stream_of(streams::section, section_id)?;
    let publication_stream = streams::publication().map_err(ApiError::internal)?;
    for _ in 0..ATTEMPTS {
        let (section, sv) = load::section(&state.store, section_id).await?;
        if section.info.is_none() {
            return Err(ApiError::not_found("Submission not found"));
        }
        pending(&section, &review.submission_id)?;
        let snapshot = section
            .submission(&review.submission_id)
            .and_then(|s| parse_snapshot(&s.snapshot).ok())
            .unwrap_or_default();

        let pv = state.store.stream_version(&publication_stream).await?;
        if pv > 0
            && let Some(last) = state
                .store
                .read_stream(&publication_stream, pv - 1, 1)
                .await?
                .first()
        {
            state.wait_for(NAME, last.position).await?;
        }
        let mut client = state.read.get().await?;
        let found = match candidates(
            &mut client,
            pv,
            &snapshot.deleted_entity_ids(),
            &snapshot.deleted_geometry_ids(),
            &snapshot.written_slugs(),
        )
        .await?
        {
            Answer::Exact(found) => found,
            Answer::Elsewhere(at) if at > pv => continue,
            Answer::Elsewhere(at) => {
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    format!(
                        "the atlas read model is behind the log (publication {at} of {pv}); retry"
                    ),
                ));
            }
        };
        drop(client);

        let mut view = PublishedView {
            slug_owners: found.slug_owners,
            ..PublishedView::default()
        };
        let mut versions: BTreeMap<(bool, String), i64> = BTreeMap::new();
        for id in snapshot.entity_ids() {
            let (entity, v) = load::entity(&state.store, &id).await?;
            view.entities.insert(id.clone(), entity);
            versions.insert((false, id), v);
        }
        let mut geometry_ids = snapshot.geometry_ids();
        geometry_ids.extend(found.geometries);
        geometry_ids.sort();
        geometry_ids.dedup();
        for id in geometry_ids {
            let (geometry, v) = load::geometry(&state.store, &id).await?;
            view.geometries.insert(id.clone(), geometry);
            versions.insert((true, id), v);
        }

        let command = ApproveCommand {
            submission_id: review.submission_id.clone(),
            reviewer: review.reviewer.clone(),
            note: review.note.clone(),
            now: now(),
        };
        let decision = decide_approve(&command, &section, &view)?;
        let (request, section_events, conflict) = match decision {
            ApprovalDecision::Published {
                section: events,
                publication,
                published,
            } => {
                let mut request = AppendRequest::new();
                for ((is_geometry, id), v) in &versions {
                    let (stream, new) = if *is_geometry {
                        let events = publication.geometries.get(id).cloned().unwrap_or_default();
                        (stream_of(streams::geometry, id)?, encode(&events)?)
                    } else {
                        let events = publication.entities.get(id).cloned().unwrap_or_default();
                        (stream_of(streams::entity, id)?, encode(&events)?)
                    };
                    request = request.stream(stream, expected(*v), new);
                }
                request = request
                    .stream(
                        publication_stream.clone(),
                        expected(pv),
                        vec![published_event(&published)?],
                    )
                    .stream(section_stream.clone(), expected(sv), encode(&events)?);
                (request, events, None)
            }
            ApprovalDecision::Conflicted {
                section: events,
                message,
            } => {
                let request = AppendRequest::new()
                    .stream(publication_stream.clone(), expected(pv), vec![])
                    .stream(section_stream.clone(), expected(sv), encode(&events)?);
                (request, events, Some(message))
            }
        };
        let request = request.metadata(metadata(review.reviewer.as_deref()));
        match state.store.append(request).await {
            Ok(appended) => {
                state.wait_for(NAME, appended.last_position).await?;
                let after = section_events.iter().fold(section, evolve);
                return Ok(match conflict {
                    None => Outcome::Approved(after),
                    Some(message) => Outcome::Conflicted(after, message),
                });
            }
            Err(AppendError::WrongExpectedVersion { stream, .. }) => {
                tracing::debug!(%stream, "approval raced another writer; deciding again");
                continue;
            }
            Err(e) => return Err(e.into()),
        }
    }
    Err(ApiError::conflict(
        "the published map kept changing while the approval was decided; retry",
    ))
}

fn published_event(e: &PublicationEvent) -> Result<palimpsest_events::NewEvent, ApiError> {
    e.encode().map_err(ApiError::internal)
}
