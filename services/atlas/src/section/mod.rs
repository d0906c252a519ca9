//! The section stream (`atlas/section/<id>`): the editor and review workflow.
//!
//! | action | needs | status after |
//! |---|---|---|
//! | create | a non-blank title | `editing` |
//! | lock | the lock free, the actor's own, or lapsed | unchanged |
//! | unlock | the lock not held (live) by another actor | unchanged |
//! | commit | `editing`, `rejected` or `conflicted`; the lock free/own/lapsed (taken for 15 min); a valid snapshot | `editing` |
//! | restore | as commit; the source commit is the section's | `editing` |
//! | submit | `editing`; a commit (the head, or the one named) | `submitted` (lock released) |
//! | approve | a `pending` submission; the snapshot applies ([`crate::review`]) | `approved` (or `conflicted`) |
//! | reject | a `pending` submission | `rejected` |

pub mod command;
pub mod decide;
pub mod error;
pub mod state;

#[cfg(test)]
mod tests;

pub use command::{Expectations, SectionCommand};
pub use decide::decide;
pub use error::SectionError;
pub use state::{SectionState, SectionStatus, SubmissionStatus, evolve, fold};
