//! Author commands: `createAuthor`, `createAuthorIfNotExistsFor`, and the token → author map
//! Etherpad keeps for browser sessions.

use super::NewAuthor;
use crate::mapping::Mapping;
use crate::outcome::Outcome;
use palimpsest_events::pads::{AuthorEvent, AuthorMapperEvent, AuthorName, TokenEvent};

/// `createAuthor(name)`: a new author, its name absent when none was given.
pub fn create_author(new: &NewAuthor, name: AuthorName, now: i64) -> Outcome {
    let mut outcome = Outcome::none();
    outcome.author(
        &new.author_id,
        AuthorEvent::AuthorCreated {
            author_id: new.author_id.clone(),
            name,
            color_id: new.color_id,
            timestamp: now,
        },
    );
    outcome
}

/// The author a mapper or token names, or a new one (`name: null`) it is mapped to. Etherpad's
/// `mapAuthorWithDBKey`: a known author's timestamp is refreshed.
fn map_author(
    mapping: &Mapping,
    new: &NewAuthor,
    now: i64,
    outcome: &mut Outcome,
) -> (String, bool) {
    if let Some(id) = &mapping.target {
        outcome.author(id, AuthorEvent::AuthorSeen { timestamp: now });
        return (id.clone(), false);
    }
    outcome.author(
        &new.author_id,
        AuthorEvent::AuthorCreated {
            author_id: new.author_id.clone(),
            name: AuthorName::Null,
            color_id: new.color_id,
            timestamp: now,
        },
    );
    (new.author_id.clone(), true)
}

/// `createAuthorIfNotExistsFor(authorMapper, name)`: the mapper's author (created if need be);
/// a non-empty `name` is set on it. Returns the decision and the author id.
pub fn create_author_for_mapper(
    mapper: &str,
    mapping: &Mapping,
    name: Option<&str>,
    new: &NewAuthor,
    now: i64,
) -> (Outcome, String) {
    let mut outcome = Outcome::none();
    let (id, created) = map_author(mapping, new, now, &mut outcome);
    if created {
        outcome.author_mapper(
            mapper,
            AuthorMapperEvent::AuthorMapped {
                author_id: id.clone(),
            },
        );
    }
    if let Some(n) = name.filter(|n| !n.is_empty()) {
        outcome.author(&id, AuthorEvent::AuthorNameSet { name: n.to_owned() });
    }
    (outcome, id)
}

/// Etherpad's `getAuthorId(token)`: the token's author, created and mapped if need be.
pub fn author_for_token(
    token: &str,
    mapping: &Mapping,
    new: &NewAuthor,
    now: i64,
) -> (Outcome, String) {
    let mut outcome = Outcome::none();
    let (id, created) = map_author(mapping, new, now, &mut outcome);
    if created {
        outcome.token(
            token,
            TokenEvent::TokenMapped {
                author_id: id.clone(),
            },
        );
    }
    (outcome, id)
}
