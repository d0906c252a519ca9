//! Errors as CouchDB answers them: a status and `{"error": kind, "reason": words}`, mapped from
//! the context's typed errors in one place.

use crate::body::BodyError;
use crate::database::DbError;
use crate::document::DocError;
use crate::local::LocalError;
use crate::stored::StoredError;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use palimpsest_web::content::ServeError;
use palimpsest_web::{PlatformError, PlatformKind};
use serde_json::json;

/// An error answered to a CouchDB client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CouchError {
    /// The status.
    pub status: StatusCode,
    /// CouchDB's error kind: `not_found`, `conflict`, `bad_request`, ...
    pub error: &'static str,
    /// What was wrong.
    pub reason: String,
    /// Seconds to wait before trying again (`Retry-After`), for a 429.
    pub retry_after: Option<u64>,
}

impl CouchError {
    /// An error of `kind` with `status`.
    pub fn new(status: StatusCode, error: &'static str, reason: impl Into<String>) -> CouchError {
        CouchError {
            status,
            error,
            reason: reason.into(),
            retry_after: None,
        }
    }

    /// 429 `too_many_requests`: too many failed logins; try again after `seconds`.
    pub fn too_many_logins(seconds: u64) -> CouchError {
        CouchError {
            retry_after: Some(seconds),
            ..Self::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_requests",
                "too many failed logins; wait before trying again",
            )
        }
    }

    /// 400 `bad_request`.
    pub fn bad_request(reason: impl Into<String>) -> CouchError {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", reason)
    }

    /// 404 `not_found`.
    pub fn not_found(reason: impl Into<String>) -> CouchError {
        Self::new(StatusCode::NOT_FOUND, "not_found", reason)
    }

    /// 404 for a database that does not exist.
    pub fn no_database() -> CouchError {
        Self::not_found("Database does not exist.")
    }

    /// 409 `conflict`.
    pub fn conflict() -> CouchError {
        Self::new(
            StatusCode::CONFLICT,
            "conflict",
            "Document update conflict.",
        )
    }

    /// 500: the detail goes to the log, not to the client.
    pub fn internal(detail: impl std::fmt::Display) -> CouchError {
        tracing::error!(error = %detail, "internal error");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal_server_error",
            "internal error",
        )
    }

    /// The `{"error", "reason"}` object (also used inside `_bulk_docs` and `_bulk_get` answers).
    pub fn body(&self) -> serde_json::Value {
        json!({ "error": self.error, "reason": self.reason })
    }
}

impl IntoResponse for CouchError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body())).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, seconds.into());
        }
        response
    }
}

/// A stored attachment file that was not served: an altered one is a 500 whose reason names
/// the file (its location, `<sha1[0..2]>/<sha1>`; the mismatch was logged and counted where it
/// was found); one that could not be read is an internal error.
impl From<ServeError> for CouchError {
    fn from(e: ServeError) -> Self {
        match e {
            ServeError::Altered { .. } => Self::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal_server_error",
                e.to_string(),
            ),
            ServeError::Location(_) | ServeError::Io { .. } => Self::internal(e),
        }
    }
}

impl From<DocError> for CouchError {
    fn from(e: DocError) -> Self {
        match e {
            DocError::Conflict => CouchError::conflict(),
            DocError::NotFound => CouchError::not_found("missing"),
        }
    }
}

impl From<LocalError> for CouchError {
    fn from(e: LocalError) -> Self {
        match e {
            LocalError::Conflict => CouchError::conflict(),
            LocalError::NotFound => CouchError::not_found("missing"),
        }
    }
}

impl From<DbError> for CouchError {
    fn from(e: DbError) -> Self {
        match e {
            DbError::Exists => CouchError::new(
                StatusCode::PRECONDITION_FAILED,
                "file_exists",
                e.to_string(),
            ),
            DbError::Missing => CouchError::no_database(),
        }
    }
}

impl From<BodyError> for CouchError {
    fn from(e: BodyError) -> Self {
        match e {
            BodyError::BadSpecial(_) => {
                CouchError::new(StatusCode::BAD_REQUEST, "doc_validation", e.to_string())
            }
            BodyError::NotObject(_) | BodyError::BadType(_) | BodyError::TooDeep => {
                CouchError::bad_request(e.to_string())
            }
        }
    }
}

impl From<StoredError> for CouchError {
    fn from(e: StoredError) -> Self {
        CouchError::internal(e)
    }
}

/// The platform's failures in CouchDB's words: a conflict is CouchDB's own `conflict`, the
/// rest keep the platform's status with a CouchDB-style error name.
impl From<PlatformError> for CouchError {
    fn from(e: PlatformError) -> Self {
        let error = match e.kind {
            PlatformKind::Conflict => return CouchError::conflict(),
            PlatformKind::KeyReused => "idempotency_key_reused",
            PlatformKind::Malformed => "bad_request",
            PlatformKind::TooLarge => "too_large",
            PlatformKind::Unavailable => "service_unavailable",
            PlatformKind::Internal => "internal_server_error",
        };
        CouchError::new(e.status(), error, e.message)
    }
}

palimpsest_web::renders_platform_failures!(CouchError);

impl From<palimpsest_events::DecodeError> for CouchError {
    fn from(e: palimpsest_events::DecodeError) -> Self {
        CouchError::internal(e)
    }
}
