//! Pad content functions: `createPad`, `getText`, `setText`, `appendText`, `getHTML`,
//! `getRevisionsCount`, `getLastEdited`, `getAttributePool`, `getRevisionChangeset`,
//! `restoreRevision`.

use super::envelope::{Data, EnvelopeError};
use super::params::Params;
use super::{ApiCall, now_ms};
use crate::error::DomainError;
use crate::export::{html, text};
use crate::ids::is_valid_pad_id;
use crate::pad::command::TextEdit;
use crate::pad::decide::text as pad_text;
use crate::pad::{self, pool_of};
use crate::read::StoreReader;
use crate::store::records::{FullPoolRecord, PadRecord};
use palimpsest_events::pads::AText;
use serde_json::{Value, json};

/// Etherpad's `getPadSafe` checks of a pad id parameter (`padID`, `sourceID`): a string
/// matching the pad id pattern.
pub(crate) fn pad_param(params: &Params, name: &str) -> Result<String, EnvelopeError> {
    let id = params
        .string(name)
        .ok_or_else(|| EnvelopeError::api("padID is not a string"))?;
    if !is_valid_pad_id(id) {
        return Err(EnvelopeError::api("padID did not match requirements"));
    }
    Ok(id.to_owned())
}

/// The record of an existing pad (`getPadSafe(padID, true)`).
pub(crate) async fn existing_pad(
    reader: &StoreReader,
    id: &str,
) -> Result<PadRecord, EnvelopeError> {
    reader
        .pad(id)
        .await
        .map_err(EnvelopeError::internal)?
        .ok_or_else(|| DomainError::PadMissing.into())
}

/// The id check `getPad` makes before creating a pad.
pub(crate) fn valid_pad_id_for_creation(id: &str) -> Result<(), EnvelopeError> {
    if is_valid_pad_id(id) {
        Ok(())
    } else {
        Err(EnvelopeError::api(format!("{id} is not a valid padId")))
    }
}

/// The `text` of a pad creation: absent or null means the default text; anything but a string
/// is refused.
pub(crate) fn initial_text(params: &Params) -> Result<Option<String>, EnvelopeError> {
    match params.get("text") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(EnvelopeError::api("text is not a string")),
    }
}

/// `createPad(padID, text, authorId)`.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn create_pad(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    if let Some(id) = call.params.string("padID").filter(|s| !s.is_empty()) {
        if id.contains('$') {
            return Err(EnvelopeError::api("createPad can't create group pads"));
        }
        if id.contains(['/', '?', '&', '#']) {
            return Err(EnvelopeError::api(
                "malformed padID: Remove special characters",
            ));
        }
    }
    let pad_id = pad_param(&call.params, "padID")?;
    let author = call.params.author_id("authorId");
    let now = now_ms();
    let text = initial_text(&call.params)?;
    let (pad_id, author, text) = (&pad_id, &author, &text);
    call.pads
        .run(&call.request, |load| async move {
            let outcome =
                pad::command::create_pad(&load, pad_id, text.as_deref(), author, now).await?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// The revision asked for, checked against the head (`rev is higher than the head revision`).
fn within_head(rev: Option<i64>, head: i64) -> Result<Option<i64>, EnvelopeError> {
    match rev {
        Some(r) if r > head => Err(DomainError::RevAboveHead.into()),
        other => Ok(other),
    }
}

/// The pad's attributed text at `rev`, or at its head.
async fn atext_of(
    call: &ApiCall<'_>,
    id: &str,
    record: &PadRecord,
    rev: Option<i64>,
) -> Result<AText, EnvelopeError> {
    match rev {
        Some(r) => call
            .reader
            .atext_at(id, r, &pool_of(&record.pool.attributes()))
            .await
            .map_err(EnvelopeError::internal),
        None => Ok(AText::from(record.atext.clone())),
    }
}

/// `getText(padID, rev)` → `{text}`: the head as Etherpad's text export, an older revision raw.
pub async fn get_text(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let rev = call.params.rev("rev")?;
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    let rev = within_head(rev, record.head)?;
    let atext = atext_of(&call, &id, &record, rev).await?;
    let body = match rev {
        Some(_) => atext.text,
        None => text::txt(&atext, &pool_of(&record.pool.attributes()))
            .map_err(EnvelopeError::internal)?,
    };
    Data::of(&json!({ "text": body }))
}

/// The `text` parameter of `setText`/`appendText`, which must be a string.
fn edit_text(params: &Params) -> Result<String, EnvelopeError> {
    match params.get("text") {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(EnvelopeError::api("text is not a string")),
    }
}

/// `setText(padID, text, authorId)`.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn set_text(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    edit_text_with(call, pad_text::set_text).await
}

/// `appendText(padID, text, authorId)`.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn append_text(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    edit_text_with(call, pad_text::append_text).await
}

/// The edit both `setText` and `appendText` make: parse, then load the pad and its author,
/// decide, append, and decide again from fresh state if another writer got there first.
async fn edit_text_with(call: ApiCall<'_>, decide: TextEdit) -> Result<Data, EnvelopeError> {
    let text = edit_text(&call.params)?;
    let id = pad_param(&call.params, "padID")?;
    let author = call.params.author_id("authorId");
    let now = now_ms();
    let (text, id, author) = (&text, &id, &author);
    call.pads
        .run(&call.request, |load| async move {
            let outcome = pad::command::edit_text(&load, decide, id, text, author, now).await?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// `getHTML(padID, rev)` → `{html}`, rendered in the export pool, off the request threads.
pub async fn get_html(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let rev = call.params.rev("rev")?;
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    let rev = within_head(rev, record.head)?;
    let atext = atext_of(&call, &id, &record, rev).await?;
    let pool = pool_of(&record.pool.attributes());
    let html = call
        .pads
        .exports
        .run(move || html::html_document(&atext, &pool))
        .await
        .map_err(EnvelopeError::internal)?
        .map_err(EnvelopeError::internal)?;
    Data::of(&json!({ "html": html }))
}

/// `getRevisionsCount(padID)` → `{revisions}` (the head revision number).
pub async fn get_revisions_count(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    Data::of(&json!({ "revisions": record.head }))
}

/// `getLastEdited(padID)` → `{lastEdited}`: the head revision's timestamp.
pub async fn get_last_edited(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    let rev = call
        .reader
        .revision(&id, record.head)
        .await
        .map_err(EnvelopeError::internal)?;
    Data::of(&json!({ "lastEdited": rev.map(|r| r.meta.timestamp) }))
}

/// `getAttributePool(padID)` → `{pool}` with `numToAttrib`, `attribToNum` and `nextNum`.
pub async fn get_attribute_pool(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    /// `{pool}`, the pool in Etherpad's property order.
    #[derive(serde::Serialize)]
    struct Answer {
        pool: FullPoolRecord,
    }
    Data::of(&Answer {
        pool: FullPoolRecord::from_attributes(&record.pool.attributes()),
    })
}

/// `getRevisionChangeset(padID, rev)` → the changeset (of the head when `rev` is absent).
pub async fn get_revision_changeset(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let rev = call.params.rev("rev")?;
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    let rev = within_head(rev, record.head)?.unwrap_or(record.head);
    let r = call
        .reader
        .revision(&id, rev)
        .await
        .map_err(EnvelopeError::internal)?;
    Data::of(&r.map(|r| r.changeset))
}

/// `restoreRevision(padID, rev, authorId)`: a new revision bringing back revision `rev`.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn restore_revision(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let Some(value) = call.params.get("rev") else {
        return Err(EnvelopeError::api("rev is not defined"));
    };
    let rev = super::params::check_valid_rev(value)?;
    let id = pad_param(&call.params, "padID")?;
    let author = call.params.author_id("authorId");
    let now = now_ms();
    let (id, author, reader) = (&id, &author, &call.reader);
    call.pads
        .run(&call.request, |load| async move {
            let outcome =
                pad::command::restore_revision(&load, reader, id, rev, author, now).await?;
            Ok((outcome, Data::null()))
        })
        .await
}
