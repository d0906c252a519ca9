//! A section's state, folded from its stream: what `decide` needs to judge a command.

use crate::section::error::SectionError;
use palimpsest_events::atlas::{CommitRecorded, SectionEvent, Timestamp};
use palimpsest_events::{DecodeError, DomainEvent, RecordedEvent, StreamName};
use palimpsest_web::command::StreamState;
use serde_json::Value;
use std::sync::Arc;

/// How long a lock lasts: 15 minutes.
pub const LOCK_TTL_SECONDS: i64 = 15 * 60;

/// Where a section is in the review workflow (`section_states.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionStatus {
    /// Being edited: commits, restores and submits are allowed. The state of a new section.
    Editing,
    /// Its head commit waits for review.
    Submitted,
    /// The latest submission was approved and published. Final.
    Approved,
    /// The latest submission was rejected; a commit or restore resumes editing.
    Rejected,
    /// The latest submission could not be applied; a commit or restore resumes editing.
    Conflicted,
}

impl SectionStatus {
    /// Every status a section can be in: the spec's four, then `conflicted`, our addition. The
    /// spec says only that a conflicted approval marks the *submission* `conflicted`; a section
    /// left `submitted` with no pending submission could never move again (commit and restore
    /// need `editing` or `rejected`, submit needs `editing`), so the section becomes `conflicted`
    /// and, like `rejected`, takes a new commit or restore that resumes editing.
    pub const ALL: [SectionStatus; 5] = [
        SectionStatus::Editing,
        SectionStatus::Submitted,
        SectionStatus::Approved,
        SectionStatus::Rejected,
        SectionStatus::Conflicted,
    ];

    /// The status named `name` (as stored); any other name is refused, naming those that exist.
    pub fn parse(name: &str) -> Result<SectionStatus, SectionError> {
        SectionStatus::ALL
            .into_iter()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| SectionError::Invalid {
                field: "status".into(),
                reason: format!(
                    "must be one of {}",
                    SectionStatus::ALL.map(SectionStatus::as_str).join(", ")
                ),
            })
    }

    /// The status as stored in `section_states.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            SectionStatus::Editing => "editing",
            SectionStatus::Submitted => "submitted",
            SectionStatus::Approved => "approved",
            SectionStatus::Rejected => "rejected",
            SectionStatus::Conflicted => "conflicted",
        }
    }

    /// Whether new commits and restores are allowed.
    pub fn accepts_commits(self) -> bool {
        matches!(
            self,
            SectionStatus::Editing | SectionStatus::Rejected | SectionStatus::Conflicted
        )
    }
}

/// Where a submission is in review (`section_submissions.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmissionStatus {
    /// Waiting for a reviewer.
    Pending,
    /// Approved and published.
    Approved,
    /// Rejected.
    Rejected,
    /// Its approval met a conflict; nothing was published.
    Conflicted,
}

impl SubmissionStatus {
    /// The status as stored in `section_submissions.status`.
    pub fn as_str(self) -> &'static str {
        match self {
            SubmissionStatus::Pending => "pending",
            SubmissionStatus::Approved => "approved",
            SubmissionStatus::Rejected => "rejected",
            SubmissionStatus::Conflicted => "conflicted",
        }
    }
}

/// A section's editor lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lock {
    /// The holder.
    pub by: String,
    /// When it was taken.
    pub at: Timestamp,
    /// When it lapses.
    pub expires_at: Timestamp,
}

impl Lock {
    /// Whether the lock still holds at `now`.
    pub fn is_live(&self, now: Timestamp) -> bool {
        self.expires_at > now
    }
}

/// The section's own row (`sections`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionInfo {
    /// `id`.
    pub id: String,
    /// `title`.
    pub title: String,
    /// `description`.
    pub description: Option<String>,
    /// `user_id`.
    pub user_id: Option<String>,
    /// `created_by`.
    pub created_by: Option<String>,
    /// `created_at`.
    pub created_at: Timestamp,
    /// `updated_at`: the last workflow change (commit, restore, submit, review).
    pub updated_at: Timestamp,
}

/// One commit (`section_commits`).
#[derive(Debug, Clone, PartialEq)]
pub struct Commit {
    /// As recorded.
    pub recorded: CommitRecorded,
    /// `manual` or `restore`.
    pub kind: &'static str,
}

/// One submission (`section_submissions`).
#[derive(Debug, Clone, PartialEq)]
pub struct Submission {
    /// `id`.
    pub id: String,
    /// `commit_id`.
    pub commit_id: String,
    /// `submitted_by`.
    pub submitted_by: String,
    /// `submitted_at`.
    pub submitted_at: Timestamp,
    /// `status`.
    pub status: SubmissionStatus,
    /// `reviewed_by`.
    pub reviewed_by: Option<String>,
    /// `reviewed_at`.
    pub reviewed_at: Option<Timestamp>,
    /// `review_note`: the reviewer's note, or the conflict message.
    pub review_note: Option<String>,
    /// The snapshot copied from the commit.
    pub snapshot: Value,
    /// Its hash, copied from the commit.
    pub snapshot_hash: String,
}

/// Everything the section stream says, folded.
///
/// Commits and submissions are kept behind [`Arc`]s because the command runner keeps this
/// state between commands and hands each command a copy (`Attempt::load`): a copy then shares
/// every recorded snapshot with the kept state instead of copying each one, so a command on a
/// section with hundreds of commits costs what one on a new section does. Nothing changes a
/// commit once recorded; a review changes its submission copy-on-write.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionState {
    /// The section's row; `None` until `SectionCreated`.
    pub info: Option<SectionInfo>,
    /// `section_states.status`.
    pub status: SectionStatus,
    /// `section_states.head_commit_id`.
    pub head_commit_id: Option<String>,
    /// `section_states.version`: + 1 on each commit and restore, as the spec's §4.3 says ("Commit
    /// mới … tăng section_states.version"); submits, reviews and locks leave it. It is the
    /// optimistic version an editor's next commit is checked against (`expected_version`), so
    /// only a new head should move it.
    pub version: i64,
    /// The lock, live or lapsed; `None` when released or never taken.
    pub lock: Option<Lock>,
    /// `section_states.updated_at`: the last change of any kind, locks included.
    pub state_updated_at: Option<Timestamp>,
    /// The commits, oldest first.
    pub commits: Vec<Arc<Commit>>,
    /// The submissions, oldest first.
    pub submissions: Vec<Arc<Submission>>,
}

impl Default for SectionState {
    fn default() -> Self {
        SectionState {
            info: None,
            status: SectionStatus::Editing,
            head_commit_id: None,
            version: 0,
            lock: None,
            state_updated_at: None,
            commits: Vec::new(),
            submissions: Vec::new(),
        }
    }
}

impl SectionState {
    /// The commit with this id.
    pub fn commit(&self, id: &str) -> Option<&Commit> {
        self.commits
            .iter()
            .find(|c| c.recorded.commit_id == id)
            .map(|c| &**c)
    }

    /// The submission with this id.
    pub fn submission(&self, id: &str) -> Option<&Submission> {
        self.submissions.iter().find(|s| s.id == id).map(|s| &**s)
    }

    /// The head commit.
    pub fn head(&self) -> Option<&Commit> {
        self.head_commit_id
            .as_deref()
            .and_then(|id| self.commit(id))
    }

    /// The lock if it holds at `now`.
    pub fn live_lock(&self, now: Timestamp) -> Option<&Lock> {
        self.lock.as_ref().filter(|l| l.is_live(now))
    }

    /// Records a change at `at`: `section_states.updated_at` always, and `sections.updated_at`
    /// for workflow changes (commit, restore, submit, review), not for locks.
    fn touch(&mut self, at: Timestamp, workflow: bool) {
        self.state_updated_at = Some(at);
        if workflow && let Some(info) = &mut self.info {
            info.updated_at = at;
        }
    }

    /// `SectionCreated`: the section's row, `editing`.
    fn create(&mut self, info: SectionInfo) {
        self.state_updated_at = Some(info.created_at);
        self.info = Some(info);
        self.status = SectionStatus::Editing;
    }

    /// `SectionLocked`: the lock taken or renewed.
    fn take_lock(&mut self, lock: Lock) {
        let at = lock.at;
        self.lock = Some(lock);
        self.touch(at, false);
    }

    /// `SectionUnlocked`: the lock released.
    fn release_lock(&mut self, at: Timestamp) {
        self.lock = None;
        self.touch(at, false);
    }

    /// `SectionCommitted` / `SectionRestored` (`kind` `manual` / `restore`): a new head, back to
    /// `editing`, one version more.
    fn new_head(&mut self, recorded: &CommitRecorded, kind: &'static str) {
        self.head_commit_id = Some(recorded.commit_id.clone());
        self.status = SectionStatus::Editing;
        self.commits.push(Arc::new(Commit {
            recorded: recorded.clone(),
            kind,
        }));
        self.version += 1;
        self.touch(recorded.created_at, true);
    }

    /// `SectionSubmitted`: a pending submission; the section waits for review, unlocked.
    fn submit(&mut self, submission: Submission) {
        let at = submission.submitted_at;
        self.submissions.push(Arc::new(submission));
        self.status = SectionStatus::Submitted;
        self.lock = None;
        self.touch(at, true);
    }

    /// A verdict: the submission closed, the section's status following it.
    fn review(&mut self, verdict: Verdict<'_>) {
        if let Some(kept) = self
            .submissions
            .iter_mut()
            .find(|submission| submission.id == verdict.submission_id)
        {
            let submission = Arc::make_mut(kept);
            submission.status = verdict.status;
            submission.reviewed_by = verdict.reviewed_by.clone();
            submission.reviewed_at = Some(verdict.reviewed_at);
            submission.review_note = verdict.note;
        }
        self.status = match verdict.status {
            SubmissionStatus::Approved => SectionStatus::Approved,
            SubmissionStatus::Rejected => SectionStatus::Rejected,
            SubmissionStatus::Conflicted => SectionStatus::Conflicted,
            SubmissionStatus::Pending => self.status,
        };
        self.touch(verdict.reviewed_at, true);
    }
}

/// Applies one recorded event to the state: each event family has its own step on
/// [`SectionState`] below.
pub fn evolve(mut state: SectionState, event: &SectionEvent) -> SectionState {
    match event {
        SectionEvent::SectionCreated {
            section_id,
            title,
            description,
            user_id,
            created_by,
            created_at,
        } => state.create(SectionInfo {
            id: section_id.clone(),
            title: title.clone(),
            description: description.clone(),
            user_id: user_id.clone(),
            created_by: created_by.clone(),
            created_at: *created_at,
            updated_at: *created_at,
        }),
        SectionEvent::SectionLocked {
            locked_by,
            locked_at,
            lock_expires_at,
        } => state.take_lock(Lock {
            by: locked_by.clone(),
            at: *locked_at,
            expires_at: *lock_expires_at,
        }),
        SectionEvent::SectionUnlocked { at, .. } => state.release_lock(*at),
        SectionEvent::SectionCommitted(recorded) => state.new_head(recorded, "manual"),
        SectionEvent::SectionRestored(recorded) => state.new_head(recorded, "restore"),
        SectionEvent::SectionSubmitted {
            submission_id,
            commit_id,
            submitted_by,
            submitted_at,
            snapshot,
            snapshot_hash,
        } => state.submit(Submission {
            id: submission_id.clone(),
            commit_id: commit_id.clone(),
            submitted_by: submitted_by.clone(),
            submitted_at: *submitted_at,
            status: SubmissionStatus::Pending,
            reviewed_by: None,
            reviewed_at: None,
            review_note: None,
            snapshot: snapshot.clone(),
            snapshot_hash: snapshot_hash.clone(),
        }),
        SectionEvent::SubmissionApproved { .. }
        | SectionEvent::SubmissionRejected { .. }
        | SectionEvent::SubmissionConflicted { .. } => {
            if let Some(verdict) = Verdict::of(event) {
                state.review(verdict);
            }
        }
    }
    state
}

/// A reviewer's verdict on a submission, as an approval, a rejection or a conflicted approval
/// records it (a conflict's message stands as its note).
struct Verdict<'a> {
    submission_id: &'a str,
    status: SubmissionStatus,
    reviewed_by: &'a Option<String>,
    reviewed_at: Timestamp,
    note: Option<String>,
}

impl<'a> Verdict<'a> {
    /// The verdict `event` records; `None` for the events that review nothing.
    fn of(event: &'a SectionEvent) -> Option<Verdict<'a>> {
        let (submission_id, status, reviewed_by, reviewed_at, note) = match event {
            SectionEvent::SubmissionApproved {
                submission_id,
                reviewed_by,
                reviewed_at,
                review_note,
            } => (
                submission_id,
                SubmissionStatus::Approved,
                reviewed_by,
                reviewed_at,
                review_note.clone(),
            ),
            SectionEvent::SubmissionRejected {
                submission_id,
                reviewed_by,
                reviewed_at,
                review_note,
            } => (
                submission_id,
                SubmissionStatus::Rejected,
                reviewed_by,
                reviewed_at,
                review_note.clone(),
            ),
            SectionEvent::SubmissionConflicted {
                submission_id,
                reviewed_by,
                reviewed_at,
                message,
            } => (
                submission_id,
                SubmissionStatus::Conflicted,
                reviewed_by,
                reviewed_at,
                Some(message.clone()),
            ),
            _ => return None,
        };
        Some(Verdict {
            submission_id,
            status,
            reviewed_by,
            reviewed_at: *reviewed_at,
            note,
        })
    }
}

/// Folds a stream's events from the empty state.
pub fn fold<'a>(events: impl IntoIterator<Item = &'a SectionEvent>) -> SectionState {
    events.into_iter().fold(SectionState::default(), evolve)
}

/// How the platform's runner loads a section stream: each event folded with [`evolve`].
impl StreamState for SectionState {
    fn initial(_: &StreamName) -> Self {
        SectionState::default()
    }
    fn fold(&mut self, event: &RecordedEvent) -> Result<(), DecodeError> {
        let event = SectionEvent::decode(event)?;
        *self = evolve(std::mem::take(self), &event);
        Ok(())
    }
}
