//! Group functions: `createGroup`, `createGroupIfNotExistsFor`, `deleteGroup`, `listPads`,
//! `createGroupPad`, `listAllGroups`.

use super::envelope::{Data, EnvelopeError};
use super::pad_calls::{initial_text, valid_pad_id_for_creation};
use super::{ApiCall, now_ms};
use crate::error::DomainError;
use crate::group::{self, decide as group_commands};
use crate::ids::{IdKind, new_id};
use crate::js_object::JsObject;
use crate::pad;
use crate::store::keys;
use crate::store::records::GroupRecord;
use serde_json::json;

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
            let (outcome, id) = group::command::group_for_mapper(&load, mapper, candidate).await?;
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
            let outcome = group::command::delete_group(&load, group_id).await?;
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
