//! The user stream (`atlas/user/<user id>`): who may call the section workflow, and as what.
//!
//! The History Map's own routes sit behind its login; here the administrator (the platform's
//! admin token) issues each user a random bearer token and roles, and may revoke it. The log
//! keeps only the token's SHA-256 ([`token`]). A request's [`Caller`] is the administrator or
//! an issued user, with the roles that say what it may do.
//!
//! | action | needs | after |
//! |---|---|---|
//! | issue | a valid user id (not `admin`), at least one known role | active, with the new token's hash (any earlier token no longer works) |
//! | revoke | the user was issued a token | revoked (a second revoke appends nothing) |

pub mod caller;
pub mod command;
pub mod decide;
pub mod error;
pub mod policy;
pub mod role;
pub mod state;
pub mod token;

#[cfg(test)]
mod tests;

pub use caller::{Caller, forbidden};
pub use command::UserCommand;
pub use decide::decide;
pub use error::UserError;
pub use role::Role;
pub use state::{UserState, evolve};
pub use token::{new_token, token_sha256};
