//! Author functions: `createAuthor`, `createAuthorIfNotExistsFor`, `getAuthorName`,
//! `listPadsOfAuthor`.

use super::envelope::{Data, EnvelopeError};
use super::group_calls::fresh;
use super::params::{js_string, truthy};
use super::{ApiCall, now_ms};
use crate::author::decide::create_author as decide_create;
use crate::author::{self, NewAuthor};
use crate::error::DomainError;
use crate::ids::IdKind;
use crate::store::keys;
use crate::store::records::AuthorRecord;
use palimpsest_events::pads::AuthorName;
use rand::Rng;
use serde_json::{Value, json};

/// The number of colors in Etherpad's palette.
pub const PALETTE_SIZE: i64 = 64;

/// A new author's id and a random palette color.
pub(crate) fn new_author() -> NewAuthor {
    let color_id = rand::rng().random_range(0..PALETTE_SIZE);
    NewAuthor {
        author_id: fresh(IdKind::Author),
        color_id,
    }
}

/// `createAuthor(name)` → `{authorID}`.
#[tracing::instrument(skip_all, fields(mapper = ?call.params.get("authorMapper")))]
pub async fn create_author(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let name = match call.params.get("name") {
        None => AuthorName::Absent,
        Some(Value::Null) => AuthorName::Null,
        Some(v) => AuthorName::Text(js_string(v)),
    };
    let new = new_author();
    let now = now_ms();
    let outcome = &decide_create(&new, name, now);
    let answer = &Data::of(&json!({ "authorID": new.author_id }))?;
    call.pads
        .run(&call.request, |_| async move {
            Ok((outcome.clone(), answer.clone()))
        })
        .await
}

/// `createAuthorIfNotExistsFor(authorMapper, name)` → `{authorID}`.
#[tracing::instrument(skip_all, fields(mapper = ?call.params.get("authorMapper")))]
pub async fn create_author_if_not_exists_for(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let mapper = call.params.as_text("authorMapper");
    if !keys::fits(&keys::mapper_to_author(&mapper)) {
        return Err(EnvelopeError::api("Your Key can only be 100 chars"));
    }
    let name = call.params.get("name").filter(|v| truthy(v)).map(js_string);
    let new = new_author();
    let now = now_ms();
    let (mapper, name, new) = (&mapper, &name, &new);
    call.pads
        .run(&call.request, |load| async move {
            let (outcome, id) =
                author::command::author_for_mapper(&load, mapper, name.as_deref(), new, now)
                    .await?;
            Ok((outcome, Data::of(&json!({ "authorID": id }))?))
        })
        .await
}

/// `getAuthorName(authorID)` → the name (as `data` itself), `null` if none.
pub async fn get_author_name(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let author: Option<AuthorRecord> = call
        .reader
        .get(&keys::author(&call.params.as_text("authorID")))
        .await
        .map_err(EnvelopeError::internal)?;
    Data::of(&author.and_then(|a| a.name).flatten())
}

/// `listPadsOfAuthor(authorID)` → `{padIDs}`.
pub async fn list_pads_of_author(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let author: AuthorRecord = call
        .reader
        .get(&keys::author(&call.params.as_text("authorID")))
        .await
        .map_err(EnvelopeError::internal)?
        .ok_or_else(|| EnvelopeError::from(DomainError::AuthorMissing))?;
    let pads = author.pad_ids.map(|p| p.keys()).unwrap_or_default();
    Data::of(&json!({ "padIDs": pads }))
}
