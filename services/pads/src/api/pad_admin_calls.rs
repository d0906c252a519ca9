//! Pad administration functions: `deletePad`, `copyPad`, `movePad`, `copyPadWithoutHistory`,
//! `getReadOnlyID`, `getPadID`, `setPublicStatus`, `getPublicStatus`, `listAuthorsOfPad`,
//! `saveRevision`, `getSavedRevisionsCount`, `listSavedRevisions`.

use super::author_calls::new_author;
use super::envelope::{Data, Failure};
use super::pad_calls::{existing_pad, pad_param};
use super::params::{Params, truthy};
use super::{Ctx, now_ms};
use crate::domain::pad_marks::{self, ApiAuthor};
use crate::domain::pad_transfer::{self, Transfer};
use crate::domain::{DomainError, Groups, pool_of};
use crate::ids::{IdKind, group_of_pad, is_valid_pad_id, new_saved_revision_id};
use crate::service::Load;
use crate::store::keys;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The groups of the given pad ids, loaded.
async fn groups_of(load: &Load, pad_ids: &[&str]) -> Result<Groups, Failure> {
    let mut map = HashMap::new();
    for id in pad_ids {
        if let Some(g) = group_of_pad(id)
            && !map.contains_key(g)
        {
            let group = load.group(g).await?;
            map.insert(g.to_owned(), group);
        }
    }
    Ok(Groups::new(map))
}

/// `deletePad(padID)`.
#[tracing::instrument(skip_all, fields(pad = ?c.p.string("padID")))]
pub async fn delete_pad(c: Ctx<'_>) -> Result<Data, Failure> {
    let id = &pad_param(&c.p, "padID")?;
    c.pads
        .run(&c.request, |load| async move {
            let pad = load.pad(id).await?;
            let groups = groups_of(&load, &[id]).await?;
            let authors = load.authors(pad.authors()).await?;
            let decision = pad_transfer::delete_pad(&pad, groups, authors)?;
            Ok((decision, Data::null()))
        })
        .await
}

/// The source and destination of a copy or move: the source checked as `getPadSafe` does, the
/// destination as `getPad` does.
fn endpoints(p: &Params) -> Result<(String, String), Failure> {
    let source = pad_param(p, "sourceID")?;
    let dest = p
        .string("destinationID")
        .ok_or_else(|| Failure::api("destinationID is not a string"))?
        .to_owned();
    if !is_valid_pad_id(&dest) {
        return Err(Failure::api(format!("{dest} is not a valid padId")));
    }
    Ok((source, dest))
}

/// Which copy to make.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Copy,
    Move,
    WithoutHistory,
}

/// Loads both pads, their groups and authors, and decides the copy or move.
async fn transfer(c: Ctx<'_>, kind: Kind) -> Result<Data, Failure> {
    let (source, dest) = endpoints(&c.p)?;
    let force = c.p.flag("force");
    let author = c.p.author_id("authorId");
    let now = now_ms();
    let (source, dest, author) = (&source, &dest, &author);
    c.pads
        .run(&c.request, |load| async move {
            let from = load.pad(source).await?;
            let to = load.pad(dest).await?;
            let groups = groups_of(&load, &[source, dest]).await?;
            let mut ids = from.authors();
            ids.extend(to.authors());
            ids.push(author.clone());
            let authors = load.authors(ids).await?;
            let t = Transfer {
                source: from,
                destination: to,
                groups,
                authors,
                force,
            };
            let decision = match kind {
                Kind::Copy => pad_transfer::copy_pad(t)?,
                Kind::Move => pad_transfer::move_pad(t)?,
                Kind::WithoutHistory => pad_transfer::copy_pad_without_history(t, author, now)?,
            };
            Ok((decision, Data::null()))
        })
        .await
}

/// `copyPad(sourceID, destinationID, force)`.
#[tracing::instrument(skip_all, fields(source = ?c.p.string("sourceID"), destination = ?c.p.string("destinationID")))]
pub async fn copy_pad(c: Ctx<'_>) -> Result<Data, Failure> {
    transfer(c, Kind::Copy).await
}

/// `movePad(sourceID, destinationID, force)`.
#[tracing::instrument(skip_all, fields(source = ?c.p.string("sourceID"), destination = ?c.p.string("destinationID")))]
pub async fn move_pad(c: Ctx<'_>) -> Result<Data, Failure> {
    transfer(c, Kind::Move).await
}

/// `copyPadWithoutHistory(sourceID, destinationID, force, authorId)`.
#[tracing::instrument(skip_all, fields(source = ?c.p.string("sourceID"), destination = ?c.p.string("destinationID")))]
pub async fn copy_pad_without_history(c: Ctx<'_>) -> Result<Data, Failure> {
    transfer(c, Kind::WithoutHistory).await
}

/// `getReadOnlyID(padID)` → `{readOnlyID}`, given on first request.
#[tracing::instrument(skip_all, fields(pad = ?c.p.string("padID")))]
pub async fn get_read_only_id(c: Ctx<'_>) -> Result<Data, Failure> {
    let id = &pad_param(&c.p, "padID")?;
    let candidate = &super::group_calls::fresh(IdKind::ReadOnly);
    c.pads
        .run(&c.request, |load| async move {
            let pad = load.pad(id).await?;
            if !pad.exists {
                return Err(DomainError::PadMissing.into());
            }
            let (decision, read_only) = pad_marks::read_only_id(&pad, candidate.clone())?;
            Ok((decision, Data::of(&json!({ "readOnlyID": read_only }))?))
        })
        .await
}

/// `getPadID(roID)` → `{padID}`.
pub async fn get_pad_id(c: Ctx<'_>) -> Result<Data, Failure> {
    let key = keys::read_only_to_pad(&c.p.as_text("roID"));
    let pad: Option<String> = c.reader.get(&key).await.map_err(Failure::internal)?;
    let pad = pad.ok_or_else(|| Failure::from(DomainError::PadMissing))?;
    Data::of(&json!({ "padID": pad }))
}

/// Etherpad's `checkGroupPad`: public status only exists for group pads.
fn check_group_pad(p: &Params) -> Result<(), Failure> {
    if let Some(id) = p.string("padID")
        && !id.is_empty()
        && !id.contains('$')
    {
        return Err(Failure::api(
            "You can only get/set the publicStatus of pads that belong to a group",
        ));
    }
    Ok(())
}

/// `setPublicStatus(padID, publicStatus)`.
#[tracing::instrument(skip_all, fields(pad = ?c.p.string("padID")))]
pub async fn set_public_status(c: Ctx<'_>) -> Result<Data, Failure> {
    check_group_pad(&c.p)?;
    let id = &pad_param(&c.p, "padID")?;
    let status = match c.p.get("publicStatus") {
        Some(Value::String(s)) => s.to_lowercase() == "true",
        Some(v) => truthy(v),
        None => false,
    };
    c.pads
        .run(&c.request, |load| async move {
            let pad = load.pad(id).await?;
            if !pad.exists {
                return Err(DomainError::PadMissing.into());
            }
            let decision = pad_marks::set_public_status(&pad, status)?;
            Ok((decision, Data::null()))
        })
        .await
}

/// `getPublicStatus(padID)` → `{publicStatus}`.
pub async fn get_public_status(c: Ctx<'_>) -> Result<Data, Failure> {
    check_group_pad(&c.p)?;
    let id = pad_param(&c.p, "padID")?;
    let record = existing_pad(&c.reader, &id).await?;
    Data::of(&json!({ "publicStatus": record.public_status }))
}

/// `listAuthorsOfPad(padID)` → `{authorIDs}`: the pool's non-empty `author` attributes.
pub async fn list_authors_of_pad(c: Ctx<'_>) -> Result<Data, Failure> {
    let id = pad_param(&c.p, "padID")?;
    let record = existing_pad(&c.reader, &id).await?;
    let pool = pool_of(&record.pool.attributes());
    let authors: Vec<String> = pool
        .iter()
        .filter(|(_, k, v)| *k == "author" && !v.is_empty())
        .map(|(_, _, v)| v.to_owned())
        .collect();
    Data::of(&json!({ "authorIDs": authors }))
}

/// `saveRevision(padID, rev)`: saved by a new author named `API`, as in Etherpad.
#[tracing::instrument(skip_all, fields(pad = ?c.p.string("padID")))]
pub async fn save_revision(c: Ctx<'_>) -> Result<Data, Failure> {
    let rev = c.p.rev("rev")?;
    let id = &pad_param(&c.p, "padID")?;
    let author = &new_author();
    let saved_id = &{
        let mut rng = rand::rng();
        new_saved_revision_id(&mut rng)
    };
    let now = now_ms();
    c.pads
        .run(&c.request, |load| async move {
            let pad = load.pad(id).await?;
            if !pad.exists {
                return Err(DomainError::PadMissing.into());
            }
            if rev.is_some_and(|r| r > pad.head) {
                return Err(DomainError::RevAboveHead.into());
            }
            let api = ApiAuthor {
                author_id: author.author_id.clone(),
                color_id: author.color_id,
            };
            let decision = pad_marks::save_revision(&pad, rev, api, saved_id.clone(), now)?;
            Ok((decision, Data::null()))
        })
        .await
}

/// `getSavedRevisionsCount(padID)` → `{savedRevisions}`.
pub async fn get_saved_revisions_count(c: Ctx<'_>) -> Result<Data, Failure> {
    let id = pad_param(&c.p, "padID")?;
    let record = existing_pad(&c.reader, &id).await?;
    Data::of(&json!({ "savedRevisions": record.saved_revisions.len() }))
}

/// `listSavedRevisions(padID)` → `{savedRevisions}`: the saved revision numbers, ascending.
pub async fn list_saved_revisions(c: Ctx<'_>) -> Result<Data, Failure> {
    let id = pad_param(&c.p, "padID")?;
    let record = existing_pad(&c.reader, &id).await?;
    let mut revs: Vec<i64> = record.saved_revisions.iter().map(|s| s.rev_num).collect();
    revs.sort_unstable();
    Data::of(&json!({ "savedRevisions": revs }))
}
