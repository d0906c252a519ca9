//! The `setHTML` decider: Etherpad's `API.setHTML` and `ImportHtml.setPadHTML`.

use super::collector::{Collected, collect};
use super::tree::{Element, parse_body};
use super::whitespace::minify_body;
use crate::author::Authors;
use crate::changes::{self, AttributePool};
use crate::error::DomainError;
use crate::outcome::Outcome;
use crate::pad::decide::creation::clean_text;
use crate::pad::decide::revision::append_revision;
use crate::pad::{NewRevision, Pad, attributes_of};
use easysync::Builder;

/// The lines `html` imports as, with the attributes they use put into `pool`: Etherpad's
/// `cleanText`, the parse, the white space minification, the appended `<p>`, the collector.
pub fn import_lines(html: &str, pool: &mut AttributePool) -> Result<Collected, DomainError> {
    let mut body = parse_body(&clean_text(html));
    minify_body(&mut body);
    body.children
        .push(super::tree::Node::Element(Element::empty("p")));
    collect(&body, pool).map_err(|e| {
        tracing::debug!(error = %e, "setHTML input Etherpad would fail on");
        DomainError::Invalid("HTML is malformed".into())
    })
}

/// The changeset `setPadHTML` appends to a pad whose text is `"\n"`: every line with its runs,
/// joined by newlines, inserted before the pad's own newline.
pub fn import_changeset(collected: &Collected) -> Result<String, DomainError> {
    let bad = |e: easysync::Error| DomainError::BadChangeset(e.to_string());
    let mut builder = Builder::new(1);
    for (i, (line, runs)) in collected.lines.iter().zip(&collected.runs).enumerate() {
        if i > 0 {
            builder.insert("\n", "");
        }
        let mut rest = line.as_str();
        for (attribs, units) in runs {
            let (piece, tail) = changes::split_at_units(rest, *units).map_err(bad)?;
            builder.insert(piece, attribs);
            rest = tail;
        }
    }
    Ok(builder.build().map_err(bad)?.to_string())
}

/// `setHTML(padID, html, authorId)`: as Etherpad, the pad is first set to `"\n"` (a revision
/// unless it already is), then the imported lines are appended as a second revision. The
/// attributes the import uses join the pool with the first revision made, before its author's
/// attribute, so the pool numbers are Etherpad's.
pub fn set_html(
    pad: &Pad,
    html: &str,
    author: &str,
    now: i64,
    mut authors: Authors,
) -> Result<Outcome, DomainError> {
    if !pad.exists {
        return Err(DomainError::PadMissing);
    }
    let mut pool = pad.pool.clone();
    let collected = import_lines(html, &mut pool)?;
    let new_attributes = attributes_of(&pool).split_off(pad.pool.len());
    let mut outcome = Outcome::none();
    let mut scratch = pad.clone();
    let len = changes::text_length(&scratch.atext.text);
    let blank = changes::make_splice(&scratch.atext.text, 0, len, "\n")
        .map_err(|e| DomainError::BadChangeset(e.to_string()))?;
    let first = NewRevision {
        changeset: blank,
        new_attributes: new_attributes.clone(),
        author: author.to_owned(),
        now,
    };
    let (_, made) = append_revision(&mut scratch, first, &mut authors, &mut outcome)?;
    let second = NewRevision {
        changeset: import_changeset(&collected)?,
        new_attributes: if made { Vec::new() } else { new_attributes },
        author: author.to_owned(),
        now,
    };
    append_revision(&mut scratch, second, &mut authors, &mut outcome)?;
    Ok(outcome)
}

#[cfg(test)]
mod tests;
