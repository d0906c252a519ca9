//! Errors as HTTP responses: every error has a status and a message.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use palimpsest_log::{AppendError, LogError};
use serde_json::json;

/// An HTTP error: its status and a message for the client, sent as `{"error": message}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The response status.
    pub status: StatusCode,
    /// What went wrong, in words the client can act on.
    pub message: String,
}

impl ApiError {
    /// An error with a status and a message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// 400: the request is malformed.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404: no such thing.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    /// 409: the thing changed or is in a state that refuses the request.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    /// 500 for a failure the client cannot fix; the detail goes to the log, not the client.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "internal error");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

impl From<AppendError> for ApiError {
    fn from(e: AppendError) -> Self {
        match e {
            AppendError::WrongExpectedVersion { .. } => ApiError::conflict(e.to_string()),
            AppendError::Invalid(m) => ApiError::bad_request(m),
            AppendError::Refused(r) if r.is_too_large() => {
                ApiError::new(StatusCode::PAYLOAD_TOO_LARGE, r.to_string())
            }
            AppendError::Refused(r) => ApiError::bad_request(r.to_string()),
            AppendError::Log(e) => e.into(),
        }
    }
}

impl From<LogError> for ApiError {
    fn from(e: LogError) -> Self {
        match e {
            LogError::Pool(_) | LogError::WriterStopped => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "the event log is unavailable",
            ),
            other => ApiError::internal(other),
        }
    }
}

impl From<deadpool_postgres::PoolError> for ApiError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        LogError::Pool(e).into()
    }
}

impl From<tokio_postgres::Error> for ApiError {
    fn from(e: tokio_postgres::Error) -> Self {
        ApiError::internal(e)
    }
}
