//! `setHTML` (Etherpad's HTML import, [`crate::import`]) and `createDiffHTML`
//! ([`crate::export::diff_html`]).

use super::envelope::{Data, Failure};
use super::pad_calls::{existing_pad, pad_param};
use super::params::check_valid_rev;
use super::{Ctx, now_ms};
use crate::changes::AttributePool;
use crate::domain::pool_of;
use crate::export::diff_html;
use crate::import;
use crate::reads::StoreReader;
use crate::store::keys;
use crate::store::records::{AuthorRecord, ColorId, PALETTE, RevisionRecord};
use serde_json::{Value, json};
use std::collections::HashMap;

/// `setHTML(padID, html, authorId)`: the pad's text becomes what Etherpad imports from `html`.
#[tracing::instrument(skip_all, fields(pad = ?c.p.string("padID")))]
pub async fn set_html(c: Ctx<'_>) -> Result<Data, Failure> {
    let html = match c.p.get("html") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(Failure::api("html is not a string")),
    };
    let id = pad_param(&c.p, "padID")?;
    let author = c.p.author_id("authorId");
    let now = now_ms();
    let (html, id, author) = (&html, &id, &author);
    c.pads
        .run(&c.request, |load| async move {
            let pad = load.pad(id).await?;
            let authors = load.authors([author.clone()]).await?;
            let decision = import::set_html(&pad, html, author, now, authors)?;
            Ok((decision, Data::null()))
        })
        .await
}

/// `createDiffHTML(padID, startRev, endRev)` → `{html, authors}`: the changes between the two
/// revisions with author colours, as Etherpad 1.9.7 renders them ([`diff_html`]). The diff and
/// its rendering run in the export pool, off the request threads.
#[tracing::instrument(skip_all, fields(pad = ?c.p.string("padID")))]
pub async fn create_diff_html(c: Ctx<'_>) -> Result<Data, Failure> {
    let start = c.p.get("startRev").map(check_valid_rev).transpose()?;
    let end = c.p.get("endRev").map(check_valid_rev).transpose()?;
    let id = pad_param(&c.p, "padID")?;
    let record = existing_pad(&c.reader, &id).await?;
    let (from, to) = revision_range(start, end, record.head)?;
    let pad_pool = pool_of(&record.pool.attributes());
    let start_text = c
        .reader
        .atext_at(&id, from, &pad_pool)
        .await
        .map_err(Failure::internal)?;
    let revisions = revisions(&c.reader, &id, from + 1, to).await?;
    let exports = &c.pads.exports;
    let diff = exports
        .run(move || diff_html::diff_atext(&start_text, &revisions, &pad_pool))
        .await
        .map_err(Failure::internal)?
        .map_err(Failure::internal)?;
    let colours = author_colours(&c.reader, &diff.pool).await?;
    let (diff, html) = exports
        .run(move || {
            let html = diff_html::diff_html(&diff, &colours);
            (diff, html)
        })
        .await
        .map_err(Failure::internal)?;
    let html = html.map_err(Failure::internal)?;
    Data::of(&json!({ "html": html, "authors": diff.authors }))
}

/// Etherpad's clamping of both revisions to the head, then `getValidRevisionRange`: a missing
/// `endRev` (or 0) means the head; a missing start or an end before the start is refused
/// with `PadDiff`'s message (Etherpad answers those with a 500, see README).
fn revision_range(start: Option<i64>, end: Option<i64>, head: i64) -> Result<(i64, i64), Failure> {
    let start = start.map(|s| s.min(head));
    let end = end.map(|e| e.min(head));
    let valid_end = match end {
        None | Some(0) => head,
        Some(e) => e,
    };
    match start {
        Some(s) if s <= valid_end => Ok((s, valid_end)),
        _ => Err(Failure::api(format!(
            "Invalid revision range. startRev: {} endRev: {}",
            js_text(start),
            js_text(end)
        ))),
    }
}

/// A revision as JavaScript writes it in a template literal.
fn js_text(rev: Option<i64>) -> String {
    rev.map_or_else(|| "undefined".to_owned(), |r| r.to_string())
}

/// The revisions `from ..= to` with their authors, read 100 at a time as Etherpad reads them.
async fn revisions(
    reader: &StoreReader,
    id: &str,
    from: i64,
    to: i64,
) -> Result<Vec<diff_html::Revision>, Failure> {
    let mut out = Vec::new();
    let mut first = from;
    while first <= to {
        let last = (first + 99).min(to);
        let wanted: Vec<String> = (first..=last).map(|r| keys::revision(id, r)).collect();
        let found = reader.values(&wanted).await.map_err(Failure::internal)?;
        for key in &wanted {
            let text = found
                .get(key)
                .ok_or_else(|| Failure::internal(format!("{key} is missing")))?;
            let rev: RevisionRecord =
                serde_json::from_str(text).map_err(|e| Failure::internal(format!("{key}: {e}")))?;
            out.push(diff_html::Revision {
                changeset: rev.changeset,
                author: rev.meta.author,
            });
        }
        first = last + 1;
    }
    Ok(out)
}

/// `getAllAuthorColors`: every author in the pool with its palette colour or its own colour
/// (`null` for an author without a record, as Etherpad writes it).
async fn author_colours(
    reader: &StoreReader,
    pool: &AttributePool,
) -> Result<HashMap<String, String>, Failure> {
    let authors: Vec<&str> = pool
        .iter()
        .filter(|(_, k, v)| *k == "author" && !v.is_empty())
        .map(|(_, _, v)| v)
        .collect();
    let wanted: Vec<String> = authors.iter().map(|a| keys::author(a)).collect();
    let found = reader.values(&wanted).await.map_err(Failure::internal)?;
    let mut colours = HashMap::new();
    for (author, key) in authors.iter().zip(&wanted) {
        let Some(text) = found.get(key) else { continue };
        let record: AuthorRecord =
            serde_json::from_str(text).map_err(|e| Failure::internal(format!("{key}: {e}")))?;
        colours.insert((*author).to_owned(), colour_text(&record.color_id));
    }
    Ok(colours)
}

/// `colorPalette[colorId] || colorId`.
fn colour_text(id: &ColorId) -> String {
    match id {
        ColorId::Palette(i) => id.css().map_or_else(|| i.to_string(), str::to_owned),
        ColorId::Hex(s) => s
            .parse::<usize>()
            .ok()
            .and_then(|i| PALETTE.get(i))
            .map_or_else(|| s.clone(), |c| (*c).to_owned()),
    }
}
