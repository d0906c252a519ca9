//! Who may review what: the four-eyes rule.

/// Whether `reviewer` may approve a submission made by `submitter`. A reviewer never approves
/// their own submission: an approval publishes to the map everyone reads, so it takes a second
/// person (the administrator, who may do everything, excepted). Rejecting one's own submission
/// publishes nothing and is allowed (it is how an editor who is also a reviewer withdraws it).
pub fn may_approve(submitter: &str, reviewer: &str, reviewer_is_admin: bool) -> bool {
    reviewer_is_admin || submitter != reviewer
}
