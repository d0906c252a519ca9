//! Why an operation was refused.

use crate::resource::{AccessError, ResourceError};

/// An operation's refusal; the HTTP layer maps each to one status, in one place.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperationError {
    /// A resource's decider refused.
    #[error(transparent)]
    Resource(#[from] ResourceError),
    /// The caller may not make this write (Deki's permissions).
    #[error(transparent)]
    Forbidden(#[from] AccessError),
    /// Another live resource holds the name under that parent.
    #[error("`{name}` is already used by resource {holder} under {parent}")]
    NameTaken {
        /// The name.
        name: String,
        /// The parent, as `page:12`, `file:3`, `user:2` or `site`.
        parent: String,
        /// The resource holding it.
        holder: i64,
    },
    /// `abort=exists` and the property exists.
    #[error("property `{0}` already exists")]
    PropertyExists(String),
    /// `abort=modified`, the property exists and the request named no ETag.
    #[error("property `{0}` exists; send its ETag (If-Match or etag=) or abort=never")]
    EtagRequired(String),
    /// No live resource of that name under that parent.
    #[error("no {kind} `{name}` under {parent}")]
    NoSuchName {
        /// `file` or `property`.
        kind: &'static str,
        /// The name.
        name: String,
        /// The parent.
        parent: String,
    },
    /// The resource is not of the kind the route serves (a property id on a file route).
    #[error("resource {0} is not a {1}")]
    WrongType(i64, &'static str),
    /// A stream name could not be built (a name too long for a stream key).
    #[error("invalid name: {0}")]
    InvalidName(String),
    /// No free name was found for a restore after many tries.
    #[error("no free name for `{0}` under the restore target")]
    NoFreeName(String),
}
