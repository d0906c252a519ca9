//! Approving a submission: the one decision that spans streams. It reads the section and the
//! published rows the snapshot touches, and either publishes (events for every touched entity
//! and geometry stream, the publication stream and the section, appended at once) or records a
//! conflict (the section alone).

pub mod approve;

#[cfg(test)]
mod tests;

pub use approve::{ApprovalDecision, ApproveCommand, decide_approve};
