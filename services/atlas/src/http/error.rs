//! Refused commands as HTTP errors: 404 for what does not exist, 400 for bad input, 409 for a
//! state, lock or version that refuses the command (section and user commands alike).

use crate::section::SectionError;
use crate::user::UserError;
use palimpsest_web::ApiError;

impl From<SectionError> for ApiError {
    fn from(e: SectionError) -> Self {
        let message = e.to_string();
        match e {
            SectionError::SectionNotFound
            | SectionError::SubmissionNotFound
            | SectionError::CommitNotFound(_) => ApiError::not_found(message),
            SectionError::Invalid { .. } | SectionError::InvalidSnapshot(_) => {
                ApiError::bad_request(message)
            }
            SectionError::SectionExists
            | SectionError::Locked { .. }
            | SectionError::WrongStatus { .. }
            | SectionError::VersionMismatch { .. }
            | SectionError::HeadMismatch { .. }
            | SectionError::NoCommit
            | SectionError::SubmissionNotPending { .. } => ApiError::conflict(message),
        }
    }
}

impl From<UserError> for ApiError {
    fn from(e: UserError) -> Self {
        let message = e.to_string();
        match e {
            UserError::NotFound => ApiError::not_found(message),
            UserError::InvalidUserId(_) | UserError::NoRoles | UserError::UnknownRole(_) => {
                ApiError::bad_request(message)
            }
        }
    }
}
