//! The JSON shapes of sections, states, commits and submissions: the spec's columns, from the
//! read model or from a decided state.

use crate::section::state::{Commit, SectionState, Submission};
use palimpsest_events::canonical::to_canonical_string;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A `section_states` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SectionStateRow {
    /// `section_id`.
    pub section_id: String,
    /// `status`: editing, submitted, approved, rejected, conflicted.
    pub status: String,
    /// `head_commit_id`.
    pub head_commit_id: Option<String>,
    /// `version`.
    pub version: i64,
    /// `locked_by`.
    pub locked_by: Option<String>,
    /// `locked_at`.
    pub locked_at: Option<String>,
    /// `lock_expires_at`.
    pub lock_expires_at: Option<String>,
    /// `updated_at`.
    pub updated_at: String,
}

/// A `sections` row with its state (`GET /sections` items, `POST /sections`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SectionRow {
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
    pub created_at: String,
    /// `updated_at`.
    pub updated_at: String,
    /// Its `section_states` row.
    pub state: SectionStateRow,
}

/// A `section_commits` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommitRow {
    /// `id`.
    pub id: String,
    /// `section_id`.
    pub section_id: String,
    /// `parent_commit_id`.
    pub parent_commit_id: Option<String>,
    /// `commit_no`.
    pub commit_no: i64,
    /// `kind`: manual or restore.
    pub kind: String,
    /// `restored_from_commit_id`.
    pub restored_from_commit_id: Option<String>,
    /// `created_by`.
    pub created_by: String,
    /// `created_at`.
    pub created_at: String,
    /// `title`.
    pub title: Option<String>,
    /// `note`.
    pub note: Option<String>,
    /// `snapshot_json`: the snapshot's canonical JSON text.
    pub snapshot_json: String,
    /// `snapshot_hash`: `sha256:<hex>` of `snapshot_json`.
    pub snapshot_hash: Option<String>,
}

/// A `section_submissions` row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubmissionRow {
    /// `id`.
    pub id: String,
    /// `section_id`.
    pub section_id: String,
    /// `commit_id`.
    pub commit_id: String,
    /// `submitted_by`.
    pub submitted_by: String,
    /// `submitted_at`.
    pub submitted_at: String,
    /// `status`: pending, approved, rejected, conflicted.
    pub status: String,
    /// `reviewed_by`.
    pub reviewed_by: Option<String>,
    /// `reviewed_at`.
    pub reviewed_at: Option<String>,
    /// `review_note`: the reviewer's note or the conflict message.
    pub review_note: Option<String>,
    /// `snapshot_json`.
    pub snapshot_json: String,
    /// `snapshot_hash`.
    pub snapshot_hash: Option<String>,
}

/// `GET /sections/:id/editor`: what an editor opens.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EditorView {
    /// The section (with `state`).
    pub section: SectionRow,
    /// Its state (the same as `section.state`).
    pub state: SectionStateRow,
    /// The head commit, if any.
    pub head_commit: Option<CommitRow>,
    /// The head commit's snapshot, parsed; null without commits.
    pub snapshot: Value,
}

impl SectionRow {
    /// The row of a decided state; `None` for a section that does not exist.
    pub fn from_state(state: &SectionState) -> Option<SectionRow> {
        let info = state.info.as_ref()?;
        let lock = state.lock.as_ref();
        Some(SectionRow {
            id: info.id.clone(),
            title: info.title.clone(),
            description: info.description.clone(),
            user_id: info.user_id.clone(),
            created_by: info.created_by.clone(),
            created_at: info.created_at.to_iso(),
            updated_at: info.updated_at.to_iso(),
            state: SectionStateRow {
                section_id: info.id.clone(),
                status: state.status.as_str().to_owned(),
                head_commit_id: state.head_commit_id.clone(),
                version: state.version,
                locked_by: lock.map(|l| l.by.clone()),
                locked_at: lock.map(|l| l.at.to_iso()),
                lock_expires_at: lock.map(|l| l.expires_at.to_iso()),
                updated_at: state.state_updated_at.unwrap_or(info.created_at).to_iso(),
            },
        })
    }
}

impl CommitRow {
    /// The row of a commit of section `section_id`.
    pub fn from_commit(section_id: &str, c: &Commit) -> CommitRow {
        let r = &c.recorded;
        CommitRow {
            id: r.commit_id.clone(),
            section_id: section_id.to_owned(),
            parent_commit_id: r.parent_commit_id.clone(),
            commit_no: r.commit_no,
            kind: c.kind.to_owned(),
            restored_from_commit_id: r.restored_from_commit_id.clone(),
            created_by: r.created_by.clone(),
            created_at: r.created_at.to_iso(),
            title: r.title.clone(),
            note: r.note.clone(),
            snapshot_json: to_canonical_string(&r.snapshot),
            snapshot_hash: Some(r.snapshot_hash.clone()),
        }
    }
}

impl SubmissionRow {
    /// The row of a submission of section `section_id`.
    pub fn from_submission(section_id: &str, s: &Submission) -> SubmissionRow {
        SubmissionRow {
            id: s.id.clone(),
            section_id: section_id.to_owned(),
            commit_id: s.commit_id.clone(),
            submitted_by: s.submitted_by.clone(),
            submitted_at: s.submitted_at.to_iso(),
            status: s.status.as_str().to_owned(),
            reviewed_by: s.reviewed_by.clone(),
            reviewed_at: s.reviewed_at.map(|t| t.to_iso()),
            review_note: s.review_note.clone(),
            snapshot_json: to_canonical_string(&s.snapshot),
            snapshot_hash: Some(s.snapshot_hash.clone()),
        }
    }
}

/// A snapshot as read back from its stored canonical text (numbers in their canonical form,
/// e.g. `105.0` as `105`), so a write's answer and a later read are the same JSON.
pub fn canonical_value(snapshot: &Value) -> Value {
    read_back(&to_canonical_string(snapshot), snapshot)
}

/// `snapshot` as read back from `canonical`, its canonical text already made (`snapshot` itself
/// if the text does not parse back, which canonical text always does).
fn read_back(canonical: &str, snapshot: &Value) -> Value {
    serde_json::from_str(canonical).unwrap_or_else(|_| snapshot.clone())
}

impl EditorView {
    /// The editor view of a decided state; `None` for a section that does not exist. The head's
    /// snapshot is made canonical once: its row's `snapshot_json` is what `snapshot` is read
    /// back from (a lock taken through the editor answers with this view, on the write path).
    pub fn from_state(state: &SectionState) -> Option<EditorView> {
        let section = SectionRow::from_state(state)?;
        let head = state.head();
        let head_commit = head.map(|c| CommitRow::from_commit(&section.id, c));
        let snapshot = match (head, &head_commit) {
            (Some(c), Some(row)) => read_back(&row.snapshot_json, &c.recorded.snapshot),
            _ => Value::Null,
        };
        Some(EditorView {
            state: section.state.clone(),
            head_commit,
            snapshot,
            section,
        })
    }
}
