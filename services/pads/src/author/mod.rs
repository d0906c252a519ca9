//! The author stream (`pads/author/<id>`), and the token → author and mapper → author maps
//! that lead to it.
//!
//! | command | writes |
//! |---|---|
//! | `createAuthor` | a new author |
//! | `createAuthorIfNotExistsFor` | the mapper's author (created and mapped if need be), its name |
//! | a browser token's author | the token's author (created and mapped if need be) |
//!
//! Pads and sessions change authors too (links to pads, session lists): those commands keep
//! their authors in an [`Authors`] set so that one command's changes see each other.

pub mod authors;
pub mod command;
pub mod decide;
pub mod state;

#[cfg(test)]
mod tests;

pub use authors::Authors;
pub use command::NewAuthor;
pub use state::Author;
