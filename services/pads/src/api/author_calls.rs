//! Author functions: `createAuthor`, `createAuthorIfNotExistsFor`, `getAuthorName`,
//! `listPadsOfAuthor`.

use super::envelope::{Data, Failure};
use super::group_calls::fresh;
use super::params::{js_string, truthy};
use super::{Ctx, now_ms};
use crate::domain::DomainError;
use crate::domain::author_commands::{
    NewAuthor, create_author as decide_create, create_author_for_mapper,
};
use crate::ids::IdKind;
use crate::store::keys;
use crate::store::records::AuthorRecord;
use palimpsest_events::pads::{AUTHOR_MAPPER, AuthorName};
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
#[tracing::instrument(skip_all, fields(mapper = ?c.p.get("authorMapper")))]
pub async fn create_author(c: Ctx<'_>) -> Result<Data, Failure> {
    let name = match c.p.get("name") {
        None => AuthorName::Absent,
        Some(Value::Null) => AuthorName::Null,
        Some(v) => AuthorName::Text(js_string(v)),
    };
    let new = new_author();
    let now = now_ms();
    let decision = &decide_create(&new, name, now);
    let answer = &Data::of(&json!({ "authorID": new.author_id }))?;
    c.pads
        .run(&c.request, |_| async move {
            Ok((decision.clone(), answer.clone()))
        })
        .await
}

/// `createAuthorIfNotExistsFor(authorMapper, name)` → `{authorID}`.
#[tracing::instrument(skip_all, fields(mapper = ?c.p.get("authorMapper")))]
pub async fn create_author_if_not_exists_for(c: Ctx<'_>) -> Result<Data, Failure> {
    let mapper = c.p.as_text("authorMapper");
    if !keys::fits(&keys::mapper_to_author(&mapper)) {
        return Err(Failure::api("Your Key can only be 100 chars"));
    }
    let name = c.p.get("name").filter(|v| truthy(v)).map(js_string);
    let new = new_author();
    let now = now_ms();
    let (mapper, name, new) = (&mapper, &name, &new);
    c.pads
        .run(&c.request, |load| async move {
            let mapping = load.mapping(AUTHOR_MAPPER, mapper).await?;
            if let Some(existing) = &mapping.target {
                load.author(existing).await?;
            }
            let (decision, id) =
                create_author_for_mapper(mapper, &mapping, name.as_deref(), new, now);
            Ok((decision, Data::of(&json!({ "authorID": id }))?))
        })
        .await
}

/// `getAuthorName(authorID)` → the name (as `data` itself), `null` if none.
pub async fn get_author_name(c: Ctx<'_>) -> Result<Data, Failure> {
    let author: Option<AuthorRecord> = c
        .reader
        .get(&keys::author(&c.p.as_text("authorID")))
        .await
        .map_err(Failure::internal)?;
    Data::of(&author.and_then(|a| a.name).flatten())
}

/// `listPadsOfAuthor(authorID)` → `{padIDs}`.
pub async fn list_pads_of_author(c: Ctx<'_>) -> Result<Data, Failure> {
    let author: AuthorRecord = c
        .reader
        .get(&keys::author(&c.p.as_text("authorID")))
        .await
        .map_err(Failure::internal)?
        .ok_or_else(|| Failure::from(DomainError::AuthorMissing))?;
    let pads = author.pad_ids.map(|p| p.keys()).unwrap_or_default();
    Data::of(&json!({ "padIDs": pads }))
}
