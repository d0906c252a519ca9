//! Files: of a page by name, by id, their revisions, moves, descriptions.

use super::auth::{Admin, Caller, Writer};
use super::doc::Format;
use super::download::{self, Wanted};
use super::error::{content as content_error, read};
use super::extract::{PathParams, QueryParams};
use super::views::{self, Shown};
use super::{Resources, params};
use crate::content;
use crate::operation::DESCRIPTION_KEY;
use crate::operation::{Abort, FileWrite, OperationError, PropertyWrite, Replace, refuse};
use crate::resource::Expect;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use palimpsest_events::resources::{Parent, ResourceType};
use palimpsest_web::ApiError;
use palimpsest_web::command::CommandRequest;
use std::collections::HashMap;

type Params = HashMap<String, String>;

fn page(path: &Params) -> Result<Parent, ApiError> {
    params::id(path.get("pageid").map_or("", String::as_str), "pageid").map(Parent::Page)
}

fn file_id(path: &Params) -> Result<i64, ApiError> {
    params::id(path.get("fileid").map_or("", String::as_str), "fileid")
}

fn filename(path: &Params) -> Result<String, ApiError> {
    params::name(path.get("filename").map_or("", String::as_str), "filename")
}

fn q<'a>(query: &'a Params, name: &str) -> Option<&'a str> {
    query.get(name).map(String::as_str)
}

/// `GET /pages/{pageid}/files`: the page's live files (anyone's to read; a key, if sent, must
/// be valid).
pub async fn list(
    State(s): State<Resources>,
    _caller: Caller,
    PathParams(path): PathParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let rows = s
        .reader
        .children(ResourceType::File, page(&path)?)
        .await
        .map_err(read)?;
    let files = rows
        .iter()
        .map(|row| views::file(&row.revision, Shown::of(row)))
        .collect();
    Ok(Format::of(&headers)
        .reply(StatusCode::OK, &views::list("files", files))
        .into_response())
}

/// `GET /pages/{pageid}/files/{filename}?revision=`: a file's content by name.
pub async fn get_by_name(
    State(s): State<Resources>,
    caller: Caller,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
) -> Result<Response, ApiError> {
    let (parent, name) = (page(&path)?, filename(&path)?);
    let row = s
        .reader
        .child(ResourceType::File, parent, &name)
        .await
        .map_err(read)?
        .ok_or_else(|| ApiError::not_found(format!("no file `{name}` on page {parent}")))?;
    let revision = params::revision(q(&query, "revision"))?;
    download::serve(&s, caller, row.revision.res_id, revision, Wanted::File).await
}

/// `GET /files/{fileid}?revision=`: a file's content.
pub async fn get_by_id(
    State(s): State<Resources>,
    caller: Caller,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
) -> Result<Response, ApiError> {
    let revision = params::revision(q(&query, "revision"))?;
    download::serve(&s, caller, file_id(&path)?, revision, Wanted::File).await
}

/// `GET /files/{fileid}/info?revision=`: a file revision's description.
pub async fn info(
    State(s): State<Resources>,
    caller: Caller,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let revision = params::revision(q(&query, "revision"))?;
    let row = download::visible(&s, caller, file_id(&path)?, revision, Wanted::File).await?;
    let element = views::file(&row.revision, Shown::of(&row));
    Ok(Format::of(&headers)
        .reply(StatusCode::OK, &element)
        .into_response())
}

/// `GET /files/{fileid}/revisions?changefilter=CONTENT,NAME`: the file's history.
pub async fn revisions(
    State(s): State<Resources>,
    caller: Caller,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = file_id(&path)?;
    let filter = views::parse_filter(q(&query, "changefilter").unwrap_or(""))
        .map_err(|word| ApiError::bad_request(format!("changefilter: unknown change `{word}` (CONTENT, NAME, LANGUAGE, META, DELETEFLAG, PARENT)")))?;
    download::visible(&s, caller, id, None, Wanted::File).await?;
    let rows = s.reader.revisions(id, filter).await.map_err(read)?;
    let files = rows
        .iter()
        .map(|row| views::file(&row.revision, Shown::of(row)))
        .collect::<Vec<_>>();
    let element =
        views::list("files", files).attr("totalcount", rows.first().map_or(0, |r| r.head_rev));
    Ok(Format::of(&headers)
        .reply(StatusCode::OK, &element)
        .into_response())
}

/// `PUT /pages/{pageid}/files/{filename}?description=&revision=`: upload (streamed) a new file
/// or a new revision of the live file of that name.
pub async fn put(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (parent, name) = (page(&path)?, filename(&path)?);
    let mimetype = params::mimetype(&headers, "application/octet-stream")?;
    let expect = params::expect(q(&query, "revision"), &headers, q(&query, "etag"))?;
    let description = q(&query, "description").map(str::to_owned);
    let upload = content::receive(&s.content, body.into_data_stream())
        .await
        .map_err(content_error)?;
    let description_upload = description_upload(&s, description.as_deref()).await?;
    let write = FileWrite {
        parent,
        name,
        upload,
        mimetype,
        description,
        expect,
    };
    let format = Format::of(&headers);
    let (write, description_upload) = (&write, &description_upload);
    s.execute(&request, caller, |mut changeset| async move {
        let head = changeset
            .put_file(write.clone(), description_upload.clone())
            .await?;
        Ok((
            changeset,
            format.reply(StatusCode::OK, &views::file_head(&head)),
        ))
    })
    .await
}

/// `PUT /files/{fileid}?description=&revision=`: upload (streamed) a new revision of a live file
/// by id, as Deki's "replace an attachment": its name and page stay.
pub async fn put_by_id(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let res_id = file_id(&path)?;
    let mimetype = params::mimetype(&headers, "application/octet-stream")?;
    let expect = params::expect(q(&query, "revision"), &headers, q(&query, "etag"))?;
    let upload = content::receive(&s.content, body.into_data_stream())
        .await
        .map_err(content_error)?;
    let description = description_upload(&s, q(&query, "description")).await?;
    let format = Format::of(&headers);
    let replace = Replace {
        res_id,
        upload,
        mimetype,
        expect,
        description,
    };
    let replace = &replace;
    s.execute(&request, caller, |mut changeset| async move {
        let head = changeset.replace_file(replace.clone()).await?;
        Ok((
            changeset,
            format.reply(StatusCode::OK, &views::file_head(&head)),
        ))
    })
    .await
}

/// The description given with an upload, received into the content store.
async fn description_upload(
    s: &Resources,
    text: Option<&str>,
) -> Result<Option<content::Upload>, ApiError> {
    match text {
        Some(text) => content::receive_bytes(&s.content, Bytes::from(text.to_owned()))
            .await
            .map(Some)
            .map_err(content_error),
        None => Ok(None),
    }
}

/// `DELETE /pages/{pageid}/files/{filename}`.
pub async fn delete_by_name(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (parent, name) = (page(&path)?, filename(&path)?);
    let expect = params::expect(q(&query, "revision"), &headers, q(&query, "etag"))?;
    let format = Format::of(&headers);
    let (name, expect) = (&name, &expect);
    s.execute(&request, caller, |mut changeset| async move {
        let holder = changeset.holder(ResourceType::File, parent, name).await?;
        let res_id = holder.ok_or_else(|| {
            refuse(OperationError::NoSuchName {
                kind: "file",
                name: name.clone(),
                parent: parent.to_string(),
            })
        })?;
        let deleted = changeset.delete_file(res_id, expect.clone()).await?;
        Ok((
            changeset,
            format.reply(StatusCode::OK, &views::file_head(&deleted)),
        ))
    })
    .await
}

/// `DELETE /files/{fileid}`.
pub async fn delete_by_id(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = file_id(&path)?;
    let expect = params::expect(q(&query, "revision"), &headers, q(&query, "etag"))?;
    let format = Format::of(&headers);
    let expect = &expect;
    s.execute(&request, caller, |mut changeset| async move {
        let deleted = changeset.delete_file(id, expect.clone()).await?;
        Ok((
            changeset,
            format.reply(StatusCode::OK, &views::file_head(&deleted)),
        ))
    })
    .await
}

/// `POST /files/{fileid}/revisions?hide=true|false&revisionids=1,2` (admin).
pub async fn hide(
    State(s): State<Resources>,
    Admin(caller): Admin,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = file_id(&path)?;
    let hidden = params::flag(q(&query, "hide"), "hide", true)?;
    let revs = params::revision_ids(q(&query, "revisionids"))?;
    let format = Format::of(&headers);
    let revs = &revs;
    s.execute(&request, caller, |mut changeset| async move {
        let head = changeset.live(id, ResourceType::File).await?;
        changeset.hide(id, revs.clone(), hidden).await?;
        Ok((
            changeset,
            format.reply(StatusCode::OK, &views::file_head(&head)),
        ))
    })
    .await
}

/// `POST /files/{fileid}/move?to={pageid}&name={filename}`.
pub async fn move_file(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = file_id(&path)?;
    let to = q(&query, "to")
        .map(|t| params::id(t, "to"))
        .transpose()?
        .map(Parent::Page);
    let name = q(&query, "name")
        .map(|n| params::name(n, "name"))
        .transpose()?;
    if to.is_none() && name.is_none() {
        return Err(ApiError::bad_request(
            "move needs to= (a page id) and/or name=",
        ));
    }
    let expect = params::expect(q(&query, "revision"), &headers, q(&query, "etag"))?;
    let format = Format::of(&headers);
    let (name, expect) = (&name, &expect);
    s.execute(&request, caller, |mut changeset| async move {
        let head = changeset
            .move_file(id, to, name.clone(), expect.clone())
            .await?;
        Ok((
            changeset,
            format.reply(StatusCode::OK, &views::file_head(&head)),
        ))
    })
    .await
}

/// `PUT /files/{fileid}/description`: the body is the description (Deki keeps it as the
/// file's property `urn:deki.mindtouch.com#description`).
pub async fn put_description(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let id = file_id(&path)?;
    let text = std::str::from_utf8(&body)
        .map_err(|_| ApiError::bad_request("the description must be UTF-8 text"))?;
    if text.contains('\u{0}') {
        return Err(ApiError::bad_request(
            "the description must not contain U+0000",
        ));
    }
    let upload = content::receive_bytes(&s.content, body.clone())
        .await
        .map_err(content_error)?;
    let format = Format::of(&headers);
    let upload = &upload;
    s.execute(&request, caller, |mut changeset| async move {
        changeset.live(id, ResourceType::File).await?;
        let property = changeset
            .put_property(PropertyWrite {
                parent: Parent::File(id),
                name: DESCRIPTION_KEY.to_owned(),
                upload: upload.clone(),
                mimetype: "text/plain; charset=utf-8".into(),
                abort: Abort::Never,
                expect: Expect::default(),
            })
            .await?;
        Ok((
            changeset,
            format.reply(StatusCode::OK, &views::property_head(&property)),
        ))
    })
    .await
}

/// `DELETE /files/{fileid}/description`.
pub async fn delete_description(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let id = file_id(&path)?;
    let format = Format::of(&headers);
    s.execute(&request, caller, |mut changeset| async move {
        changeset.live(id, ResourceType::File).await?;
        let deleted = changeset
            .delete_property(
                Parent::File(id),
                DESCRIPTION_KEY,
                Abort::Never,
                Expect::default(),
            )
            .await?;
        Ok((
            changeset,
            format.reply(StatusCode::OK, &views::property_head(&deleted)),
        ))
    })
    .await
}
