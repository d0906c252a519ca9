//! Properties of pages, files, users and the site, with ETags and `abort=never|modified|exists`.

use super::auth::{Caller, Writer};
use super::doc::Format;
use super::download::{self, Wanted};
use super::error::{content as content_error, read};
use super::extract::{PathParams, QueryParams};
use super::permissions;
use super::views::{self, Shown};
use super::{Resources, params};
use crate::content::{self, Upload};
use crate::operation::{Abort, Changeset, OperationFailure, PropertyWrite};
use crate::resource::Expect;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use palimpsest_events::resources::{Parent, ResourceType, Revision};
use palimpsest_web::ApiError;
use palimpsest_web::command::CommandRequest;
use serde_json::Value;
use std::collections::HashMap;

type Params = HashMap<String, String>;

const DEFAULT_TYPE: &str = "text/plain";

/// The parent a route names: `pageid`, `fileid`, `userid`, or the site.
fn parent(path: &Params) -> Result<Parent, ApiError> {
    let get = |name: &str| path.get(name).map(String::as_str);
    match (get("pageid"), get("fileid"), get("userid")) {
        (Some(id), _, _) => params::id(id, "pageid").map(Parent::Page),
        (_, Some(id), _) => params::id(id, "fileid").map(Parent::File),
        (_, _, Some(id)) => params::id(id, "userid").map(Parent::User),
        _ => Ok(Parent::Site),
    }
}

fn key(path: &Params) -> Result<String, ApiError> {
    params::name(path.get("key").map_or("", String::as_str), "key")
}

fn abort(query: &Params, default: Abort) -> Result<Abort, ApiError> {
    match query.get("abort") {
        None => Ok(default),
        Some(text) => Abort::parse(text).ok_or_else(|| {
            ApiError::bad_request(format!(
                "abort must be never, modified or exists, got `{text}`"
            ))
        }),
    }
}

/// A file parent must be a live file.
async fn check_parent(changeset: &mut Changeset, parent: Parent) -> Result<(), OperationFailure> {
    if let Parent::File(id) = parent {
        changeset.live(id, ResourceType::File).await?;
    }
    Ok(())
}

fn element(revision: &Revision) -> crate::http::doc::Element {
    views::property(revision, Shown::head(revision))
}

/// `GET …/properties`: the live properties.
pub async fn list(
    State(s): State<Resources>,
    caller: Caller,
    PathParams(path): PathParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let parent = parent(&path)?;
    permissions::properties_of(caller, parent)?;
    let rows = s
        .reader
        .children(ResourceType::Property, parent)
        .await
        .map_err(read)?;
    let items = rows
        .iter()
        .map(|row| views::property(&row.revision, Shown::of(row)))
        .collect();
    let element = views::list("properties", items).attr("href", views::properties_href(parent));
    Ok(Format::of(&headers)
        .reply(StatusCode::OK, &element)
        .into_response())
}

/// The property a read route names, if `caller` may read it.
async fn row_of(s: &Resources, caller: Caller, path: &Params) -> Result<i64, ApiError> {
    let (parent, key) = (parent(path)?, key(path)?);
    permissions::properties_of(caller, parent)?;
    let row = s
        .reader
        .child(ResourceType::Property, parent, &key)
        .await
        .map_err(read)?
        .ok_or_else(|| ApiError::not_found(format!("no property `{key}` on {parent}")))?;
    Ok(row.revision.res_id)
}

/// `GET …/properties/{key}?revision=`: the value, with its MIME type and ETag.
pub async fn value(
    State(s): State<Resources>,
    caller: Caller,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
) -> Result<Response, ApiError> {
    let res_id = row_of(&s, caller, &path).await?;
    let revision = params::revision(query.get("revision").map(String::as_str))?;
    download::serve(&s, caller, res_id, revision, Wanted::Property).await
}

/// `GET …/properties/{key}/info`: the property's description.
pub async fn info(
    State(s): State<Resources>,
    caller: Caller,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let res_id = row_of(&s, caller, &path).await?;
    let revision = params::revision(query.get("revision").map(String::as_str))?;
    let row = download::visible(&s, caller, res_id, revision, Wanted::Property).await?;
    let element = views::property(&row.revision, Shown::of(&row));
    Ok(Format::of(&headers)
        .reply(StatusCode::OK, &element)
        .into_response())
}

/// `PUT …/properties/{key}?abort=&etag=` (or `If-Match`): sets the value (the body, streamed).
#[allow(clippy::too_many_arguments)]
pub async fn put(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let (parent, name) = (parent(&path)?, key(&path)?);
    permissions::properties_of(caller, parent)?;
    let abort = abort(&query, Abort::Modified)?;
    let expect = params::expect(None, &headers, query.get("etag").map(String::as_str))?;
    let mimetype = params::mimetype(&headers, DEFAULT_TYPE)?;
    let upload = content::receive(&s.content, body.into_data_stream())
        .await
        .map_err(content_error)?;
    let write = PropertyWrite {
        parent,
        name,
        upload,
        mimetype,
        abort,
        expect,
    };
    let format = Format::of(&headers);
    let write = &write;
    s.execute(&request, caller, |mut changeset| async move {
        check_parent(&mut changeset, parent).await?;
        let head = changeset.put_property(write.clone()).await?;
        Ok((changeset, format.reply(StatusCode::OK, &element(&head))))
    })
    .await
}

/// `POST …/properties` with `Slug: <key>`: creates a property (409 if it exists).
pub async fn create(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let parent = parent(&path)?;
    permissions::properties_of(caller, parent)?;
    let slug = headers
        .get("slug")
        .and_then(|v| v.to_str().ok())
        .ok_or_else(|| ApiError::bad_request("the Slug header must name the property"))?;
    let name = params::name(slug, "Slug")?;
    let mimetype = params::mimetype(&headers, DEFAULT_TYPE)?;
    let upload = content::receive(&s.content, body.into_data_stream())
        .await
        .map_err(content_error)?;
    let write = PropertyWrite {
        parent,
        name,
        upload,
        mimetype,
        abort: Abort::Exists,
        expect: Expect::default(),
    };
    let format = Format::of(&headers);
    let write = &write;
    s.execute(&request, caller, |mut changeset| async move {
        check_parent(&mut changeset, parent).await?;
        let head = changeset.put_property(write.clone()).await?;
        Ok((changeset, format.reply(StatusCode::OK, &element(&head))))
    })
    .await
}

/// One entry of a batch: set (with contents) or delete (without).
#[derive(Clone)]
struct Entry {
    name: String,
    etag: Option<String>,
    value: Option<(Upload, String)>,
}

fn text_of(value: &Value, what: &str) -> Result<Option<String>, ApiError> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        _ => Err(ApiError::bad_request(format!("{what} must be a string"))),
    }
}

async fn entry(s: &Resources, index: usize, item: &Value) -> Result<Entry, ApiError> {
    let at = |field: &str| format!("property[{index}].{field}");
    let name = text_of(item.get("@name").unwrap_or(&Value::Null), &at("@name"))?
        .ok_or_else(|| ApiError::bad_request(format!("{} is required", at("@name"))))?;
    let name = params::name(&name, &at("@name"))?;
    let etag = text_of(item.get("@etag").unwrap_or(&Value::Null), &at("@etag"))?;
    let value = match item.get("contents") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some((text.clone(), DEFAULT_TYPE.to_owned())),
        Some(contents @ Value::Object(_)) => {
            let text = text_of(
                contents.get("#text").unwrap_or(&Value::Null),
                &at("contents.#text"),
            )?;
            let kind = text_of(
                contents.get("@type").unwrap_or(&Value::Null),
                &at("contents.@type"),
            )?;
            Some((
                text.unwrap_or_default(),
                kind.unwrap_or_else(|| DEFAULT_TYPE.to_owned()),
            ))
        }
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "{} must be an object or a string",
                at("contents")
            )));
        }
    };
    let value = match value {
        Some((text, kind)) => {
            if text.contains('\u{0}') || kind.chars().any(char::is_control) || kind.len() > 255 {
                return Err(ApiError::bad_request(format!(
                    "{} is not storable",
                    at("contents")
                )));
            }
            let upload = content::receive_bytes(&s.content, Bytes::from(text))
                .await
                .map_err(content_error)?;
            Some((upload, kind))
        }
        None => None,
    };
    Ok(Entry { name, etag, value })
}

/// The batch document: Deki's `<properties>` when the body is XML (`Content-Type` names XML),
/// else its JSON form.
fn batch_document(headers: &HeaderMap, body: &[u8]) -> Result<Value, ApiError> {
    if !super::xml_body::is_xml(headers) {
        return serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the body must be JSON or XML: {e}")));
    }
    let (root, document) =
        super::xml_body::document(body).map_err(|e| ApiError::bad_request(e.to_string()))?;
    if root != "properties" {
        return Err(ApiError::bad_request(format!(
            "the XML document must be <properties>, not <{root}>"
        )));
    }
    Ok(document)
}

/// `PUT …/properties` with `{"property": [{"@name", "@etag", "contents": {"@type", "#text"}}]}`:
/// sets (or, without `contents`, deletes) several properties in ONE changeset: all or nothing.
/// Deki's XML form (`<properties><property name="…" etag="…"><contents type="…">…`) is read
/// the same way.
pub async fn batch(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let parent = parent(&path)?;
    permissions::properties_of(caller, parent)?;
    let abort = abort(&query, Abort::Modified)?;
    let document = batch_document(&headers, &body)?;
    let items = match document.get("property") {
        Some(Value::Array(items)) => items.clone(),
        Some(item @ Value::Object(_)) => vec![item.clone()],
        _ => {
            return Err(ApiError::bad_request(
                "property must be an object or an array of objects",
            ));
        }
    };
    if items.is_empty() || items.len() > 100 {
        return Err(ApiError::bad_request("property must list 1-100 properties"));
    }
    let mut entries = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        entries.push(entry(&s, index, item).await?);
    }
    let format = Format::of(&headers);
    let entries = &entries;
    s.execute(&request, caller, |mut changeset| async move {
        check_parent(&mut changeset, parent).await?;
        let mut results = Vec::new();
        for entry in entries.clone() {
            let expect = Expect {
                revision: None,
                etag: entry.etag.clone(),
            };
            let revision = match entry.value {
                Some((upload, mimetype)) => {
                    changeset
                        .put_property(PropertyWrite {
                            parent,
                            name: entry.name.clone(),
                            upload,
                            mimetype,
                            abort,
                            expect,
                        })
                        .await?
                }
                None => {
                    changeset
                        .delete_property(parent, &entry.name, abort, expect)
                        .await?
                }
            };
            results.push(element(&revision));
        }
        let list = views::list("properties", results).attr("href", views::properties_href(parent));
        Ok((changeset, format.reply(StatusCode::OK, &list)))
    })
    .await
}

/// `DELETE …/properties/{key}?abort=&etag=`.
pub async fn delete(
    State(s): State<Resources>,
    Writer(caller): Writer,
    request: CommandRequest,
    PathParams(path): PathParams,
    QueryParams(query): QueryParams,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (parent, name) = (parent(&path)?, key(&path)?);
    permissions::properties_of(caller, parent)?;
    let abort = abort(&query, Abort::Never)?;
    let expect = params::expect(None, &headers, query.get("etag").map(String::as_str))?;
    let format = Format::of(&headers);
    let (name, expect) = (&name, &expect);
    s.execute(&request, caller, |mut changeset| async move {
        let deleted = changeset
            .delete_property(parent, name, abort, expect.clone())
            .await?;
        Ok((changeset, format.reply(StatusCode::OK, &element(&deleted))))
    })
    .await
}
