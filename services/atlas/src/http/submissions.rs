//! `/submissions/:id/approve|reject`.

use crate::http::approval::{self, Review};
use crate::http::body::Body;
use crate::http::command::execute;
use crate::read::rows::{SectionRow, SubmissionRow};
use crate::read::sections::submission_section;
use crate::section::{SectionCommand, SectionState};
use axum::body::Bytes;
use axum::extract::{Path, State};
use palimpsest_web::command::{CommandRequest, Reply};
use palimpsest_web::{ApiError, AppState};
use serde_json::{Value, json};

/// Names under which a reviewer may be sent.
const REVIEWER: [&str; 3] = ["reviewed_by", "user_id", "actor"];

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
    Ok(Reply::json(approval::status(&conflict), &body))
}

/// `POST /submissions/:id/approve` `{reviewed_by?, review_note?}`: applies the snapshot to the
/// published map → 200 `{submission, state}`; on a conflict → 409 `{error, submission, state}`
/// with the submission `conflicted` and nothing published.
#[tracing::instrument(skip_all, fields(submission_id = %id))]
pub async fn approve(
    State(state): State<AppState>,
    Path(id): Path<String>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = Body::parse(&body)?;
    let review = Review {
        submission_id: id.clone(),
        reviewer: body.id(&REVIEWER)?,
        note: body.string(&["review_note", "note"])?,
    };
    let section_id = section_of(&state, &id).await?;
    approval::run(&state, &request, &section_id, &review, |after, conflict| {
        answer(after, &id, conflict)
    })
    .await
}

/// `POST /submissions/:id/reject` `{reviewed_by?, review_note?}` → 200 `{submission, state}`.
#[tracing::instrument(skip_all, fields(submission_id = %id))]
pub async fn reject(
    State(state): State<AppState>,
    Path(id): Path<String>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = Body::parse(&body)?;
    let reviewer = body.id(&REVIEWER)?;
    let note = body.string(&["review_note", "note"])?;
    let section_id = section_of(&state, &id).await?;
    execute(
        &state,
        &request,
        &section_id,
        reviewer.as_deref(),
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
