//! Organisation tokens: `issueOrgToken` appends the sha32 of a new bearer token to the org's
//! token stream ([`state`], [`command`]); [`crate::caller`] checks a bearer against them.

pub mod command;
pub mod state;

pub use command::issue;
pub use state::TokenState;
