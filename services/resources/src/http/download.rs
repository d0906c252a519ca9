//! Serving a revision's content: the bytes from the row, or streamed from the content store
//! (never whole in memory), with its MIME type and ETag. A stored file is checked against the
//! sha256 its event recorded (the file's name: the read model keeps only the location) before
//! the first byte is sent: an altered one answers 500 naming
//! it ([`palimpsest_web::content::open_verified`]).

use super::Resources;
use super::auth::Caller;
use super::error::{self, read};
use crate::content::Sha256Hex;
use crate::read::{ContentBody, RevisionRow};
use crate::resource::etag;
use axum::body::Body;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_events::resources::ResourceType;
use palimpsest_web::ApiError;
use palimpsest_web::content;

/// Which kind of resource a route serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// A file.
    File,
    /// A property.
    Property,
}

impl Wanted {
    fn of(self) -> ResourceType {
        match self {
            Wanted::File => ResourceType::File,
            Wanted::Property => ResourceType::Property,
        }
    }
}

/// The revision (`None`: the head) of `res_id` if the caller may see it: a deleted resource is
/// only shown to the admin (it is in the archive), a hidden revision likewise (403).
pub async fn visible(
    s: &Resources,
    caller: Caller,
    res_id: i64,
    revision: Option<i64>,
    wanted: Wanted,
) -> Result<RevisionRow, ApiError> {
    let row = match revision {
        None => s.reader.head(res_id).await,
        Some(rev) => s.reader.revision(res_id, rev).await,
    }
    .map_err(read)?;
    let kind = wanted.of().word();
    let row = row
        .filter(|row| row.revision.res_type == wanted.of())
        .ok_or_else(|| match revision {
            Some(rev) => ApiError::not_found(format!("no revision {rev} of {kind} {res_id}")),
            None => ApiError::not_found(format!("{kind} {res_id} not found")),
        })?;
    if row.resource_deleted && !caller.admin {
        return Err(ApiError::not_found(format!("{kind} {res_id} is deleted")));
    }
    if row.hidden && !caller.admin {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("revision {} of {kind} {res_id} is hidden", row.revision.rev),
        ));
    }
    Ok(row)
}

/// The content of a visible revision as a response.
pub async fn serve(
    s: &Resources,
    caller: Caller,
    res_id: i64,
    revision: Option<i64>,
    wanted: Wanted,
) -> Result<Response, ApiError> {
    let row = visible(s, caller, res_id, revision, wanted).await?;
    content(s, &row).await
}

/// The bytes of `row`'s content.
pub async fn content(s: &Resources, row: &RevisionRow) -> Result<Response, ApiError> {
    let revision = &row.revision;
    let stored = s
        .reader
        .content(revision.content.rescontent_id)
        .await
        .map_err(read)?
        .ok_or_else(|| {
            ApiError::internal(format!(
                "content {} missing",
                revision.content.rescontent_id
            ))
        })?;
    let headers = [
        (header::CONTENT_TYPE, revision.mimetype.clone()),
        (header::ETAG, etag(revision)),
        (header::CONTENT_LENGTH, revision.content.size.to_string()),
    ];
    match stored {
        ContentBody::Inline(bytes) => Ok((headers, bytes).into_response()),
        ContentBody::Location(location) => {
            let verified = content::open_verified(
                &s.content,
                &location,
                content::key_of(&location),
                Sha256Hex::default(),
                "resources",
            )
            .await
            .map_err(error::serve)?;
            let stream = tokio_util::io::ReaderStream::with_capacity(verified.file, 64 * 1024);
            Ok((headers, Body::from_stream(stream)).into_response())
        }
    }
}
