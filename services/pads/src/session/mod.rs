//! The session stream (`pads/session/<id>`): a session ties an author to a group until a time.
//!
//! | command | needs | writes |
//! |---|---|---|
//! | `createSession` | the group, the author, `validUntil` not in the past | the session, then the group's and the author's lists |
//! | `deleteSession` | the session | the group's and the author's lists, then the session |

pub mod command;
pub mod decide;
pub mod state;

#[cfg(test)]
mod tests;

pub use state::Session;
