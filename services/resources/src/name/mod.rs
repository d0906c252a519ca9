//! The name index: one stream per (resource type, parent, name), `resources/name/<key>`, saying
//! which live resource holds the name.
//!
//! A command that creates, renames, moves, deletes or restores a resource reads the name's
//! stream and appends to it in the same append, so "is this name taken?" is decided from the
//! log, never from a read model, and two writers racing for a name conflict on its version.

//!
//! [`state`] folds a name's stream; [`decide`] claims and releases names (pure). The commands
//! that read and append a name's stream are the operations' ([`crate::operation`]).

pub mod decide;
pub mod state;

pub use decide::{MAX_NAME, alternative, claim, fold, key, release};
pub use state::{NameState, evolve};
