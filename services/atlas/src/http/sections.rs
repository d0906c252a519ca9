//! `/sections` routes: create and list sections, open the editor, lock, commit, restore, submit.

use crate::http::body::Body;
use crate::http::command::execute;
use crate::http::params::{Params, text};
use crate::read::rows::{CommitRow, EditorView, SectionRow, SubmissionRow};
use crate::read::sections as read;
use crate::section::{Expectations, SectionCommand, SectionState, SectionStatus};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use palimpsest_events::atlas::Timestamp;
use palimpsest_web::command::{CommandRequest, Reply};
use palimpsest_web::{ApiError, AppState};
use serde_json::{Value, json};

/// Names under which a lock's actor may be sent.
const LOCK_ACTOR: [&str; 3] = ["user_id", "actor", "locked_by"];
/// Names under which a commit's or restore's author may be sent.
const COMMIT_ACTOR: [&str; 3] = ["created_by", "user_id", "actor"];
/// Names under which a submitter may be sent.
const SUBMIT_ACTOR: [&str; 3] = ["submitted_by", "user_id", "actor"];

fn section_row(state: &SectionState) -> Result<SectionRow, ApiError> {
    SectionRow::from_state(state).ok_or_else(|| ApiError::not_found("Section not found"))
}

fn state_reply(state: &SectionState) -> Result<Reply, ApiError> {
    Ok(Reply::json(
        StatusCode::OK,
        &json!({ "state": section_row(state)?.state }),
    ))
}

fn expectations(body: &Body) -> Result<Expectations, ApiError> {
    let head_commit_id = if body.has("expected_head_commit_id") {
        Some(body.string(&["expected_head_commit_id"])?)
    } else {
        None
    };
    Ok(Expectations {
        version: body.integer("expected_version")?,
        head_commit_id,
    })
}

fn required(value: Option<String>, field: &str) -> Result<String, ApiError> {
    value.ok_or_else(|| ApiError::bad_request(format!("{field} is required")))
}

/// `POST /sections`: `{title, description?, user_id?, created_by?}` → 201 the section with its state.
#[tracing::instrument(skip_all, fields(section_id))]
pub async fn create(
    State(state): State<AppState>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = Body::parse(&body)?;
    let id = uuid::Uuid::now_v7().to_string();
    tracing::Span::current().record("section_id", id.as_str());
    let title = body.string(&["title"])?.unwrap_or_default();
    let description = body.string(&["description"])?;
    let user_id = body.id(&["user_id"])?;
    let created_by = body.id(&["created_by", "actor"])?;
    execute(
        &state,
        &request,
        &id,
        created_by.as_deref(),
        |now| SectionCommand::Create {
            section_id: id.clone(),
            title: title.clone(),
            description: description.clone(),
            user_id: user_id.clone(),
            created_by: created_by.clone(),
            now,
        },
        |after| Ok(Reply::json(StatusCode::CREATED, &section_row(after)?)),
    )
    .await
}

/// `GET /sections?status=`: every section with its state, most recently changed first.
pub async fn list(
    State(state): State<AppState>,
    Query(p): Query<Params>,
) -> Result<Json<Vec<SectionRow>>, ApiError> {
    let status = text(&p, "status").map(|name| SectionStatus::parse(&name));
    let client = state.read.get().await?;
    Ok(Json(read::list(&**client, status.transpose()?).await?))
}

/// `GET /sections/:id`: one section with its state.
pub async fn get_one(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<SectionRow>, ApiError> {
    let client = state.read.get().await?;
    read::get(&**client, &id)
        .await?
        .map(Json)
        .ok_or_else(|| ApiError::not_found("Section not found"))
}

/// `GET /sections/:id/editor?user_id=`: section, state, head commit and snapshot; with a
/// `user_id`, takes (or renews) the lock for that user first (409 if another holds it).
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn editor(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
) -> Result<Reply, ApiError> {
    if let Some(actor) = text(&p, "user_id").or_else(|| text(&p, "actor")) {
        return execute(
            &state,
            &request,
            &id,
            Some(&actor),
            take_lock(&actor),
            |after| {
                EditorView::from_state(after)
                    .map(|view| Reply::json(StatusCode::OK, &view))
                    .ok_or_else(|| ApiError::not_found("Section not found"))
            },
        )
        .await;
    }
    let client = state.read.get().await?;
    read::editor(&**client, &id)
        .await?
        .map(|view| Reply::json(StatusCode::OK, &view))
        .ok_or_else(|| ApiError::not_found("Section not found"))
}

/// The command that takes (or renews) the lock for `actor`.
fn take_lock(actor: &str) -> impl Fn(Timestamp) -> SectionCommand + '_ {
    move |now| SectionCommand::Lock {
        actor: actor.to_owned(),
        now,
    }
}

fn actor_of(body: &Body, p: &Params, keys: &[&str]) -> Result<Option<String>, ApiError> {
    Ok(body
        .id(keys)?
        .or_else(|| keys.iter().find_map(|k| text(p, k))))
}

/// `POST /sections/:id/lock` `{user_id}`: takes or renews the 15-minute lock → `{state}`.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn lock(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = Body::parse(&body)?;
    let actor = required(actor_of(&body, &p, &LOCK_ACTOR)?, "user_id")?;
    execute(
        &state,
        &request,
        &id,
        Some(&actor),
        take_lock(&actor),
        state_reply,
    )
    .await
}

/// `POST /sections/:id/unlock` `{user_id?}`: releases the lock unless another user holds it → `{state}`.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn unlock(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = Body::parse(&body)?;
    let actor = actor_of(&body, &p, &LOCK_ACTOR)?;
    execute(
        &state,
        &request,
        &id,
        actor.as_deref(),
        |now| SectionCommand::Unlock {
            actor: actor.clone(),
            now,
        },
        state_reply,
    )
    .await
}

fn snapshot_of(body: &Body) -> Result<Value, ApiError> {
    match (body.value("snapshot"), body.value("snapshot_json")) {
        (Some(Value::String(text)), _) | (None | Some(Value::Null), Some(Value::String(text))) => {
            serde_json::from_str(text)
                .map_err(|e| ApiError::bad_request(format!("snapshot is not JSON: {e}")))
        }
        (Some(v), _) if !v.is_null() => Ok(v.clone()),
        _ => Err(ApiError::bad_request("snapshot is required")),
    }
}

fn commit_reply(state: &SectionState) -> Result<Reply, ApiError> {
    let row = section_row(state)?;
    let head = state
        .head()
        .map(|c| CommitRow::from_commit(&row.id, c))
        .ok_or_else(|| ApiError::internal("committed section has no head"))?;
    Ok(Reply::json(
        StatusCode::CREATED,
        &json!({ "commit": head, "state": row.state }),
    ))
}

/// `POST /sections/:id/commits` `{snapshot, created_by, title?, note?, expected_version?,
/// expected_head_commit_id?}` → 201 `{commit, state}`.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn commit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = Body::parse(&body)?;
    let snapshot = snapshot_of(&body)?;
    let actor = required(actor_of(&body, &p, &COMMIT_ACTOR)?, "created_by")?;
    let (title, note) = (body.string(&["title"])?, body.string(&["note"])?);
    let expected = expectations(&body)?;
    let commit_id = uuid::Uuid::now_v7().to_string();
    execute(
        &state,
        &request,
        &id,
        Some(&actor),
        |now| SectionCommand::Commit {
            commit_id: commit_id.clone(),
            actor: actor.clone(),
            title: title.clone(),
            note: note.clone(),
            snapshot: snapshot.clone(),
            expected: expected.clone(),
            now,
        },
        commit_reply,
    )
    .await
}

/// `GET /sections/:id/commits`: the section's commits by number.
pub async fn commits(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<CommitRow>>, ApiError> {
    let client = state.read.get().await?;
    if read::get(&**client, &id).await?.is_none() {
        return Err(ApiError::not_found("Section not found"));
    }
    Ok(Json(read::commits(&**client, &id).await?))
}

/// `POST /sections/:id/restore` `{commit_id, created_by, title?, note?, expected_*?}`: a new
/// commit copying `commit_id`'s snapshot → 201 `{commit, state}`.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn restore(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = Body::parse(&body)?;
    let source = required(
        body.id(&["commit_id", "restored_from_commit_id", "source_commit_id"])?,
        "commit_id",
    )?;
    let actor = required(actor_of(&body, &p, &COMMIT_ACTOR)?, "created_by")?;
    let (title, note) = (body.string(&["title"])?, body.string(&["note"])?);
    let expected = expectations(&body)?;
    let commit_id = uuid::Uuid::now_v7().to_string();
    execute(
        &state,
        &request,
        &id,
        Some(&actor),
        |now| SectionCommand::Restore {
            commit_id: commit_id.clone(),
            actor: actor.clone(),
            source_commit_id: source.clone(),
            title: title.clone(),
            note: note.clone(),
            expected: expected.clone(),
            now,
        },
        commit_reply,
    )
    .await
}

/// `POST /sections/:id/submit` `{submitted_by, commit_id?, expected_*?}`: submits the head
/// (or `commit_id`) for review and releases the lock → 201 `{submission, state}`.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn submit(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = Body::parse(&body)?;
    let actor = required(actor_of(&body, &p, &SUBMIT_ACTOR)?, "submitted_by")?;
    let commit_id = body.id(&["commit_id"])?;
    let expected = expectations(&body)?;
    let submission_id = uuid::Uuid::now_v7().to_string();
    let submitted = |after: &SectionState| {
        let row = section_row(after)?;
        let submission = after
            .submission(&submission_id)
            .map(|s| SubmissionRow::from_submission(&row.id, s))
            .ok_or_else(|| ApiError::internal("submitted section lacks its submission"))?;
        Ok(Reply::json(
            StatusCode::CREATED,
            &json!({ "submission": submission, "state": row.state }),
        ))
    };
    execute(
        &state,
        &request,
        &id,
        Some(&actor),
        |now| SectionCommand::Submit {
            submission_id: submission_id.clone(),
            actor: actor.clone(),
            commit_id: commit_id.clone(),
            expected: expected.clone(),
            now,
        },
        submitted,
    )
    .await
}

/// `GET /sections/:id/submissions`: the section's submission history, newest first.
pub async fn submissions(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<SubmissionRow>>, ApiError> {
    let client = state.read.get().await?;
    if read::get(&**client, &id).await?.is_none() {
        return Err(ApiError::not_found("Section not found"));
    }
    Ok(Json(read::submissions(&**client, &id).await?))
}
