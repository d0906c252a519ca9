//! One resource's stream: its state (the head revision, hidden revisions, wiped or not), the
//! pure decider that turns a command into the next revision, and the ETag that names a head.
//!
//! Every new revision starts as a copy of the head; the command changes some columns and the
//! change mask records which. A deleted resource accepts only a restore. Who may write a
//! resource is decided from the same streams ([`access`]).

pub mod access;
mod decide;
mod error;
mod etag;
mod state;
#[cfg(test)]
mod tests;

pub use access::{AccessError, Principal};
pub use decide::{Edit, Expect, NewResource, ResourceCommand, Stamp, decide};
pub use error::ResourceError;
pub use etag::etag;
pub use state::{ResourceState, evolve};
