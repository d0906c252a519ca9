//! The context's typed errors: each names the spec's code and says what was wrong and where.

/// Why a records command or query was refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RecordsError {
    /// The request is malformed: a missing or mistyped field, an unknown class, a bad name.
    #[error("{0}")]
    BadRequest(String),
    /// A document's stored version is at or after the operation's time (`REGVER`).
    #[error("document {key} has version {stored}, not before the operation's time {time}")]
    Regver {
        /// The document's stream key.
        key: String,
        /// Its stored version.
        stored: i64,
        /// The operation's time.
        time: i64,
    },
    /// No such document (or class).
    #[error("{0}")]
    NotFound(String),
    /// A create found the document (or its zombie) there.
    #[error("{0}")]
    Exists(String),
    /// The document changed since the version the client read.
    #[error("{0}")]
    Conflict(String),
    /// A unique index value is held by another document.
    #[error("unique index {index} of {clazz}: the value is held by {}", holder_text(.owner.as_ref()))]
    Unique {
        /// The class.
        clazz: String,
        /// The index's name.
        index: String,
        /// `[org, clazz, pk]` of the holder when it is in the writer's own organisation; `None`
        /// when it is another organisation's (a global index): its key is not the writer's to
        /// know (issue #25).
        owner: Option<[String; 3]>,
    },
    /// The caller may not do this.
    #[error("{0}")]
    Forbidden(String),
    /// Stored data could not be sealed or opened with the site key: no request causes it (a
    /// changed key, a bug); answered as a 500 and logged.
    #[error(transparent)]
    Sealing(#[from] crate::seal::SealError),
}

/// How a unique error names the holder: its key within the writer's organisation, else nothing.
fn holder_text(owner: Option<&[String; 3]>) -> String {
    match owner {
        Some(owner) => format!("{owner:?}"),
        None => "a document of another organisation".to_owned(),
    }
}

impl RecordsError {
    /// The spec's error code, as answered in `{"error": {"code": …}}`.
    pub fn code(&self) -> &'static str {
        match self {
            RecordsError::BadRequest(_) => "BADREQUEST",
            RecordsError::Regver { .. } => "REGVER",
            RecordsError::NotFound(_) => "NOTFOUND",
            RecordsError::Exists(_) => "EXISTS",
            RecordsError::Conflict(_) => "CONFLICT",
            RecordsError::Unique { .. } => "UNIQUE",
            RecordsError::Forbidden(_) => "FORBIDDEN",
            RecordsError::Sealing(_) => "INTERNAL",
        }
    }

    /// Shorthand for a [`RecordsError::BadRequest`].
    pub fn bad(message: impl Into<String>) -> Self {
        RecordsError::BadRequest(message.into())
    }
}
