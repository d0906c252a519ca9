//! What a client can ask of authors (`createAuthor`, `createAuthorIfNotExistsFor`, a browser
//! token's author), and how a command loads the authors it reads.

use super::{Author, Authors};
use crate::command::Load;
use crate::http::envelope::EnvelopeError;
use palimpsest_events::pads;
use std::collections::HashMap;

impl Load {
    /// Author `id`.
    pub async fn author(&self, id: &str) -> Result<Author, EnvelopeError> {
        self.state(pads::AUTHOR, id).await
    }

    /// The authors `ids` (skipping empty ids).
    pub async fn authors(
        &self,
        ids: impl IntoIterator<Item = String>,
    ) -> Result<Authors, EnvelopeError> {
        let mut map = HashMap::new();
        for id in ids {
            if id.is_empty() || map.contains_key(&id) {
                continue;
            }
            let author = self.author(&id).await?;
            map.insert(id, author);
        }
        Ok(Authors::new(map))
    }
}

/// A new author's id and color, drawn by the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewAuthor {
    /// The id (`a.` + 16).
    pub author_id: String,
    /// Index into the 64-color palette.
    pub color_id: i64,
}
