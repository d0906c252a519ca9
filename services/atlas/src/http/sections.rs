//! `/sections` routes: create and list sections, open the editor, lock, commit, restore, submit.

use crate::http::body::Body;
use crate::http::params::{Params, text};
use crate::read::rows::{CommitRow, EditorView, SectionRow, SubmissionRow};
use crate::read::sections as read;
use crate::section::command::execute;
use crate::section::{Expectations, SectionCommand, SectionState, SectionStatus};
use crate::user::{Caller, Role};
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use palimpsest_events::atlas::Timestamp;
use palimpsest_web::command::{CommandRequest, Reply};
use palimpsest_web::{ApiError, AppState};
use serde_json::{Value, json};

/// Names under which clients of the original send the acting user (a lock's holder, a
/// commit's or restore's author, a submitter, a reviewer). The acting user is the caller: a
/// request naming anyone else under any of them is refused (403); its own name is accepted.
pub const ACTOR_FIELDS: [&str; 7] = [
    "user_id",
    "actor",
    "created_by",
    "locked_by",
    "unlocked_by",
    "submitted_by",
    "reviewed_by",
];

/// Refuses (403) a request whose body or query names a user other than the caller.
pub fn acting_as_caller(caller: &Caller, body: &Body, p: &Params) -> Result<(), ApiError> {
    for field in ACTOR_FIELDS {
        caller.named(field, body.id(&[field])?.as_deref())?;
        caller.named(field, text(p, field).as_deref())?;
    }
    Ok(())
}

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

/// `POST /sections` (editor): `{title, description?}` → 201 the section with its state; its
/// `user_id` and `created_by` are the caller.
#[tracing::instrument(skip_all, fields(section_id))]
pub async fn create(
    caller: Caller,
    State(state): State<AppState>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    caller.require(Role::Editor, "creating a section")?;
    let body = Body::parse(&body)?;
    acting_as_caller(&caller, &body, &p)?;
    let id = uuid::Uuid::now_v7().to_string();
    tracing::Span::current().record("section_id", id.as_str());
    let title = body.string(&["title"])?.unwrap_or_default();
    let description = body.string(&["description"])?;
    let actor = caller.actor().to_owned();
    execute(
        &state,
        &request,
        &id,
        &caller,
        |now| SectionCommand::Create {
            section_id: id.clone(),
            title: title.clone(),
            description: description.clone(),
            user_id: Some(actor.clone()),
            created_by: Some(actor.clone()),
            now,
        },
        |after| Ok(Reply::json(StatusCode::CREATED, &section_row(after)?)),
    )
    .await
}

/// `GET /sections?status=`: every section with its state, most recently changed first.
pub async fn list(
    _caller: Caller,
    State(state): State<AppState>,
    Query(p): Query<Params>,
) -> Result<Json<Vec<SectionRow>>, ApiError> {
    let status = text(&p, "status").map(|name| SectionStatus::parse(&name));
    let client = state.read.get().await?;
    Ok(Json(read::list(&**client, status.transpose()?).await?))
}

/// `GET /sections/:id`: one section with its state.
pub async fn get_one(
    _caller: Caller,
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
/// `user_id` (the caller's own, an editor), takes (or renews) the lock for the caller first
/// (409 if another holds it).
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn editor(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
) -> Result<Reply, ApiError> {
    acting_as_caller(&caller, &Body::default(), &p)?;
    if text(&p, "user_id").or_else(|| text(&p, "actor")).is_some() {
        caller.require(Role::Editor, "taking a section's lock")?;
        let actor = caller.actor();
        return execute(&state, &request, &id, &caller, take_lock(actor), |after| {
            EditorView::from_state(after)
                .map(|view| Reply::json(StatusCode::OK, &view))
                .ok_or_else(|| ApiError::not_found("Section not found"))
        })
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

/// Checks an editor's write: the role, and that the body and query name no one else.
fn editor_write(caller: &Caller, body: &Bytes, p: &Params, what: &str) -> Result<Body, ApiError> {
    caller.require(Role::Editor, what)?;
    let body = Body::parse(body)?;
    acting_as_caller(caller, &body, p)?;
    Ok(body)
}

/// `POST /sections/:id/lock` (editor) `{user_id?}`: takes or renews the 15-minute lock for the
/// caller → `{state}`.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn lock(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    editor_write(&caller, &body, &p, "taking a section's lock")?;
    execute(
        &state,
        &request,
        &id,
        &caller,
        take_lock(caller.actor()),
        state_reply,
    )
    .await
}

/// `POST /sections/:id/unlock` (editor) `{user_id?}`: releases the lock unless another user
/// holds it → `{state}`.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn unlock(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    editor_write(&caller, &body, &p, "releasing a section's lock")?;
    let actor = Some(caller.actor().to_owned());
    execute(
        &state,
        &request,
        &id,
        &caller,
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

/// `POST /sections/:id/commits` (editor) `{snapshot, created_by?, title?, note?,
/// expected_version?, expected_head_commit_id?}` → 201 `{commit, state}`, `created_by` the
/// caller.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn commit(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = editor_write(&caller, &body, &p, "committing")?;
    let snapshot = snapshot_of(&body)?;
    let actor = caller.actor().to_owned();
    let (title, note) = (body.string(&["title"])?, body.string(&["note"])?);
    let expected = expectations(&body)?;
    let commit_id = uuid::Uuid::now_v7().to_string();
    execute(
        &state,
        &request,
        &id,
        &caller,
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
    _caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<CommitRow>>, ApiError> {
    let client = state.read.get().await?;
    if read::get(&**client, &id).await?.is_none() {
        return Err(ApiError::not_found("Section not found"));
    }
    Ok(Json(read::commits(&**client, &id).await?))
}

/// `POST /sections/:id/restore` (editor) `{commit_id, created_by?, title?, note?,
/// expected_*?}`: a new commit by the caller copying `commit_id`'s snapshot → 201
/// `{commit, state}`.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn restore(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = editor_write(&caller, &body, &p, "restoring a commit")?;
    let source = required(
        body.id(&["commit_id", "restored_from_commit_id", "source_commit_id"])?,
        "commit_id",
    )?;
    let actor = caller.actor().to_owned();
    let (title, note) = (body.string(&["title"])?, body.string(&["note"])?);
    let expected = expectations(&body)?;
    let commit_id = uuid::Uuid::now_v7().to_string();
    execute(
        &state,
        &request,
        &id,
        &caller,
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

/// `POST /sections/:id/submit` (editor) `{submitted_by?, commit_id?, expected_*?}`: submits the
/// head (or `commit_id`) for review as the caller and releases the lock → 201
/// `{submission, state}`.
#[tracing::instrument(skip_all, fields(section_id = %id))]
pub async fn submit(
    caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(p): Query<Params>,
    request: CommandRequest,
    body: Bytes,
) -> Result<Reply, ApiError> {
    let body = editor_write(&caller, &body, &p, "submitting")?;
    let actor = caller.actor().to_owned();
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
        &caller,
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
    _caller: Caller,
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Json<Vec<SubmissionRow>>, ApiError> {
    let client = state.read.get().await?;
    if read::get(&**client, &id).await?.is_none() {
        return Err(ApiError::not_found("Section not found"));
    }
    Ok(Json(read::submissions(&**client, &id).await?))
}
