//! Standalone attachments: `GET|PUT|DELETE /{db}/{doc}/{name}` (`?rev=` names the revision).
//! Bytes stream both ways: an upload goes to the attachment store as it arrives, a download
//! comes from the folder as it is sent.

use super::error::CouchError;
use super::params::Params;
use super::range::{self, Wanted};
use crate::access::{auth, scope};
use crate::attachments::{self, Uploaded, stubs};
use crate::body::Incoming;
use crate::command::Reply;
use crate::document::command::{AttachmentEdit, Item, Shape, write};
use crate::read;
use crate::rev::RevId;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_web::AppState;
use palimpsest_web::command::CommandRequest;
use palimpsest_web::content::ContentError;
use tokio::io::{AsyncReadExt, AsyncSeekExt};
use tokio_util::io::ReaderStream;

/// `GET /{db}/{doc}/{name}`: the attachment's bytes with its media type, streamed from the
/// attachment folder when stored there (never whole in memory; checked against its recorded
/// SHA-1 before the first byte, an altered file answering 500), CouchDB's `ETag` (the quoted
/// base64 MD5), `If-None-Match` answered with 304, and one `Range` answered with 206.
pub async fn get(
    State(state): State<AppState>,
    Path((db, doc_id, name)): Path<(String, String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
) -> Result<Response, CouchError> {
    let client = read::client(&state).await?;
    read::database(&client, &db).await?;
    let caller = auth::caller(&state, &client, &db, &headers).await?;
    let stored = read::document(&client, &db, &doc_id)
        .await?
        .ok_or_else(|| CouchError::not_found("missing"))?;
    let mut tree = crate::access::revisions::readable_tree(&caller, &stored)?;
    if let Some(rev) = params.get("rev")
        && RevId::parse(rev)
            .ok()
            .and_then(|parsed| tree.get(&parsed))
            .is_some_and(|node| node.body.is_none())
    {
        // An older revision: its body is kept until compaction.
        let kept = read::old_revisions(&client, &db, &doc_id, std::slice::from_ref(rev)).await?;
        crate::access::revisions::restore_old(&caller, &mut tree, kept);
    }
    let by_revision = params.contains_key("rev") && crate::access::revisions::any_readable(&tree);
    if caller.sees(&stored.sync) != auth::Visibility::Visible && !by_revision {
        return Err(auth::forbidden());
    }
    let node = match params.get("rev") {
        Some(rev) => {
            let rev = RevId::parse(rev).map_err(|e| CouchError::bad_request(e.to_string()))?;
            tree.get(&rev).filter(|n| n.body.is_some()).cloned()
        }
        None => tree.winner().filter(|w| !w.deleted).cloned(),
    }
    .ok_or_else(|| CouchError::not_found("missing"))?;
    let stub = node
        .body
        .as_deref()
        .map(stubs)
        .and_then(|mut all| all.remove(&name))
        .ok_or_else(|| CouchError::not_found("Document is missing attachment"))?;
    let etag = format!(
        "\"{}\"",
        stub.digest.strip_prefix("md5-").unwrap_or(&stub.digest)
    );
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim() == etag);
    if unchanged {
        return Ok((StatusCode::NOT_MODIFIED, [(header::ETAG, etag)]).into_response());
    }
    let store = scope::attachments()?;
    let (length, content) = read::attachment_content(&store, &client, &stub.digest)
        .await?
        .ok_or_else(|| CouchError::internal(format!("attachment bytes {} missing", stub.digest)))?;
    let wanted = range::wanted(
        headers.get(header::RANGE).and_then(|v| v.to_str().ok()),
        length,
    );
    let (status, start, count) = match wanted {
        Wanted::Whole => (StatusCode::OK, 0, length),
        Wanted::Part { start, end } => (StatusCode::PARTIAL_CONTENT, start, end - start + 1),
        Wanted::Unsatisfiable => {
            return Ok((
                StatusCode::RANGE_NOT_SATISFIABLE,
                [(header::CONTENT_RANGE, format!("bytes */{length}"))],
                axum::Json(serde_json::json!({
                    "error": "requested_range_not_satisfiable",
                    "reason": "Requested range not satisfiable"
                })),
            )
                .into_response());
        }
    };
    let body = content_body(content, start, count).await?;
    let mut response = (
        status,
        [
            (
                header::CONTENT_TYPE,
                served_content_type(&doc_id, &name, stub.content_type),
            ),
            (header::ETAG, etag),
            (header::ACCEPT_RANGES, "bytes".to_owned()),
            (header::CONTENT_LENGTH, count.to_string()),
        ],
        body,
    )
        .into_response();
    if status == StatusCode::PARTIAL_CONTENT
        && let Ok(value) = format!("bytes {start}-{}/{length}", start + count - 1).parse()
    {
        response.headers_mut().insert(header::CONTENT_RANGE, value);
    }
    Ok(response)
}

/// The `Content-Type` an attachment is served with: its own, or `application/octet-stream`
/// (logged) for one written before control characters were refused at write time, which could
/// not be a header value (every download of it was a 500).
fn served_content_type(doc_id: &str, name: &str, content_type: String) -> String {
    if axum::http::HeaderValue::from_str(&content_type).is_ok() {
        return content_type;
    }
    tracing::warn!(
        doc_id,
        name,
        content_type,
        "stored content_type is no header value; served as application/octet-stream"
    );
    "application/octet-stream".to_owned()
}

/// `count` bytes from `start` of the content: a slice of inline bytes, or the file (checked
/// against its digest whole before this, whatever the range) streamed chunk by chunk.
async fn content_body(
    content: read::AttachmentContent,
    start: u64,
    count: u64,
) -> Result<Body, CouchError> {
    match content {
        read::AttachmentContent::Inline(bytes) => {
            let from = usize::try_from(start)
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            let to = usize::try_from(start + count)
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            Ok(Body::from(bytes[from..to].to_vec()))
        }
        read::AttachmentContent::File(verified) => {
            let mut file = verified.file;
            file.seek(std::io::SeekFrom::Start(start))
                .await
                .map_err(|e| CouchError::internal(format!("attachment file: {e}")))?;
            Ok(Body::from_stream(ReaderStream::with_capacity(
                file.take(count),
                64 * 1024,
            )))
        }
    }
}

fn base_rev(params: &Params, headers: &HeaderMap) -> Option<String> {
    params.get("rev").cloned().or_else(|| {
        headers
            .get(header::IF_MATCH)
            .and_then(|v| v.to_str().ok())
            .map(|v| v.trim_matches('"').to_owned())
    })
}

fn item(doc_id: String, rev: Option<String>, edit: AttachmentEdit) -> Item {
    Item {
        doc_id,
        doc: Incoming {
            id: None,
            rev,
            revisions: None,
            deleted: false,
            body: "{}".into(),
        },
        attachment: Some(edit),
    }
}

/// `PUT /{db}/{doc}/{name}?rev=`: a new revision with this attachment. The body streams into
/// the attachment store (one chunk in memory at a time) while its digests are computed; the
/// revision's events then name it by digest and location.
pub async fn put(
    State(state): State<AppState>,
    Path((db, doc_id, name)): Path<(String, String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    request: CommandRequest,
    body: Body,
) -> Result<Reply, CouchError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/octet-stream")
        .to_owned();
    let writer = auth::caller_of(&state, &db, &headers).await?.writer();
    let store = scope::attachments()?;
    let attachment = attachments::receive(&store, body.into_data_stream())
        .await
        .map_err(|e| match e {
            ContentError::Body(reason) => CouchError::bad_request(reason),
            ContentError::Io(io) => CouchError::internal(format!("attachment store: {io}")),
        })?;
    let edit = AttachmentEdit::Put {
        name,
        upload: Uploaded {
            content_type,
            revpos: None,
            attachment,
        },
    };
    let items = vec![item(doc_id, base_rev(&params, &headers), edit)];
    write(
        &state,
        &request,
        &writer,
        &db,
        items,
        true,
        Shape::Single(StatusCode::CREATED),
    )
    .await
}

/// `DELETE /{db}/{doc}/{name}?rev=`: a new revision without it.
pub async fn delete(
    State(state): State<AppState>,
    Path((db, doc_id, name)): Path<(String, String, String)>,
    Query(params): Query<Params>,
    headers: HeaderMap,
    request: CommandRequest,
) -> Result<Reply, CouchError> {
    let rev = base_rev(&params, &headers).ok_or_else(CouchError::conflict)?;
    let writer = auth::caller_of(&state, &db, &headers).await?.writer();
    let items = vec![item(doc_id, Some(rev), AttachmentEdit::Delete { name })];
    write(
        &state,
        &request,
        &writer,
        &db,
        items,
        true,
        Shape::Single(StatusCode::OK),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stored_content_type_that_is_no_header_value_is_served_as_octet_stream() {
        let served = |text: &str| served_content_type("doc", "a.txt", text.to_owned());
        assert_eq!(
            served("text/plain; charset=utf-8"),
            "text/plain; charset=utf-8"
        );
        assert_eq!(
            served("text/plain\r\nX-Injected: 1"),
            "application/octet-stream"
        );
        assert_eq!(served("text/plain\u{0}"), "application/octet-stream");
    }
}
