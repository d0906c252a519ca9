//! Why a read failed: the database, or a stored value the server wrote but cannot read back.
//!
//! A corrupt value is never shown as `null`: a null `draw_geometry` would be hashed and offered
//! to editors as a `base_hash`, and an approval against it would compare with a row that does not
//! say what is stored. It is a 500 naming the row, and a log line.

use palimpsest_web::ApiError;

/// A failed read-model query.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The query failed.
    #[error(transparent)]
    Database(#[from] tokio_postgres::Error),
    /// A stored JSON text does not parse (a bug, or a tampered read model).
    #[error("unreadable stored {column} of {row}: {reason}")]
    Corrupt {
        /// The column, e.g. `geometries.draw_geometry`.
        column: &'static str,
        /// The row's id.
        row: String,
        /// The parser's message.
        reason: String,
    },
}

impl ReadError {
    /// The error for `text`, stored in `column` of `row`, that does not parse.
    pub fn corrupt(column: &'static str, row: &str, e: &serde_json::Error) -> ReadError {
        ReadError::Corrupt {
            column,
            row: row.to_owned(),
            reason: e.to_string(),
        }
    }
}

/// Parses a stored JSON text, refusing what does not parse.
pub fn stored_json<T: serde::de::DeserializeOwned>(
    text: &str,
    column: &'static str,
    row: &str,
) -> Result<T, ReadError> {
    serde_json::from_str(text).map_err(|e| ReadError::corrupt(column, row, &e))
}

impl From<ReadError> for ApiError {
    fn from(e: ReadError) -> Self {
        match e {
            ReadError::Database(e) => ApiError::from(e),
            corrupt @ ReadError::Corrupt { .. } => ApiError::internal(corrupt),
        }
    }
}
