//! Session and map events into `session:S`, `token2author:T`, `mapper2author:M` and
//! `mapper2group:M`.

use super::batch::Batch;
use crate::store::keys;
use crate::store::records::SessionRecord;
use palimpsest_events::pads::{AuthorMapperEvent, GroupMapperEvent, SessionEvent, TokenEvent};
use palimpsest_projections::ProjectionError;

/// Applies one event of session `session_id`.
pub fn apply_session(
    batch: &mut Batch<'_>,
    session_id: &str,
    event: &SessionEvent,
) -> Result<(), ProjectionError> {
    let key = keys::session(session_id);
    match event {
        SessionEvent::SessionCreated {
            group_id,
            author_id,
            valid_until,
            ..
        } => batch.put(
            &key,
            &SessionRecord {
                group_id: group_id.clone(),
                author_id: author_id.clone(),
                valid_until: *valid_until,
            },
        ),
        SessionEvent::SessionDeleted { .. } => {
            batch.remove(&key);
            Ok(())
        }
    }
}

/// Applies one event of token `token`.
pub fn apply_token(
    batch: &mut Batch<'_>,
    token: &str,
    event: &TokenEvent,
) -> Result<(), ProjectionError> {
    let TokenEvent::TokenMapped { author_id } = event;
    batch.put(&keys::token_to_author(token), author_id)
}

/// Applies one event of author mapper `mapper`.
pub fn apply_author_mapper(
    batch: &mut Batch<'_>,
    mapper: &str,
    event: &AuthorMapperEvent,
) -> Result<(), ProjectionError> {
    let AuthorMapperEvent::AuthorMapped { author_id } = event;
    batch.put(&keys::mapper_to_author(mapper), author_id)
}

/// Applies one event of group mapper `mapper`.
pub fn apply_group_mapper(
    batch: &mut Batch<'_>,
    mapper: &str,
    event: &GroupMapperEvent,
) -> Result<(), ProjectionError> {
    let key = keys::mapper_to_group(mapper);
    match event {
        GroupMapperEvent::GroupMapped { group_id } => batch.put(&key, group_id),
        GroupMapperEvent::GroupMappingRemoved { .. } => {
            batch.remove(&key);
            Ok(())
        }
    }
}
