//! The platform's failures as HTTP sees them, decided once for every context: which status a
//! log, runner or read-model failure answers, and in which words.
//!
//! Every context renders a [`PlatformError`] in its own error format (the platform's
//! `{"error"}`, Etherpad's envelope, CouchDB's `{"error","reason"}`, records' `{code, message}`,
//! Deki's XML), choosing only the words its clients know; the status and the kind come from
//! here, so the same failure answers the same status in all five (an event too large is a 413
//! everywhere, the log out of reach a 503 everywhere).

use crate::command::LoadError;
use crate::state::ReadModelStopped;
use axum::http::StatusCode;
use palimpsest_log::limits::Refusal;
use palimpsest_log::{AppendError, LogError};

/// What kind of platform failure it is; each kind has one HTTP status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlatformKind {
    /// A stream the write depended on kept moving (409).
    Conflict,
    /// The Idempotency-Key was first used for another request (422).
    KeyReused,
    /// The log refused the events as malformed or uncarriable by its readers (400).
    Malformed,
    /// An event or the append is larger than the log carries (413).
    TooLarge,
    /// The log or a read model cannot be reached now; a retry may work (503).
    Unavailable,
    /// A failure the client cannot fix; its detail went to the server's log (500).
    Internal,
}

impl PlatformKind {
    /// The kind's HTTP status.
    pub fn status(self) -> StatusCode {
        match self {
            PlatformKind::Conflict => StatusCode::CONFLICT,
            PlatformKind::KeyReused => StatusCode::UNPROCESSABLE_ENTITY,
            PlatformKind::Malformed => StatusCode::BAD_REQUEST,
            PlatformKind::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            PlatformKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
            PlatformKind::Internal => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

/// A failure of the platform, with the words a client may read (an internal failure's detail
/// is logged where it is made, never sent).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PlatformError {
    /// What kind of failure, hence its status.
    pub kind: PlatformKind,
    /// What the client is told.
    pub message: String,
}

impl PlatformError {
    /// A failure of `kind` told as `message`.
    pub fn new(kind: PlatformKind, message: impl Into<String>) -> Self {
        PlatformError {
            kind,
            message: message.into(),
        }
    }

    /// A failure the client cannot fix: `detail` is logged here, the client reads only
    /// "internal error".
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "internal error");
        Self::new(PlatformKind::Internal, "internal error")
    }

    /// The log or a read model is out of reach: logged as a warning, told as `message`.
    pub fn unavailable(message: impl Into<String>) -> Self {
        let message = message.into();
        tracing::warn!(error = %message, "unavailable");
        Self::new(PlatformKind::Unavailable, message)
    }

    /// The failure's HTTP status.
    pub fn status(&self) -> StatusCode {
        self.kind.status()
    }
}

/// Whether a log failure is the log out of reach (a retry may work) rather than a fault.
pub(crate) fn log_unreachable(e: &LogError) -> bool {
    matches!(e, LogError::Pool(_) | LogError::WriterStopped)
}

/// What a client reads when the log is out of reach.
pub(crate) const LOG_UNAVAILABLE: &str = "the event log is unavailable";

impl From<LogError> for PlatformError {
    fn from(e: LogError) -> Self {
        if log_unreachable(&e) {
            tracing::warn!(error = %e, "the event log is unavailable");
            return Self::new(PlatformKind::Unavailable, LOG_UNAVAILABLE);
        }
        Self::internal(crate::error::report(&e))
    }
}

impl From<Refusal> for PlatformError {
    fn from(refusal: Refusal) -> Self {
        let kind = if refusal.is_too_large() {
            PlatformKind::TooLarge
        } else {
            PlatformKind::Malformed
        };
        Self::new(kind, refusal.to_string())
    }
}

impl From<AppendError> for PlatformError {
    fn from(e: AppendError) -> Self {
        match e {
            AppendError::WrongExpectedVersion { .. } => {
                Self::new(PlatformKind::Conflict, e.to_string())
            }
            AppendError::Invalid(message) => Self::new(PlatformKind::Malformed, message),
            AppendError::Refused(refusal) => refusal.into(),
            AppendError::Log(e) => e.into(),
        }
    }
}

impl From<LoadError> for PlatformError {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::Log(log) => log.into(),
            decode @ LoadError::Decode { .. } => {
                Self::internal(format!("a recorded event does not decode: {decode}"))
            }
        }
    }
}

impl From<ReadModelStopped> for PlatformError {
    fn from(e: ReadModelStopped) -> Self {
        Self::unavailable(e.to_string())
    }
}

impl From<deadpool_postgres::PoolError> for PlatformError {
    fn from(e: deadpool_postgres::PoolError) -> Self {
        LogError::Pool(e).into()
    }
}

impl From<tokio_postgres::Error> for PlatformError {
    fn from(e: tokio_postgres::Error) -> Self {
        Self::internal(crate::error::report(&e))
    }
}

/// What [`renders_platform_failures!`](crate::renders_platform_failures) names, reachable from
/// a context's crate through this one.
#[doc(hidden)]
pub mod sources {
    pub use deadpool_postgres::PoolError;
    pub use palimpsest_log::{AppendError, LogError};
    pub use tokio_postgres::Error as PostgresError;
}

/// Implements `From` the log's and Postgres' failures for a context's error type `$error` that
/// renders a [`PlatformError`] (`impl From<PlatformError> for $error`): each goes through the
/// one mapping, so a context writes only how it renders a failure, never which status it has.
#[macro_export]
macro_rules! renders_platform_failures {
    ($error:ty) => {
        impl From<$crate::platform_error::sources::LogError> for $error {
            fn from(e: $crate::platform_error::sources::LogError) -> Self {
                $crate::PlatformError::from(e).into()
            }
        }
        impl From<$crate::platform_error::sources::AppendError> for $error {
            fn from(e: $crate::platform_error::sources::AppendError) -> Self {
                $crate::PlatformError::from(e).into()
            }
        }
        impl From<$crate::platform_error::sources::PoolError> for $error {
            fn from(e: $crate::platform_error::sources::PoolError) -> Self {
                $crate::PlatformError::from(e).into()
            }
        }
        impl From<$crate::platform_error::sources::PostgresError> for $error {
            fn from(e: $crate::platform_error::sources::PostgresError) -> Self {
                $crate::PlatformError::from(e).into()
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_about_size_is_a_413_and_any_other_a_400() {
        let large = Refusal::EventTooLarge {
            stream: "records/doc/k".into(),
            size: 2_000_000,
            max: 921_600,
        };
        assert_eq!(
            PlatformError::from(AppendError::Refused(large)).status(),
            StatusCode::PAYLOAD_TOO_LARGE
        );
        let nul = Refusal::Nul {
            stream: "records/doc/k".into(),
            field: "payload/x".into(),
        };
        assert_eq!(
            PlatformError::from(AppendError::Refused(nul)).status(),
            StatusCode::BAD_REQUEST
        );
    }

    #[test]
    fn a_log_out_of_reach_is_a_503_and_a_corrupt_row_a_500_without_its_detail() {
        let gone = PlatformError::from(LogError::WriterStopped);
        assert_eq!(gone.status(), StatusCode::SERVICE_UNAVAILABLE);
        let corrupt = PlatformError::from(LogError::Corrupt("row 7: secret detail".into()));
        assert_eq!(corrupt.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(corrupt.message, "internal error");
    }
}
