//! Why a user command was refused.

/// A refused user command; nothing was appended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UserError {
    /// The id cannot name a user.
    #[error(
        "user_id `{0}` must be 1-64 letters, digits, `.`, `_`, `-` or `@`, and not `admin` in any case (the administrator's name)"
    )]
    InvalidUserId(String),
    /// No role was given.
    #[error("roles must name at least one of `editor`, `reviewer`")]
    NoRoles,
    /// A role is not one of the workflow's.
    #[error("unknown role `{0}`: roles are `editor` and `reviewer`")]
    UnknownRole(String),
    /// The user was never issued a token.
    #[error("User not found")]
    NotFound,
}
