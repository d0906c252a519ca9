//! The two roles of the section workflow.

use serde::{Deserialize, Serialize};

/// What a user may do: editors write sections, reviewers decide on submissions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Creates sections, locks, commits, restores, submits.
    Editor,
    /// Approves and rejects submissions.
    Reviewer,
}

impl Role {
    /// The role named `name` (`editor`, `reviewer`).
    pub fn parse(name: &str) -> Option<Role> {
        match name {
            "editor" => Some(Role::Editor),
            "reviewer" => Some(Role::Reviewer),
            _ => None,
        }
    }

    /// The role's name, as events and answers write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Editor => "editor",
            Role::Reviewer => "reviewer",
        }
    }
}
