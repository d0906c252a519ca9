//! `/submissions/:id/approve|reject`.

use crate::http::body::Body;
use crate::http::params::Params;
use crate::http::sections::acting_as_caller;
use crate::read::rows::{SectionRow, SubmissionRow};
use crate::read::sections::submission_section;
use crate::review::{self, Review};
use crate::section::command::execute;
use crate::section::{SectionCommand, SectionState};
use crate::user::{Caller, Role};
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use palimpsest_web::command::{CommandRequest, Reply};
use palimpsest_web::{ApiError, AppState};
use serde_json::{Value, json};

async fn section_of(state: &AppState, submission_id: &str) -> Result<String, ApiError> {
    let client = state.read.get().await?;
    submission_section(&**client, submission_id)
        .await?
        .ok_or_else(|| ApiError::not_found("Submission not found"))
}

/// `{submission, state}` (with `error` when the approval conflicted: then 409).
fn answer(
    after: &SectionState,
    submission_id: &str,
    conflict: Option<String>,
) -> Result<Reply, ApiError> {
    let row =
        SectionRow::from_state(after).ok_or_else(|| ApiError::not_found("Section not found"))?;
    let submission = after
        .submission(submission_id)
        .map(|s| SubmissionRow::from_submission(&row.id, s))
        .ok_or_else(|| ApiError::not_found("Submission not found"))?;
    let mut body = json!({ "submission": submission, "state": row.state });
    if let Some(message) = &conflict {
        body["error"] = Value::String(message.clone());
    }
    Ok(Reply::json(status(&conflict), &body))
}

/// The status of an approval's answer: 200 published, 409 conflicted.
fn status(conflict: &Option<String>) -> StatusCode {
    if conflict.is_some() {
        StatusCode::CONFLICT
    } else {
        StatusCode::OK
    }
}

/// Checks a reviewer's write: the role, and that the body and query name no one else.
fn reviewer_write(caller: &Caller, body: &Bytes, p: &Params, what: &str) -> Result<Body, ApiError> {
    caller.require(Role::Reviewer, what)?;
    let body = Body::parse(body)?;
    acting_as_caller(caller, &body, p)?;
    Ok(body)
}

/// `POST /submissions/:id/approve` (reviewer, not the submitter) `{reviewed_by?, review_note?}`:
/// applies the snapshot to the published map → 200 `{submission, state}`, `reviewed_by` the
/// caller; on a conflict → 409 `{error, submission, state}` with the submission `conflicted`
/// and nothing published.
#[tracing::instrument(skip_all, fields(submission_id = %id))]
pub async fn approve(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = reviewer_write(&caller, &body, &p, "approving a submission")?;
    let review = Review {
        submission_id: id.clone(),
        reviewer: Some(caller.actor().to_owned()),
        note: body.string(&["review_note", "note"])?,
    };
    let section_id = section_of(&state, &id).await?;
    review::run(
        &state,
        &request,
        &section_id,
        &caller,
        &review,
        |after, conflict| answer(after, &id, conflict),
    )
    .await
}

/// `POST /submissions/:id/reject` (reviewer) `{reviewed_by?, review_note?}` → 200
/// `{submission, state}`, `reviewed_by` the caller.
#[tracing::instrument(skip_all, fields(submission_id = %id))]
pub async fn reject(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = reviewer_write(&caller, &body, &p, "rejecting a submission")?;
    let reviewer = Some(caller.actor().to_owned());
    let note = body.string(&["review_note", "note"])?;
    let section_id = section_of(&state, &id).await?;
    execute(
        &state,
        &request,
        &section_id,
        &caller,
        |now| SectionCommand::Reject {
            submission_id: id.clone(),
            reviewer: reviewer.clone(),
            note: note.clone(),
            now,
        },
        |after| answer(after, &id, None),
    )
    .await
}
