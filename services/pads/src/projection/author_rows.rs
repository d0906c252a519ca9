//! Author events into `globalAuthor:A` and `author2sessions:A`.

use super::batch::Batch;
use crate::js_object::JsObject;
use crate::store::keys;
use crate::store::records::{AuthorRecord, ColorId, SessionListRecord};
use palimpsest_events::pads::{AuthorEvent, AuthorName};
use palimpsest_projections::ProjectionError;

/// Applies one event of author `author_id`.
pub async fn apply(
    batch: &mut Batch<'_>,
    author_id: &str,
    event: &AuthorEvent,
) -> Result<(), ProjectionError> {
    let key = keys::author(author_id);
    if let AuthorEvent::AuthorCreated {
        name,
        color_id,
        timestamp,
        ..
    } = event
    {
        let record = AuthorRecord {
            color_id: ColorId::Palette(*color_id),
            name: match name {
                AuthorName::Absent => None,
                AuthorName::Null => Some(None),
                AuthorName::Text(n) => Some(Some(n.clone())),
            },
            timestamp: *timestamp,
            pad_ids: None,
        };
        return batch.put(&key, &record);
    }
    if let AuthorEvent::AuthorSessionAdded { session_id }
    | AuthorEvent::AuthorSessionRemoved { session_id } = event
    {
        let list_key = keys::author_sessions(author_id);
        let mut list: SessionListRecord = batch.get(&list_key).await?.unwrap_or_default();
        if matches!(event, AuthorEvent::AuthorSessionAdded { .. }) {
            list.session_ids.insert(session_id, 1);
        } else {
            list.session_ids.remove(session_id);
        }
        return batch.put(&list_key, &list);
    }
    let Some(mut record) = batch.get::<AuthorRecord>(&key).await? else {
        // Etherpad leaves a missing author record alone (`addPad`/`removePad` return early).
        return Ok(());
    };
    match event {
        AuthorEvent::AuthorNameSet { name } => record.name = Some(Some(name.clone())),
        AuthorEvent::AuthorSeen { timestamp } => record.timestamp = *timestamp,
        AuthorEvent::AuthorPadLinked { pad_id } => {
            record
                .pad_ids
                .get_or_insert_with(JsObject::new)
                .insert(pad_id, 1);
        }
        AuthorEvent::AuthorPadUnlinked { pad_id } => {
            if let Some(pads) = record.pad_ids.as_mut() {
                pads.remove(pad_id);
            }
        }
        AuthorEvent::AuthorCreated { .. }
        | AuthorEvent::AuthorSessionAdded { .. }
        | AuthorEvent::AuthorSessionRemoved { .. } => {}
    }
    batch.put(&key, &record)
}
