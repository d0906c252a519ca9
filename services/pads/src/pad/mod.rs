//! The pad stream (`pads/pad/<id>`): a pad's text, its revisions, chat, saved revisions,
//! public status and read-only id.
//!
//! | command | needs | writes |
//! |---|---|---|
//! | `createPad`, `createGroupPad` | no such pad (and the group) | the pad; the group's list; author links |
//! | `setText`, `appendText`, `restoreRevision`, `setHTML` | the pad | a revision (none if nothing changes) |
//! | a submitted changeset | the pad, a base revision at or below the head | the changeset followed over the revisions since |
//! | `appendChatMessage` | nothing (a missing pad is created first) | a chat message |
//! | `saveRevision`, `setPublicStatus`, `getReadOnlyID` | the pad | a mark; the `API` author |
//! | `deletePad`, `copyPad`, `movePad`, `copyPadWithoutHistory` | the source; `force` over an existing destination | both pads, their groups and authors |

pub mod command;
pub mod decide;
pub mod seed;
pub mod state;

#[cfg(test)]
mod tests;

pub use command::{ApiAuthor, ChatMessage, NewRevision, Recorded, Submission, Transfer};
pub use seed::pad_from_store;
pub use state::{Pad, attributes_of, empty_atext, pool_of};
