//! Approving a submission: the one decision that spans streams. It reads the section and the
//! published rows the snapshot touches, and either publishes (events for every touched entity
//! and geometry stream, the publication stream and the section, appended at once) or records a
//! conflict (the section alone). Its refusals are the section's ([`crate::section::SectionError`]),
//! and a reviewer's own submission ([`crate::user::policy::may_approve`]).

pub mod command;
pub mod decide;
pub mod load;
pub mod state;

#[cfg(test)]
mod tests;

pub use command::{ApproveCommand, Review, run};
pub use decide::{ApprovalDecision, decide_approve};
pub use state::PublicationHead;
