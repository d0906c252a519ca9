//! Why a section command was refused. Each kind maps to one HTTP status in `http::error`.

use crate::section::state::SectionStatus;
use crate::validation::SnapshotError;
use palimpsest_events::atlas::Timestamp;

/// A refused section or submission command; nothing was appended.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SectionError {
    /// No such section.
    #[error("Section not found")]
    SectionNotFound,
    /// The id is taken (a client retried a create with the same id).
    #[error("Section already exists")]
    SectionExists,
    /// A request field is missing or malformed.
    #[error("{field} {reason}")]
    Invalid {
        /// The field.
        field: String,
        /// What is wrong.
        reason: String,
    },
    /// The snapshot failed validation.
    #[error("Invalid snapshot: {0}")]
    InvalidSnapshot(#[from] SnapshotError),
    /// Another actor holds a live lock.
    #[error("Section is locked by {locked_by} until {lock_expires_at}")]
    Locked {
        /// The holder.
        locked_by: String,
        /// When the lock lapses.
        lock_expires_at: Timestamp,
    },
    /// The section's status does not allow the action.
    #[error("Cannot {action} a section in status {}", status.as_str())]
    WrongStatus {
        /// What was attempted.
        action: &'static str,
        /// The section's status.
        status: SectionStatus,
    },
    /// `expected_version` did not match.
    #[error("Section version is {actual}, expected {expected}")]
    VersionMismatch {
        /// What the client expected.
        expected: i64,
        /// The section's version.
        actual: i64,
    },
    /// `expected_head_commit_id` did not match.
    #[error("Section head commit is {}, expected {}", actual.as_deref().unwrap_or("none"), expected.as_deref().unwrap_or("none"))]
    HeadMismatch {
        /// What the client expected.
        expected: Option<String>,
        /// The section's head.
        actual: Option<String>,
    },
    /// Submit without any commit.
    #[error("Section has no commit to submit")]
    NoCommit,
    /// The named commit is not one of the section's.
    #[error("Commit {0} not found in this section")]
    CommitNotFound(String),
    /// No such submission.
    #[error("Submission not found")]
    SubmissionNotFound,
    /// Approve and reject take only pending submissions.
    #[error("Submission is {status}, not pending")]
    SubmissionNotPending {
        /// Its status.
        status: &'static str,
    },
}
