//! Every refusal as `{"error": {"code", "message"}}` with its status, mapped in one place.

use crate::error::RecordsError;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use palimpsest_web::{PlatformError, PlatformKind};
use serde_json::json;

/// An HTTP refusal: status, the spec's code, and a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodedError {
    /// The response status.
    pub status: StatusCode,
    /// `REGVER`, `NOTFOUND`, `EXISTS`, `CONFLICT`, `UNIQUE`, `FORBIDDEN`, `BADREQUEST`, or
    /// `INTERNAL` / `UNAVAILABLE` for the server's own failures.
    pub code: &'static str,
    /// What was wrong and where.
    pub message: String,
}

impl CodedError {
    /// 400 BADREQUEST.
    pub fn bad(message: impl Into<String>) -> CodedError {
        RecordsError::bad(message).into()
    }

    /// 403 FORBIDDEN.
    pub fn forbidden(message: impl Into<String>) -> CodedError {
        RecordsError::Forbidden(message.into()).into()
    }

    /// 401 with code FORBIDDEN: no or an unknown bearer token.
    pub fn unauthenticated(message: impl Into<String>) -> CodedError {
        CodedError {
            status: StatusCode::UNAUTHORIZED,
            code: "FORBIDDEN",
            message: message.into(),
        }
    }

    /// 500: the detail goes to the log, not the client.
    pub fn internal(detail: impl std::fmt::Display) -> CodedError {
        tracing::error!(error = %detail, "records: internal error");
        CodedError {
            status: StatusCode::INTERNAL_SERVER_ERROR,
            code: "INTERNAL",
            message: "internal error".into(),
        }
    }

    /// 503: the log or the read model cannot be reached.
    pub fn unavailable(detail: impl std::fmt::Display) -> CodedError {
        tracing::warn!(error = %detail, "records: unavailable");
        CodedError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            code: "UNAVAILABLE",
            message: "the store is unavailable, retry".into(),
        }
    }
}

impl From<RecordsError> for CodedError {
    fn from(e: RecordsError) -> Self {
        let status = match &e {
            RecordsError::BadRequest(_) => StatusCode::BAD_REQUEST,
            RecordsError::Forbidden(_) => StatusCode::FORBIDDEN,
            RecordsError::NotFound(_) => StatusCode::NOT_FOUND,
            RecordsError::Regver { .. }
            | RecordsError::Exists(_)
            | RecordsError::Conflict(_)
            | RecordsError::Unique { .. } => StatusCode::CONFLICT,
            RecordsError::Sealing(_) => return CodedError::internal(e),
        };
        CodedError {
            status,
            code: e.code(),
            message: e.to_string(),
        }
    }
}

impl From<crate::treatment::TreatmentError> for CodedError {
    fn from(e: crate::treatment::TreatmentError) -> Self {
        CodedError::bad(e.to_string())
    }
}

/// The platform's failures with records' codes: a stream that kept changing is `CONFLICT`
/// (409), the log out of reach `UNAVAILABLE` (503), a failure of the server `INTERNAL` (500),
/// and what the client must change `BADREQUEST` with the platform's status (400; 413 for an
/// event too large; 422 for a reused Idempotency-Key).
impl From<PlatformError> for CodedError {
    fn from(e: PlatformError) -> Self {
        match e.kind {
            PlatformKind::Conflict => RecordsError::Conflict(e.message).into(),
            PlatformKind::Unavailable => CodedError::unavailable(e.message),
            PlatformKind::Internal => CodedError {
                status: e.status(),
                code: "INTERNAL",
                message: e.message,
            },
            PlatformKind::KeyReused | PlatformKind::Malformed | PlatformKind::TooLarge => {
                CodedError {
                    status: e.status(),
                    code: "BADREQUEST",
                    message: e.message,
                }
            }
        }
    }
}

palimpsest_web::renders_platform_failures!(CodedError);

impl IntoResponse for CodedError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(json!({"error": {"code": self.code, "message": self.message}})),
        )
            .into_response()
    }
}
