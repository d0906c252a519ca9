//! `setHTML` (Etherpad's HTML import, [`crate::import`]) and `createDiffHTML`
//! ([`crate::export::diff_html`]).

use super::envelope::{Data, EnvelopeError};
use super::pad_calls::{existing_pad, pad_param};
use super::params::check_valid_rev;
use super::{ApiCall, now_ms};
use crate::changes::AttributePool;
use crate::export::diff_html;
use crate::pad::{self, pool_of};
use crate::read::StoreReader;
use crate::store::keys;
use crate::store::records::{AuthorRecord, ColorId, PALETTE, RevisionRecord};
use serde_json::{Value, json};
use std::collections::HashMap;

/// `setHTML(padID, html, authorId)`: the pad's text becomes what Etherpad imports from `html`.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn set_html(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let html = match call.params.get("html") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err(EnvelopeError::api("html is not a string")),
    };
    let id = pad_param(&call.params, "padID")?;
    let author = call.params.author_id("authorId");
    let now = now_ms();
    let (html, id, author) = (&html, &id, &author);
    call.pads
        .run(&call.request, |load| async move {
            let outcome = pad::command::set_html(&load, id, html, author, now).await?;
            Ok((outcome, Data::null()))
        })
        .await
}

/// `createDiffHTML(padID, startRev, endRev)` → `{html, authors}`: the changes between the two
/// revisions with author colours, as Etherpad 1.9.7 renders them ([`diff_html`]). The diff and
/// its rendering run in the export pool, off the request threads.
#[tracing::instrument(skip_all, fields(pad = ?call.params.string("padID")))]
pub async fn create_diff_html(call: ApiCall<'_>) -> Result<Data, EnvelopeError> {
    let start = call
        .params
        .get("startRev")
        .map(check_valid_rev)
        .transpose()?;
    let end = call.params.get("endRev").map(check_valid_rev).transpose()?;
    let id = pad_param(&call.params, "padID")?;
    let record = existing_pad(&call.reader, &id).await?;
    let (from, to) = revision_range(start, end, record.head)?;
    let pad_pool = pool_of(&record.pool.attributes());
    let start_text = call
        .reader
        .atext_at(&id, from, &pad_pool)
        .await
        .map_err(EnvelopeError::internal)?;
    let revisions = revisions(&call.reader, &id, from + 1, to).await?;
    let exports = &call.pads.exports;
    let diff = exports
        .run(move || diff_html::diff_atext(&start_text, &revisions, &pad_pool))
        .await
        .map_err(EnvelopeError::internal)?
        .map_err(EnvelopeError::internal)?;
    let colours = author_colours(&call.reader, &diff.pool).await?;
    let (diff, html) = exports
        .run(move || {
            let html = diff_html::diff_html(&diff, &colours);
            (diff, html)
        })
        .await
        .map_err(EnvelopeError::internal)?;
    let html = html.map_err(EnvelopeError::internal)?;
    Data::of(&json!({ "html": html, "authors": diff.authors }))
}

/// Etherpad's clamping of both revisions to the head, then `getValidRevisionRange`: a missing
/// `endRev` (or 0) means the head; a missing start or an end before the start is refused
/// with `PadDiff`'s message (Etherpad answers those with a 500, see README).
fn revision_range(
    start: Option<i64>,
    end: Option<i64>,
    head: i64,
) -> Result<(i64, i64), EnvelopeError> {
    let start = start.map(|s| s.min(head));
    let end = end.map(|e| e.min(head));
    let valid_end = match end {
        None | Some(0) => head,
        Some(e) => e,
    };
    match start {
        Some(s) if s <= valid_end => Ok((s, valid_end)),
        _ => Err(EnvelopeError::api(format!(
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
) -> Result<Vec<diff_html::Revision>, EnvelopeError> {
    let mut out = Vec::new();
    let mut first = from;
    while first <= to {
        let last = (first + 99).min(to);
        let wanted: Vec<String> = (first..=last).map(|r| keys::revision(id, r)).collect();
        let found = reader
            .values(&wanted)
            .await
            .map_err(EnvelopeError::internal)?;
        for key in &wanted {
            let text = found
                .get(key)
                .ok_or_else(|| EnvelopeError::internal_message(format!("{key} is missing")))?;
            let rev: RevisionRecord = serde_json::from_str(text)
                .map_err(|e| EnvelopeError::internal_message(format!("{key}: {e}")))?;
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
) -> Result<HashMap<String, String>, EnvelopeError> {
    let authors: Vec<&str> = pool
        .iter()
        .filter(|(_, k, v)| *k == "author" && !v.is_empty())
        .map(|(_, _, v)| v)
        .collect();
    let wanted: Vec<String> = authors.iter().map(|a| keys::author(a)).collect();
    let found = reader
        .values(&wanted)
        .await
        .map_err(EnvelopeError::internal)?;
    let mut colours = HashMap::new();
    for (author, key) in authors.iter().zip(&wanted) {
        let Some(text) = found.get(key) else { continue };
        let record: AuthorRecord = serde_json::from_str(text)
            .map_err(|e| EnvelopeError::internal_message(format!("{key}: {e}")))?;
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
