//! Every refusal of the context as an HTTP status and a JSON body, decided here and only here.

use crate::content::ContentError;
use crate::operation::{OperationError, OperationFailure};
use crate::read::ReadError;
use crate::resource::ResourceError;
use axum::http::StatusCode;
use palimpsest_web::ApiError;
use palimpsest_web::content::ServeError;

/// The status of an operation's refusal.
fn status(e: &OperationError) -> StatusCode {
    match e {
        OperationError::Resource(resource) => match resource {
            ResourceError::NotFound(_) | ResourceError::Deleted(_) => StatusCode::NOT_FOUND,
            ResourceError::StaleEtag { .. } => StatusCode::PRECONDITION_FAILED,
            ResourceError::NoSuchRevision { .. } | ResourceError::HeadHidden(_) => {
                StatusCode::BAD_REQUEST
            }
            ResourceError::NotDeleted(_)
            | ResourceError::StaleRevision { .. }
            | ResourceError::NotArchived(_)
            | ResourceError::AlreadyExists(_) => StatusCode::CONFLICT,
        },
        OperationError::Forbidden(_) => StatusCode::FORBIDDEN,
        OperationError::NoSuchName { .. } | OperationError::WrongType(..) => StatusCode::NOT_FOUND,
        OperationError::InvalidName(_) => StatusCode::BAD_REQUEST,
        OperationError::NameTaken { .. }
        | OperationError::PropertyExists(_)
        | OperationError::EtagRequired(_)
        | OperationError::NoFreeName(_) => StatusCode::CONFLICT,
    }
}

impl From<OperationError> for ApiError {
    fn from(e: OperationError) -> Self {
        ApiError::new(status(&e), e.to_string())
    }
}

/// A command's failure as an HTTP error: the refusal's own status, or the platform's.
pub fn answer(e: OperationFailure) -> ApiError {
    e.into()
}

/// A read failure: the database is unavailable (503) or failed (500, logged).
pub fn read(e: ReadError) -> ApiError {
    match e {
        ReadError::Pool(pool) => {
            tracing::warn!(error = %pool, "read model unavailable");
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the read model is unavailable",
            )
        }
        ReadError::Db(db) => ApiError::internal(db),
    }
}

/// An upload that could not be received.
pub fn content(e: ContentError) -> ApiError {
    match e {
        ContentError::Body(message) => ApiError::bad_request(message),
        ContentError::Io(io) => ApiError::internal(format!("content store: {io}")),
    }
}

/// A stored content file that was not served: an altered one is a 500 whose message names the
/// file (its location, `<sha256[0..2]>/<sha256>`; the mismatch was logged and counted where it
/// was found); one that could not be read is an internal error.
pub fn serve(e: ServeError) -> ApiError {
    match e {
        ServeError::Altered { .. } => {
            ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
        }
        ServeError::Location(_) | ServeError::Io { .. } => ApiError::internal(e),
    }
}
