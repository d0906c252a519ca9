//! Why a resource command was refused.

/// A resource command's refusal; each maps to one HTTP status in `http::error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// No resource with this id (never created, or wiped).
    #[error("resource {0} not found")]
    NotFound(i64),
    /// The resource is deleted: only a restore is accepted.
    #[error("resource {0} is deleted; only a restore is accepted")]
    Deleted(i64),
    /// A restore of a resource that is not deleted.
    #[error("resource {0} is not deleted")]
    NotDeleted(i64),
    /// The write named a head revision that is no longer the head.
    #[error("resource {res_id} is at revision {head}, the request was based on revision {given}")]
    StaleRevision {
        /// The resource.
        res_id: i64,
        /// Its head.
        head: i64,
        /// The revision the request named.
        given: i64,
    },
    /// The write's `If-Match` / `etag` does not name the head.
    #[error("resource {res_id}: ETag {given} does not match the head {head}")]
    StaleEtag {
        /// The resource.
        res_id: i64,
        /// The head's ETag.
        head: String,
        /// The ETag the request named.
        given: String,
    },
    /// A hide/unhide named a revision the resource does not have.
    #[error("resource {res_id} has no revision {rev}")]
    NoSuchRevision {
        /// The resource.
        res_id: i64,
        /// The revision asked for.
        rev: i64,
    },
    /// The head revision cannot be hidden (its content is what the resource is).
    #[error("the head revision {0} cannot be hidden")]
    HeadHidden(i64),
    /// A wipe of a resource that is not in the archive (not deleted).
    #[error("resource {0} is not in the archive; delete it first")]
    NotArchived(i64),
    /// A create on a resource id already used (a bug in id allocation, or a race).
    #[error("resource {0} already exists")]
    AlreadyExists(i64),
}
