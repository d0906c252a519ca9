//! `createDiffHTML`: the changes between two revisions as HTML, as Etherpad 1.9.7's `PadDiff`
//! makes them (2.x lost the step that marks deletions, so every answer of theirs is a 500).
//!
//! The text at the start revision loses its authors; every later changeset (except ones that
//! only clear authorship) gets its author put on its attribute changes and deletions, and all
//! are composed into one. Removed text comes back, struck through (`removed`), beside what
//! replaced it; attribute changes show the old run removed and the new one beside it. The
//! result is rendered by `getHTMLFromAtext` with author colours: a `<style>` block, then every
//! author's and the removed text's runs as `<span class=…>`.
//!
//! Etherpad adds `["author", ""]` and `["removed", "true"]` to the pad's own pool (kept in memory
//! and saved with the pad's next write). Reads here never write: they go into a copy of the pool,
//! numbered as Etherpad numbers them on a pad's first `createDiffHTML`.

use super::html::{Props, render};
use crate::changes::{AttributeMap, AttributePool, Changeset, Error, Op, OpCode, parse_ops};
use easysync::{Builder, apply_to_attribution, apply_to_text, decode_attribs, num_to_string};
use palimpsest_events::pads::AText;
use std::collections::HashMap;

/// One revision after the start: its changeset and its author (`""` for none).
pub struct Revision {
    /// The changeset as stored.
    pub changeset: String,
    /// `meta.author`.
    pub author: String,
}

/// The diff text, the pool it is numbered in, and the authors whose changesets went into it.
pub struct Diff {
    /// The start text with the changes applied and removed text put back, marked.
    pub atext: AText,
    /// The pad's pool with what the diff added.
    pub pool: AttributePool,
    /// Authors of the composed changesets, first appearance first.
    pub authors: Vec<String>,
}

/// Etherpad's CSS for removed text.
const REMOVED_CSS: &str = ".removed {text-decoration: line-through; \
-ms-filter:'progid:DXImageTransform.Microsoft.Alpha(Opacity=80)'; filter: alpha(opacity=80); \
opacity: 0.8; }\n";

/// Etherpad's `PadDiff._createDiffAtext`: `start` is the text at the start revision, `revisions`
/// the ones after it up to the end revision.
pub fn diff_atext(
    start: &AText,
    revisions: &[Revision],
    pad_pool: &AttributePool,
) -> Result<Diff, Error> {
    let mut pool = pad_pool.clone();
    let start = clear_authorship(start, &mut pool)?;
    let mut composed: Option<Changeset> = None;
    let mut authors: Vec<String> = Vec::new();
    for rev in revisions {
        let cs = Changeset::unpack(&rev.changeset)?;
        if is_clear_authorship(&cs, &pool)? {
            continue;
        }
        let cs = with_author(cs, &rev.author, &mut pool);
        if !authors.contains(&rev.author) {
            authors.push(rev.author.clone());
        }
        composed = Some(match composed {
            None => cs,
            Some(acc) => easysync::compose(&acc, &cs, &pool)?,
        });
    }
    let Some(all) = composed else {
        return Ok(Diff {
            atext: start,
            pool,
            authors,
        });
    };
    let deletions = deletion_changeset(&all, &start, &mut pool)?;
    let atext = apply(&deletions, &apply(&all, &start, &pool)?, &pool)?;
    Ok(Diff {
        atext,
        pool,
        authors,
    })
}

/// `applyToAText`.
fn apply(cs: &Changeset, atext: &AText, pool: &AttributePool) -> Result<AText, Error> {
    Ok(AText {
        text: apply_to_text(cs, &atext.text)?,
        attribs: apply_to_attribution(cs, &atext.attribs, pool)?,
    })
}

/// `_createClearStartAtext`: the text with every `author` attribute taken off.
fn clear_authorship(atext: &AText, pool: &mut AttributePool) -> Result<AText, Error> {
    let anonymous = pool.put_attrib("author", "");
    let mut builder = Builder::new(easysync::text_length(&atext.text));
    builder.keep_text(&atext.text, &format!("*{}", num_to_string(anonymous)));
    apply(&builder.build()?, atext, pool)
}

/// `_isClearAuthorship`: one keep over the whole text (or all but its final newline) whose only
/// attribute is `["author", ""]`.
fn is_clear_authorship(cs: &Changeset, pool: &AttributePool) -> Result<bool, Error> {
    if !cs.char_bank.is_empty() || cs.old_len != cs.new_len {
        return Ok(false);
    }
    let [op] = cs.ops.as_slice() else {
        return Ok(false);
    };
    if op.opcode != OpCode::Keep || (op.chars + 1 != cs.old_len && op.chars != cs.old_len) {
        return Ok(false);
    }
    let [only] = decode_attribs(&op.attribs)?[..] else {
        return Ok(false);
    };
    Ok(pool.get_attrib(only) == Some(("author", "")))
}

/// `_extendChangesetWithAuthor`: deletions carry the author and `removed`, attribute changes
/// the author; the operations are kept as they are.
fn with_author(mut cs: Changeset, author: &str, pool: &mut AttributePool) -> Changeset {
    let by = num_to_string(pool.put_attrib("author", author));
    let removed = num_to_string(pool.put_attrib("removed", "true"));
    for op in &mut cs.ops {
        match op.opcode {
            OpCode::Remove => op.attribs = format!("*{by}*{removed}"),
            OpCode::Keep if !op.attribs.is_empty() => op.attribs.push_str(&format!("*{by}")),
            _ => {}
        }
    }
    cs
}

/// The start text read front to back with its attribute runs.
struct OldText {
    text: Vec<u16>,
    at: usize,
    runs: std::vec::IntoIter<Op>,
    run: Option<Op>,
}

impl OldText {
    fn new(atext: &AText) -> Result<Self, Error> {
        Ok(OldText {
            text: atext.text.encode_utf16().collect(),
            at: 0,
            runs: parse_ops(&atext.attribs)?.into_iter(),
            run: None,
        })
    }

    /// The next `n` characters, without moving on (`nextText`).
    fn peek(&self, n: usize) -> Result<String, Error> {
        let end = (self.at + n).min(self.text.len());
        String::from_utf16(&self.text[self.at..end]).map_err(|_| Error::SplitsSurrogatePair)
    }

    /// Moves on `n` characters, calling `f` with each piece lying in one attribute run
    /// (`consumeAttribRuns`).
    fn consume(
        &mut self,
        mut n: usize,
        mut f: impl FnMut(String, &str) -> Result<(), Error>,
    ) -> Result<(), Error> {
        while n > 0 {
            if self.run.as_ref().is_none_or(|r| r.chars == 0) {
                self.run = self.runs.next();
            }
            let run = self.run.as_mut().ok_or(Error::AttributionLengthMismatch {
                attribs: 0,
                text: n,
            })?;
            let k = n.min(run.chars);
            let attribs = run.attribs.clone();
            run.chars -= k;
            let piece = self.peek(k)?;
            self.at += k;
            n -= k;
            f(piece, &attribs)?;
        }
        Ok(())
    }
}

/// `_createDeletionChangeset` ("80% like `inverse`"): applied after `cs`, it puts back what `cs`
/// removed and the runs whose attributes `cs` changed, marked `removed`, in front of their new
/// form.
fn deletion_changeset(
    cs: &Changeset,
    start: &AText,
    pool: &mut AttributePool,
) -> Result<Changeset, Error> {
    let mut old = OldText::new(start)?;
    let mut builder = Builder::new(cs.new_len);
    for op in &cs.ops {
        match op.opcode {
            OpCode::Insert => {
                builder.keep(op.chars, op.lines, "");
            }
            OpCode::Remove => {
                old.consume(op.chars, |piece, attribs| {
                    builder.insert(&piece, &format!("{attribs}{}", op.attribs));
                    Ok(())
                })?;
            }
            OpCode::Keep if op.attribs.is_empty() || old.peek(op.chars)? == "*" => {
                old.consume(op.chars, |_, _| Ok(()))?;
                builder.keep(op.chars, op.lines, "");
            }
            OpCode::Keep => changed_attributes(op, &mut old, &mut builder, pool)?,
        }
    }
    builder.build()
}

/// A keep that changes attributes: line by line, the old runs inserted with their old
/// attributes, the author `""` and `removed`, then the new text kept.
fn changed_attributes(
    op: &Op,
    old: &mut OldText,
    builder: &mut Builder,
    pool: &mut AttributePool,
) -> Result<(), Error> {
    let change = AttributeMap::from_attribs(&op.attribs, pool)?;
    let mut undo: HashMap<String, String> = HashMap::new();
    let text = old.peek(op.chars)?;
    for part in text.split_inclusive('\n') {
        let body = part.strip_suffix('\n').unwrap_or(part);
        let len = easysync::text_length(body);
        if len > 0 {
            old.consume(len, |piece, attribs| {
                let back = match undo.get(attribs) {
                    Some(back) => back.clone(),
                    None => {
                        let back = undo_attributes(&change, attribs, pool)?;
                        undo.insert(attribs.to_owned(), back.clone());
                        back
                    }
                };
                builder.insert(&piece, &back);
                Ok(())
            })?;
            builder.keep(len, 0, "");
        }
        if part.ends_with('\n') {
            builder.keep(1, 1, "");
            old.consume(1, |_, _| Ok(()))?;
        }
    }
    Ok(())
}

/// `undoBackToAttribs`: `removed`, author `""`, and for every key the change set, its old value
/// (`""` where there was none, which Etherpad writes as `undefined` and pools as `"key,"`).
fn undo_attributes(
    change: &AttributeMap,
    old_attribs: &str,
    pool: &mut AttributePool,
) -> Result<String, Error> {
    let old = AttributeMap::from_attribs(old_attribs, pool)?;
    let mut back = AttributeMap::new();
    back.set("author", "");
    back.set("removed", "true");
    for (key, value) in change.iter() {
        let before = old.get(key);
        if before != Some(value) {
            back.set(key, before.unwrap_or(""));
        }
    }
    Ok(back.to_attribs(pool))
}

/// Etherpad's `getHTMLFromAtext(pad, atext, authorColors)`: the `<style>` block for the pool's
/// authors and removed text, then the lines. `colours` holds each author's CSS colour.
pub fn diff_html(diff: &Diff, colours: &HashMap<String, String>) -> Result<String, Error> {
    let mut props = Props::tags(&diff.pool);
    let mut css = String::from("<style>\n");
    let mut last_removed = None;
    for (n, key, value) in diff.pool.iter() {
        if key == "author" && !value.is_empty() {
            let class = format!("author{}", value.replace('.', "_"));
            props.push_span(&class, n);
            let colour = colours.get(value).map_or("null", String::as_str);
            css.push_str(&format!(".{class} {{background-color: {colour}}}\n"));
        } else if key == "removed" {
            last_removed = Some(props.push_span("removed", n));
            css.push_str(REMOVED_CSS);
        }
    }
    css.push_str("</style>");
    // Etherpad then looks every prop up as `[prop, true]`: `removed,true` goes to the last one.
    if let (Some(prop), Some(n)) = (last_removed, diff.pool.lookup("removed", "true")) {
        props.map(n, prop);
    }
    render(&diff.atext, &diff.pool, &props, css)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diff(start: (&str, &str), revs: &[(&str, &str)], pool: &AttributePool) -> Diff {
        let start = AText {
            text: start.0.into(),
            attribs: start.1.into(),
        };
        let revs: Vec<Revision> = revs
            .iter()
            .map(|(cs, a)| Revision {
                changeset: (*cs).into(),
                author: (*a).into(),
            })
            .collect();
        diff_atext(&start, &revs, pool).expect("diff")
    }

    #[test]
    fn a_deletion_comes_back_marked_with_its_author() {
        let mut pool = AttributePool::new();
        pool.put_attrib("author", "a.x");
        let d = diff(("abc\n", "|1+4"), &[("Z:4<1=1-1$", "a.x")], &pool);
        assert_eq!(d.atext.text, "abc\n");
        let colours = HashMap::from([("a.x".to_owned(), "#fff".to_owned())]);
        let html = diff_html(&d, &colours).expect("html");
        assert!(
            html.ends_with(
                "</style>a<span class=\"authora_x\"><span class=\"removed\">b</span></span>c<br>"
            ),
            "{html}"
        );
        assert_eq!(d.authors, vec!["a.x".to_owned()]);
    }

    #[test]
    fn clearing_authorship_is_not_a_change() {
        let mut pool = AttributePool::new();
        pool.put_attrib("author", "");
        let d = diff(("ab\n", "|1+3"), &[("Z:3>0*0=2$", "a.y")], &pool);
        assert!(d.authors.is_empty());
        assert_eq!(d.atext.attribs, "|1+3");
    }
}
