//! Group functions: `createGroup`, `createGroupIfNotExistsFor`, `deleteGroup`, `listPads`,
//! `createGroupPad`, `listAllGroups`.

use super::envelope::{Data, EnvelopeError};
use super::pad_calls::{initial_text, valid_pad_id_for_creation};
use super::{ApiCall, now_ms};
use crate::error::DomainError;
use crate::group::GroupContents;
use crate::group::decide::{
    self as group_commands, create_group_for_mapper, delete_group as decide_delete,
};
use crate::ids::{IdKind, new_id};
use crate::js_object::JsObject;
use crate::pad;
use crate::store::keys;
use crate::store::records::GroupRecord;
use palimpsest_events::pads::GROUP_MAPPER;
use serde_json::json;
use std::collections::HashMap;

/// A fresh id of `kind`.
pub(crate) fn fresh(kind: IdKind) -> String {
    let mut rng = rand::rng();
    new_id(kind, &mut rng)
}

/// `createGroup()` → `{groupID}`.
#[tracing::instrument(skip_all, fields(group = ?call.params.get("groupID")))]
pub async fn create_group(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = fresh(IdKind::Group);
    let outcome = &group_commands::create_group(&id);
    let answer = &Data::of(&json!({ "groupID": id }))?;
    call.pads
        .run(&call.request, |_| async move {
            Ok((outcome.clone(), answer.clone()))
        })
        .await
}

/// `createGroupIfNotExistsFor(groupMapper)` → `{groupID}`.
#[tracing::instrument(skip_all, fields(group = ?call.params.get("groupID")))]
pub async fn create_group_if_not_exists_for(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let mapper = call.params.required_string("groupMapper")?.to_owned();
    if !keys::fits(&keys::mapper_to_group(&mapper)) {
        return Err(EnvelopeError::api("Your Key can only be 100 chars"));
    }
    let candidate = &fresh(IdKind::Group);
    let mapper = &mapper;
    call.pads
        .run(&call.request, |load| async move {
            let mapping = load.mapping(GROUP_MAPPER, mapper).await?;
            let group = match &mapping.target {
                Some(g) => Some(load.group(g).await?),
                None => None,
            };
            let (outcome, id) =
                create_group_for_mapper(mapper, &mapping, group.as_ref(), candidate);
            Ok((outcome, Data::of(&json!({ "groupID": id }))?))
        })
        .await
}

/// `deleteGroup(groupID)`: the group, its pads, sessions and mappings, in one append.
#[tracing::instrument(skip_all, fields(group = ?call.params.get("groupID")))]
pub async fn delete_group(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let group_id = &call.params.as_text("groupID");
    call.pads
        .run(&call.request, |load| async move {
            let group = load.group(group_id).await?;
            if !group.exists {
                return Err(DomainError::GroupMissing.into());
            }
            let mut pad_states = HashMap::new();
            let mut author_ids = Vec::new();
            for pad_id in &group.pads {
                let pad = load.pad(pad_id).await?;
                author_ids.extend(pad.authors());
                pad_states.insert(pad_id.clone(), pad);
            }
            let mut sessions = HashMap::new();
            for session_id in &group.sessions {
                let session = load.session(session_id).await?;
                author_ids.push(session.author_id.clone());
                sessions.insert(session_id.clone(), session);
            }
            for mapper in &group.mappers {
                load.mapping(GROUP_MAPPER, mapper).await?;
            }
            let authors = load.authors(author_ids).await?;
            let contents = GroupContents {
                pads: pad_states,
                sessions,
                authors,
            };
            let outcome = decide_delete(group_id, &group, contents)?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// `listPads(groupID)` → `{padIDs}`.
pub async fn list_pads(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let group_id = call.params.as_text("groupID");
    let group: GroupRecord = call
        .reader
        .get(&keys::group(&group_id))
        .await
        .map_err(EnvelopeError::internal)?
        .ok_or_else(|| EnvelopeError::from(DomainError::GroupMissing))?;
    Data::of(&json!({ "padIDs": group.pads.keys() }))
}

/// `createGroupPad(groupID, padName, text, authorId)` → `{padID}`.
#[tracing::instrument(skip_all, fields(group = ?call.params.get("groupID")))]
pub async fn create_group_pad(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let group_id = call.params.as_text("groupID");
    let pad_id = format!("{}${}", group_id, call.params.as_text("padName"));
    let author = call.params.author_id("authorId");
    let text = initial_text(&call.params)?;
    let now = now_ms();
    let answer = &Data::of(&json!({ "padID": pad_id }))?;
    let id_check = &valid_pad_id_for_creation(&pad_id);
    let (group_id, pad_id, author, text) = (&group_id, &pad_id, &author, &text);
    call.pads
        .run(&call.request, |load| async move {
            let outcome = pad::command::create_group_pad(
                &load,
                (group_id, pad_id),
                id_check,
                text.as_deref(),
                author,
                now,
            )
            .await?;
            Ok((outcome, answer.clone()))
        })
        .await
}

/// `listAllGroups()` → `{groupIDs}`.
pub async fn list_all_groups(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let groups: JsObject<serde_json::Value> = call
        .reader
        .get(keys::GROUPS)
        .await
        .map_err(EnvelopeError::internal)?
        .unwrap_or_default();
    Data::of(&json!({ "groupIDs": groups.keys() }))
}
