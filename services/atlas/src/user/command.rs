//! What the administrator asks of a user stream.

use palimpsest_events::atlas::Timestamp;

/// An administrator's command on one user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UserCommand {
    /// Issue (or reissue) the user a token with these roles.
    Issue {
        /// The user's id.
        user_id: String,
        /// Role names as the request gave them.
        roles: Vec<String>,
        /// SHA-256 (lowercase hex) of the freshly generated token.
        token_sha256: String,
        /// The request's time.
        now: Timestamp,
    },
    /// Revoke the user's token.
    Revoke {
        /// The request's time.
        now: Timestamp,
    },
}
