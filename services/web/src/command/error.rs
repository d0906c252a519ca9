//! Why a command gave no answer of its own: the context refused it, or the platform could not
//! carry it out. [`CommandError::into_refusal`] is the one mapping of the platform's part to
//! HTTP ([`PlatformError`]); each context renders that in its own error format.

use super::attempt::LoadError;
use crate::ApiError;
use crate::platform_error::{LOG_UNAVAILABLE, PlatformError, PlatformKind, log_unreachable};
use palimpsest_events::StreamName;
use palimpsest_log::limits::Refusal;
use palimpsest_log::{AppendError, LogError};
use std::time::Duration;

/// A command that did not succeed. `E` is the context's own typed refusal.
#[derive(Debug, thiserror::Error)]
pub enum CommandError<E> {
    /// The context's decider (or validation) refused the command.
    #[error("{0}")]
    Rejected(E),
    /// The decider cannot accept the command *yet* (records' `REGVER`: its clock has not
    /// passed a stored version; or it refused on a stream it only assumed new): the runner
    /// decides again after `after`, without counting a conflict, and answers `refusal` if every
    /// try ends so.
    #[error("{refusal}")]
    Retry {
        /// The answer when the tries run out.
        refusal: E,
        /// The least pause before the next try.
        after: Duration,
    },
    /// Other writers kept moving a stream the command read, through every retry.
    #[error("{stream} kept changing while the command was decided; retry")]
    Conflict {
        /// The stream that moved last.
        stream: StreamName,
    },
    /// The Idempotency-Key was first used for a different request.
    #[error("this Idempotency-Key was already used for a different request")]
    KeyReused,
    /// The log refused the events as uncarriable by its readers (too large: 413; else 400);
    /// nothing was appended.
    #[error("{0}")]
    Refused(Refusal),
    /// The log found the append itself malformed (400).
    #[error("{0}")]
    Invalid(String),
    /// The log or a read model is unavailable right now; retrying later may work.
    #[error("{0}")]
    Unavailable(String),
    /// A failure the client cannot fix (its detail is logged, never sent).
    #[error("{0}")]
    Internal(String),
}

impl<E> CommandError<E> {
    /// A refusal to decide again after `after` ([`CommandError::Retry`]).
    pub fn retry(refusal: E, after: Duration) -> Self {
        CommandError::Retry { refusal, after }
    }

    /// The context's own refusal, or the platform's failure as HTTP answers it: the one
    /// mapping every context uses (each then renders either in its own format).
    pub fn into_refusal(self) -> Result<E, PlatformError> {
        match self {
            CommandError::Rejected(refusal) | CommandError::Retry { refusal, .. } => Ok(refusal),
            CommandError::Conflict { stream } => Err(PlatformError::new(
                PlatformKind::Conflict,
                format!("{stream} kept changing while the command was decided; retry"),
            )),
            CommandError::KeyReused => Err(PlatformError::new(
                PlatformKind::KeyReused,
                "this Idempotency-Key was already used for a different request",
            )),
            CommandError::Refused(refusal) => Err(refusal.into()),
            CommandError::Invalid(message) => {
                Err(PlatformError::new(PlatformKind::Malformed, message))
            }
            CommandError::Unavailable(message) => Err(PlatformError::unavailable(message)),
            CommandError::Internal(detail) => Err(PlatformError::internal(detail)),
        }
    }

    /// The same platform error with another refusal type (the refusal itself converted by
    /// `f`).
    pub fn map_rejected<F>(self, f: impl FnOnce(E) -> F) -> CommandError<F> {
        match self {
            CommandError::Rejected(e) => CommandError::Rejected(f(e)),
            CommandError::Retry { refusal, after } => CommandError::Retry {
                refusal: f(refusal),
                after,
            },
            CommandError::Conflict { stream } => CommandError::Conflict { stream },
            CommandError::KeyReused => CommandError::KeyReused,
            CommandError::Refused(r) => CommandError::Refused(r),
            CommandError::Invalid(m) => CommandError::Invalid(m),
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
                CommandError::Internal(format!("a recorded event does not decode: {decode}"))
            }
        }
    }
}

impl<E> From<AppendError> for CommandError<E> {
    /// A failed append, its refusal kept typed (413 stays 413); a stream that moved is a
    /// conflict.
    fn from(e: AppendError) -> Self {
        match e {
            AppendError::WrongExpectedVersion { stream, .. } => CommandError::Conflict { stream },
            AppendError::Invalid(message) => CommandError::Invalid(message),
            AppendError::Refused(refusal) => CommandError::Refused(refusal),
            AppendError::Log(e) => log_error(e),
        }
    }
}

/// A log failure as a command error, told apart as [`PlatformError`] tells it: unreachable is
/// 503, anything else 500 with its causes as detail (logged once, when it becomes HTTP).
pub(crate) fn log_error<E>(e: LogError) -> CommandError<E> {
    if log_unreachable(&e) {
        return CommandError::Unavailable(LOG_UNAVAILABLE.into());
    }
    CommandError::Internal(crate::error::report(&e))
}

/// Contexts whose refusals are [`ApiError`]s (or convert to one) answer platform errors with
/// the platform's statuses.
impl<E: Into<ApiError>> From<CommandError<E>> for ApiError {
    fn from(e: CommandError<E>) -> Self {
        match e.into_refusal() {
            Ok(refusal) => refusal.into(),
            Err(failure) => failure.into(),
        }
    }
}
