//! Etherpad's exports of a pad's attributed text: plain text as `getText` gives it
//! (`getTXTFromAtext`), HTML as `getHTML` gives it (`getHTMLFromAtext`), without plugins, and the
//! changes between two revisions as `createDiffHTML` gives them (`PadDiff`); and the [`pool`] they
//! run in, off the request threads.

pub mod diff_html;
pub mod html;
mod html_text;
pub mod pool;
pub mod text;
mod urls;

use crate::changes::{AttributePool, Error};
use easysync::{Line, analyze_line, split_attribution_lines};
use palimpsest_events::pads::AText;

/// The lines of a pad (its text without the final newline, split at newlines) with their
/// attributions.
fn lines(atext: &AText) -> Result<Vec<(String, String)>, Error> {
    let body = atext.text.strip_suffix('\n').unwrap_or(&atext.text);
    let alines = split_attribution_lines(&atext.attribs, &atext.text)?;
    Ok(body
        .split('\n')
        .enumerate()
        .map(|(i, t)| (t.to_owned(), alines.get(i).cloned().unwrap_or_default()))
        .collect())
}

/// Etherpad's `_analyzeLine` of one line.
fn analyze(text: &str, aline: &str, pool: &AttributePool) -> Result<Line, Error> {
    analyze_line(text, aline, pool)
}
