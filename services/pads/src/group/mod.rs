//! The group stream (`pads/group/<id>`), and the mapper → group map that leads to it.
//!
//! | command | needs | writes |
//! |---|---|---|
//! | `createGroup` | | a new group |
//! | `createGroupIfNotExistsFor` | | the mapper's group if it still exists, else a new one mapped to it |
//! | `deleteGroup` | the group | its pads, sessions, mappings and the group, in one outcome |

pub mod command;
pub mod decide;
pub mod groups;
pub mod state;

#[cfg(test)]
mod tests;

pub use command::GroupContents;
pub use groups::Groups;
pub use state::Group;
