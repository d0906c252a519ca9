//! The pure core of the pads context: the state of each kind of stream, folded from its events,
//! and the deciders that turn an API command and the states it reads into events.
//!
//! Deciders never read a clock or a random source: the caller passes `now` (milliseconds, as
//! Etherpad's `Date.now()`) and any new ids. Commands that change several records at once
//! return one [`Decision`] naming every stream they write, appended in one transaction.

mod author;
pub mod author_commands;
mod decision;
mod error;
mod group;
pub mod group_commands;
mod groups;
mod links;
mod mapping;
mod pad;
pub mod pad_changes;
pub mod pad_chat;
pub mod pad_creation;
pub mod pad_marks;
pub mod pad_text;
pub mod pad_transfer;
pub mod revision;
mod session;
pub mod session_commands;

pub use author::Author;
pub use decision::{Decision, Write};
pub use error::DomainError;
pub use group::Group;
pub use groups::Groups;
pub use links::Authors;
pub use mapping::Mapping;
pub use pad::{Pad, attributes_of, empty_atext, pool_of};
pub use session::Session;

#[cfg(test)]
mod scenarios;
