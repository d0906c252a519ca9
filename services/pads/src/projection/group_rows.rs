//! Group events into `groups`, `group:G` and `group2sessions:G`.

use super::batch::Batch;
use crate::js_object::JsObject;
use crate::store::keys;
use crate::store::records::{GroupRecord, SessionListRecord};
use palimpsest_events::pads::GroupEvent;
use palimpsest_projections::ProjectionError;

/// The group record, or a new empty one (`{pads: {}, mappings: {}}`).
async fn group(batch: &mut Batch<'_>, group_id: &str) -> Result<GroupRecord, ProjectionError> {
    Ok(batch
        .get(&keys::group(group_id))
        .await?
        .unwrap_or(GroupRecord {
            pads: JsObject::new(),
            mappings: JsObject::new(),
        }))
}

/// Applies one event of group `group_id`.
pub async fn apply(
    batch: &mut Batch<'_>,
    group_id: &str,
    event: &GroupEvent,
) -> Result<(), ProjectionError> {
    let key = keys::group(group_id);
    match event {
        GroupEvent::GroupCreated { .. } => {
            batch.put(
                &key,
                &GroupRecord {
                    pads: JsObject::new(),
                    mappings: JsObject::new(),
                },
            )?;
            let mut groups: JsObject<i64> = batch.get(keys::GROUPS).await?.unwrap_or_default();
            groups.insert(group_id, 1);
            batch.put(keys::GROUPS, &groups)?;
        }
        GroupEvent::GroupMapperAdded { mapper } => {
            let mut g = group(batch, group_id).await?;
            g.mappings.insert(mapper, 1);
            batch.put(&key, &g)?;
        }
        GroupEvent::GroupPadAdded { pad_id } => {
            let mut g = group(batch, group_id).await?;
            g.pads.insert(pad_id, 1);
            batch.put(&key, &g)?;
        }
        GroupEvent::GroupPadRemoved { pad_id } => {
            let mut g = group(batch, group_id).await?;
            g.pads.remove(pad_id);
            batch.put(&key, &g)?;
        }
        GroupEvent::GroupSessionAdded { session_id } => {
            let list_key = keys::group_sessions(group_id);
            let mut list: SessionListRecord = batch.get(&list_key).await?.unwrap_or_default();
            list.session_ids.insert(session_id, 1);
            batch.put(&list_key, &list)?;
        }
        GroupEvent::GroupSessionRemoved { session_id } => {
            let list_key = keys::group_sessions(group_id);
            let mut list: SessionListRecord = batch.get(&list_key).await?.unwrap_or_default();
            list.session_ids.remove(session_id);
            batch.put(&list_key, &list)?;
        }
        GroupEvent::GroupDeleted { .. } => {
            batch.remove(&keys::group_sessions(group_id));
            let mut groups: JsObject<i64> = batch.get(keys::GROUPS).await?.unwrap_or_default();
            groups.remove(group_id);
            batch.put(keys::GROUPS, &groups)?;
            batch.remove(&key);
        }
    }
    Ok(())
}
