//! The file archive (admin): deleted files, restore (possibly elsewhere, renamed on a clash),
//! and wipe.

use super::auth::Admin;
use super::doc::{Element, Format};
use super::error::read;
use super::extract::{PathParams, QueryParams};
use super::views::{self, Shown};
use super::{Resources, params};
use crate::operation::Restore;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use palimpsest_events::resources::Parent;
use palimpsest_web::ApiError;
use palimpsest_web::command::CommandRequest;
use std::collections::HashMap;

type Params = HashMap<String, String>;

fn file_id(path: &Params) -> Result<i64, ApiError> {
    params::id(path.get("fileid").map_or("", String::as_str), "fileid")
}

/// `GET /archive/files`: every deleted file.
pub async fn list(
    State(s): State<Resources>,
    Admin(_): Admin,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let rows = s.reader.archive().await.map_err(read)?;
    let files = rows
        .iter()
        .map(|row| views::file_named("file.archive", &row.revision, Shown::of(row)))
        .collect();
    Ok(Format::of(&headers)
        .reply(StatusCode::OK, &views::list("files.archive", files))
        .into_response())
}

/// `POST /archive/files/restore/{fileid}?to={pageid}`.
pub async fn restore(
    State(s): State<Resources>,
    Admin(caller): Admin,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let res_id = file_id(&path)?;
    let to = query
        .get("to")
        .map(|t| params::id(t, "to"))
        .transpose()?
        .map(Parent::Page);
    let format = Format::of(&headers);
    s.execute(&request, caller, |mut changeset| async move {
        let restored = changeset.restore_file(Restore { res_id, to }).await?;
        Ok((
            changeset,
            format.reply(StatusCode::OK, &views::file_head(&restored)),
        ))
    })
    .await
}

/// `DELETE /archive/files/{fileid}`: removes a deleted file for good.
pub async fn wipe(
    State(s): State<Resources>,
    Admin(caller): Admin,
    request: CommandRequest,
    PathParams(path): PathParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let res_id = file_id(&path)?;
    let format = Format::of(&headers);
    s.execute(&request, caller, |mut changeset| async move {
        changeset.wipe(res_id).await?;
        let answer = Element::new("file.archive")
            .attr("id", res_id)
            .attr("wiped", true);
        Ok((changeset, format.reply(StatusCode::OK, &answer)))
    })
    .await
}
