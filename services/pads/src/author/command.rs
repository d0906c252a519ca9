//! What a client can ask of authors (`createAuthor`, `createAuthorIfNotExistsFor`, a browser
//! token's author), how a command loads the authors it reads, and the author commands that
//! read streams run as load → decide (one try each; the runner,
//! [`crate::command::Pads::run`], tries again from fresh state when a stream moved).

use super::decide;
use super::{Author, Authors};
use crate::command::Load;
use crate::http::envelope::EnvelopeError;
use crate::outcome::Outcome;
use palimpsest_events::pads::{self, AUTHOR_MAPPER, TOKEN};
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

/// `createAuthorIfNotExistsFor(authorMapper, name)`: the mapper's author (`new` if it has
/// none yet), named `name` if one is given. Returns the outcome and the author id.
pub async fn author_for_mapper(
    load: &Load,
    mapper: &str,
    name: Option<&str>,
    new: &NewAuthor,
    now: i64,
) -> Result<(Outcome, String), EnvelopeError> {
    let mapping = load.mapping(AUTHOR_MAPPER, mapper).await?;
    if let Some(existing) = &mapping.target {
        load.author(existing).await?;
    }
    Ok(decide::create_author_for_mapper(
        mapper, &mapping, name, new, now,
    ))
}

/// A browser token's author (Etherpad's `getAuthorId`): `new` if the token has none yet.
/// Returns the outcome and the author id.
pub async fn author_for_token(
    load: &Load,
    token: &str,
    new: &NewAuthor,
    now: i64,
) -> Result<(Outcome, String), EnvelopeError> {
    let mapping = load.mapping(TOKEN, token).await?;
    if let Some(existing) = &mapping.target {
        load.author(existing).await?;
    }
    Ok(decide::author_for_token(token, &mapping, new, now))
}
