//! What a client can ask of a section. Every command carries `now` (the handler reads the clock,
//! the decider never does) and the ids it will create (the handler generates them).

use palimpsest_events::atlas::Timestamp;
use serde_json::Value;

/// The optional optimistic checks of a commit, restore or submit: the client read the section
/// at this `version` / with this head and wants the command refused if it moved since.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectations {
    /// `expected_version`.
    pub version: Option<i64>,
    /// `expected_head_commit_id` (`Some(None)`: the client expects no commit yet).
    pub head_commit_id: Option<Option<String>>,
}

/// A command on one section stream.
#[derive(Debug, Clone, PartialEq)]
pub enum SectionCommand {
    /// `POST /sections`.
    Create {
        /// The new section's id.
        section_id: String,
        /// `title` (must not be blank).
        title: String,
        /// `description`.
        description: Option<String>,
        /// `user_id`.
        user_id: Option<String>,
        /// `created_by`.
        created_by: Option<String>,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/lock`, or `GET /sections/:id/editor?user_id=`.
    Lock {
        /// Who takes the lock.
        actor: String,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/unlock`.
    Unlock {
        /// Who releases it (`None`: anonymous, which can only release a free or lapsed lock).
        actor: Option<String>,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/commits`.
    Commit {
        /// The new commit's id.
        commit_id: String,
        /// Who commits (takes or holds the lock).
        actor: String,
        /// `title`.
        title: Option<String>,
        /// `note`.
        note: Option<String>,
        /// The full snapshot.
        snapshot: Value,
        /// Optional optimistic checks.
        expected: Expectations,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/restore`.
    Restore {
        /// The new commit's id.
        commit_id: String,
        /// Who restores (takes or holds the lock).
        actor: String,
        /// The commit whose snapshot is copied.
        source_commit_id: String,
        /// `title`.
        title: Option<String>,
        /// `note`.
        note: Option<String>,
        /// Optional optimistic checks.
        expected: Expectations,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /sections/:id/submit`.
    Submit {
        /// The new submission's id.
        submission_id: String,
        /// Who submits.
        actor: String,
        /// The commit to submit; the head when `None`.
        commit_id: Option<String>,
        /// Optional optimistic checks.
        expected: Expectations,
        /// The time of the request.
        now: Timestamp,
    },
    /// `POST /submissions/:id/reject`.
    Reject {
        /// The submission.
        submission_id: String,
        /// The reviewer.
        reviewer: Option<String>,
        /// `review_note`.
        note: Option<String>,
        /// The time of the request.
        now: Timestamp,
    },
}
