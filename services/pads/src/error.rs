//! Why a command is refused, in Etherpad's words (these messages are what its API answers with
//! code 1).
//!
//! One type for every aggregate: a command reads several kinds of stream (a group pad needs its
//! group; a session its group and author), and Etherpad's messages are one list.

/// A refused command. The messages are Etherpad's own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// The pad does not exist.
    #[error("padID does not exist")]
    PadMissing,
    /// `createPad` on an existing pad.
    #[error("padID does already exist")]
    PadExists,
    /// `createGroupPad` on an existing pad.
    #[error("padName does already exist")]
    PadNameExists,
    /// The group does not exist.
    #[error("groupID does not exist")]
    GroupMissing,
    /// A copy or move into a group that does not exist.
    #[error("groupID does not exist for destinationID")]
    DestinationGroupMissing,
    /// A copy or move onto an existing pad without `force`.
    #[error("destinationID already exists")]
    DestinationExists,
    /// A copy or move of a pad onto itself.
    #[error("sourceID and destinationID are the same pad")]
    SamePad,
    /// The author does not exist.
    #[error("authorID does not exist")]
    AuthorMissing,
    /// The session does not exist.
    #[error("sessionID does not exist")]
    SessionMissing,
    /// A revision number beyond the pad's head.
    #[error("rev is higher than the head revision of the pad")]
    RevAboveHead,
    /// A session that would end before now.
    #[error("validUntil is in the past")]
    ValidUntilInPast,
    /// Initial pad text longer than Etherpad accepts.
    #[error("text must be less than 100k chars")]
    TextTooLong,
    /// A parameter Etherpad refuses with its own message (`validUntil is not a number`, ...).
    #[error("{0}")]
    Invalid(String),
    /// A submitted changeset that cannot be applied.
    #[error("{0}")]
    BadChangeset(String),
}

impl DomainError {
    /// Whether the command names something that does not exist (a 404 where an API answers
    /// refusals with HTTP statuses).
    pub fn is_missing(&self) -> bool {
        matches!(
            self,
            DomainError::PadMissing
                | DomainError::GroupMissing
                | DomainError::AuthorMissing
                | DomainError::SessionMissing
        )
    }
}
