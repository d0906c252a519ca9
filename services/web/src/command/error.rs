//! Why a command gave no answer of its own: the context refused it, or the platform could not
//! carry it out. Each context maps these to its HTTP shape in one place.

use super::attempt::LoadError;
use crate::ApiError;
use axum::http::StatusCode;
use palimpsest_events::StreamName;
use palimpsest_log::LogError;

/// A command that did not succeed. `E` is the context's own typed refusal.
#[derive(Debug, thiserror::Error)]
pub enum CommandError<E> {
    /// The context's decider (or validation) refused the command.
    #[error("{0}")]
    Rejected(E),
    /// Other writers kept moving a stream the command read, through every retry.
    #[error("{stream} kept changing while the command was decided; retry")]
    Conflict {
        /// The stream that moved last.
        stream: StreamName,
    },
    /// The Idempotency-Key was first used for a different request.
    #[error("this Idempotency-Key was already used for a different request")]
    KeyReused,
    /// The log refused the append as malformed or uncarriable (nothing was appended).
    #[error("{0}")]
    Refused(String),
    /// The log or a read model is unavailable right now; retrying later may work.
    #[error("{0}")]
    Unavailable(String),
    /// A failure the client cannot fix (logged where it happened).
    #[error("{0}")]
    Internal(String),
}

impl<E> CommandError<E> {
    /// The HTTP status of the platform's errors; `None` for the context's own refusals.
    pub fn platform_status(&self) -> Option<StatusCode> {
        match self {
            CommandError::Rejected(_) => None,
            CommandError::Conflict { .. } => Some(StatusCode::CONFLICT),
            CommandError::KeyReused => Some(StatusCode::UNPROCESSABLE_ENTITY),
            CommandError::Refused(_) => Some(StatusCode::BAD_REQUEST),
            CommandError::Unavailable(_) => Some(StatusCode::SERVICE_UNAVAILABLE),
            CommandError::Internal(_) => Some(StatusCode::INTERNAL_SERVER_ERROR),
        }
    }

    /// The message of the platform's errors; `None` for the context's own refusals.
    pub fn platform_message(&self) -> Option<String> {
        match self {
            CommandError::Rejected(_) => None,
            CommandError::Conflict { stream } => Some(format!(
                "{stream} kept changing while the command was decided; retry"
            )),
            CommandError::KeyReused => {
                Some("this Idempotency-Key was already used for a different request".into())
            }
            CommandError::Refused(m) | CommandError::Unavailable(m) | CommandError::Internal(m) => {
                Some(m.clone())
            }
        }
    }

    /// The same platform error with another refusal type (the refusal itself converted by
    /// `f`).
    pub fn map_rejected<F>(self, f: impl FnOnce(E) -> F) -> CommandError<F> {
        match self {
            CommandError::Rejected(e) => CommandError::Rejected(f(e)),
            CommandError::Conflict { stream } => CommandError::Conflict { stream },
            CommandError::KeyReused => CommandError::KeyReused,
            CommandError::Refused(m) => CommandError::Refused(m),
            CommandError::Unavailable(m) => CommandError::Unavailable(m),
            CommandError::Internal(m) => CommandError::Internal(m),
        }
    }
}

impl<E> From<LoadError> for CommandError<E> {
    fn from(e: LoadError) -> Self {
        match e {
            LoadError::Log(log) => log_error(log),
            decode @ LoadError::Decode { .. } => {
                tracing::error!(error = %decode, "a recorded event does not decode");
                CommandError::Internal(decode.to_string())
            }
        }
    }
}

/// A log failure as a command error: unreachable is 503, anything else 500 (logged).
pub(crate) fn log_error<E>(e: LogError) -> CommandError<E> {
    match e {
        LogError::Pool(_) | LogError::WriterStopped => {
            tracing::warn!(error = %e, "the event log is unavailable");
            CommandError::Unavailable("the event log is unavailable".into())
        }
        other => {
            tracing::error!(error = %other, "the event log failed");
            CommandError::Internal(other.to_string())
        }
    }
}

/// Contexts whose refusals are [`ApiError`]s (or convert to one) answer platform errors with
/// the platform's statuses.
impl<E: Into<ApiError>> From<CommandError<E>> for ApiError {
    fn from(e: CommandError<E>) -> Self {
        let status = e.platform_status();
        let message = e.platform_message();
        match (e, status, message) {
            (CommandError::Rejected(refusal), _, _) => refusal.into(),
            (CommandError::Internal(detail), _, _) => ApiError::internal(detail),
            (_, Some(status), Some(message)) => ApiError::new(status, message),
            _ => ApiError::internal("a command error without status"),
        }
    }
}
