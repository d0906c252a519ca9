//! The one-value map streams: token → author (`pads/token/<token>`), mapper → author
//! (`pads/author-mapper/<mapper>`), mapper → group (`pads/group-mapper/<mapper>`). They are
//! written by the author's and the group's commands; here is their state and how it loads.

pub mod command;
pub mod state;

pub use state::Mapping;
