//! Pad administration functions: `deletePad`, `copyPad`, `movePad`, `copyPadWithoutHistory`,
//! `getReadOnlyID`, `getPadID`, `setPublicStatus`, `getPublicStatus`, `listAuthorsOfPad`,
//! `saveRevision`, `getSavedRevisionsCount`, `listSavedRevisions`.

use super::author_calls::new_author;
use super::envelope::{Data, EnvelopeError};
use super::pad_calls::{existing_pad, pad_param};
use super::params::{Params, truthy};
use super::{ApiCall, now_ms};
use crate::error::DomainError;
use crate::ids::{IdKind, is_valid_pad_id, new_saved_revision_id};
use crate::pad::command::TransferKind;
use crate::pad::{self, pool_of};
use crate::store::keys;
use serde_json::{Value, json};

/// `deletePad(padID)`.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn delete_pad(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = &pad_param(&call.params, "padID")?;
    call.pads
        .run(&call.request, |load| async move {
            let outcome = pad::command::delete_pad(&load, id).await?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// The source and destination of a copy or move: the source checked as `getPadSafe` does, the
/// destination as `getPad` does.
fn endpoints(params: &Params) -> Result<(String, String), EnvelopeError> {
    let source = pad_param(params, "sourceID")?;
    let dest = params
        .string("destinationID")
        .ok_or_else(|| EnvelopeError::api("destinationID is not a string"))?
        .to_owned();
    if !is_valid_pad_id(&dest) {
        return Err(EnvelopeError::api(format!("{dest} is not a valid padId")));
    }
    Ok((source, dest))
}

/// A copy or move: the endpoints, `force` and the author, then [`pad::command::transfer_pad`].
async fn transfer(call: ApiCall<'_>, kind: TransferKind) -> Result<Data, EnvelopeError> {
    let (source, dest) = endpoints(&call.params)?;
    let force = call.params.flag("force");
    let author = call.params.author_id("authorId");
    let now = now_ms();
    let (source, dest, author) = (&source, &dest, &author);
    call.pads
        .run(&call.request, |load| async move {
            let outcome =
                pad::command::transfer_pad(&load, kind, (source, dest), force, author, now).await?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// `copyPad(sourceID, destinationID, force)`.
#[tracing::instrument(skip_all, fields(source = ?call.params.string("sourceID"), destination = ?call.params.string("destinationID")))]
pub async fn copy_pad(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    transfer(call, TransferKind::Copy).await
}

/// `movePad(sourceID, destinationID, force)`.
#[tracing::instrument(skip_all, fields(source = ?call.params.string("sourceID"), destination = ?call.params.string("destinationID")))]
pub async fn move_pad(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    transfer(call, TransferKind::Move).await
}

/// `copyPadWithoutHistory(sourceID, destinationID, force, authorId)`.
#[tracing::instrument(skip_all, fields(source = ?call.params.string("sourceID"), destination = ?call.params.string("destinationID")))]
pub async fn copy_pad_without_history(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    transfer(call, TransferKind::WithoutHistory).await
}

/// `getReadOnlyID(padID)` → `{readOnlyID}`, given on first request.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn get_read_only_id(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = &pad_param(&call.params, "padID")?;
    let candidate = &super::group_calls::fresh(IdKind::ReadOnly);
    call.pads
        .run(&call.request, |load| async move {
            let (outcome, read_only) = pad::command::read_only_id(&load, id, candidate).await?;
            Ok((outcome, Data::of(&json!({ "readOnlyID": read_only }))?))
        })
        .await
}

/// `getPadID(roID)` → `{padID}`.
pub async fn get_pad_id(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let key = keys::read_only_to_pad(&call.params.as_text("roID"));
    let pad: Option<String> = call
        .reader
        .get(&key)
        .await
        .map_err(EnvelopeError::internal)?;
    let pad = pad.ok_or_else(|| EnvelopeError::from(DomainError::PadMissing))?;
    Data::of(&json!({ "padID": pad }))
}

/// Etherpad's `checkGroupPad`: public status only exists for group pads.
fn check_group_pad(params: &Params) -> Result<(), EnvelopeError> {
    if let Some(id) = params.string("padID")
        && !id.is_empty()
        && !id.contains('$')
    {
        return Err(EnvelopeError::api(
            "You can only get/set the publicStatus of pads that belong to a group",
        ));
    }
    Ok(())
}

/// `setPublicStatus(padID, publicStatus)`.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn set_public_status(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    check_group_pad(&call.params)?;
    let id = &pad_param(&call.params, "padID")?;
    let status = match call.params.get("publicStatus") {
        Some(Value::String(s)) => s.to_lowercase() == "true",
        Some(v) => truthy(v),
        None => false,
    };
    call.pads
        .run(&call.request, |load| async move {
            let outcome = pad::command::set_public_status(&load, id, status).await?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// `getPublicStatus(padID)` → `{publicStatus}`.
pub async fn get_public_status(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    check_group_pad(&call.params)?;
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    Data::of(&json!({ "publicStatus": record.public_status }))
}

/// `listAuthorsOfPad(padID)` → `{authorIDs}`: the pool's non-empty `author` attributes.
pub async fn list_authors_of_pad(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    let pool = pool_of(&record.pool.attributes());
    let authors: Vec<String> = pool
        .iter()
        .filter(|(_, k, v)| *k == "author" && !v.is_empty())
        .map(|(_, _, v)| v.to_owned())
        .collect();
    Data::of(&json!({ "authorIDs": authors }))
}

/// `saveRevision(padID, rev)`: saved by a new author named `API`, as in Etherpad.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn save_revision(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let rev = call.params.rev("rev")?;
    let id = &pad_param(&call.params, "padID")?;
    let author = &new_author();
    let saved_id = &{
        let mut rng = rand::rng();
        new_saved_revision_id(&mut rng)
    };
    let now = now_ms();
    call.pads
        .run(&call.request, |load| async move {
            let outcome =
                pad::command::save_revision(&load, id, rev, author, saved_id, now).await?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// `getSavedRevisionsCount(padID)` → `{savedRevisions}`.
pub async fn get_saved_revisions_count(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    Data::of(&json!({ "savedRevisions": record.saved_revisions.len() }))
}

/// `listSavedRevisions(padID)` → `{savedRevisions}`: the saved revision numbers, ascending.
pub async fn list_saved_revisions(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    let mut revs: Vec<i64> = record.saved_revisions.iter().map(|s| s.rev_num).collect();
    revs.sort_unstable();
    Data::of(&json!({ "savedRevisions": revs }))
}
