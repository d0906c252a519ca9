//! Undo: the changeset that takes a text back to what it was before a changeset, restoring
//! removed text with its attributes and undoing attribute changes (Etherpad's `inverse`).

use std::collections::HashMap;

use crate::atext::AText;
use crate::attribute_map::AttributeMap;
use crate::builder::Builder;
use crate::changeset::Changeset;
use crate::cursor::{CursorError, Utf16Cursor, count_newlines, text_length};
use crate::error::{Error, Result};
use crate::ops::{Op, OpCode, parse_ops};
use crate::pool::AttributePool;

/// The changeset undoing `cs`, given the attributed text `before` that `cs` applies to:
/// `apply(inverse(cs, before), apply(cs, before)) == before`, text and attributes.
///
/// Etherpad's `inverse` takes the text as arrays of lines; this takes the attributed text and
/// produces the same changeset. Attribute pairs needed to undo attribute changes (such as
/// `bold=""` to remove a `bold` that was added) are added to `pool`. O(text + changeset).
pub fn inverse(cs: &Changeset, before: &AText, pool: &mut AttributePool) -> Result<Changeset> {
    let len = before.length();
    if len != cs.old_len {
        return Err(Error::OldLengthMismatch {
            expected: cs.old_len,
            actual: len,
        });
    }
    let mut old = OldText {
        runs: parse_ops(&before.attribs)?.into_iter(),
        run: None,
        text: Utf16Cursor::new(&before.text),
    };
    let mut builder = Builder::new(cs.new_len);
    for op in &cs.ops {
        match op.opcode {
            OpCode::Insert => {
                builder.remove(op.chars, op.lines);
            }
            OpCode::Keep if op.attribs.is_empty() => {
                let mut lines = 0;
                old.consume(op.chars, |piece, _| {
                    lines += count_newlines(piece);
                    Ok(())
                })?;
                check_lines(op, lines)?;
                builder.keep(op.chars, op.lines, "");
            }
            OpCode::Keep => {
                let change = AttributeMap::from_attribs(&op.attribs, pool)?;
                let mut undo_for: HashMap<String, String> = HashMap::new();
                let mut lines = 0;
                old.consume(op.chars, |piece, old_attribs| {
                    lines += count_newlines(piece);
                    let undo = match undo_for.get(old_attribs) {
                        Some(undo) => undo.clone(),
                        None => {
                            let undo = undo_attribs(&change, old_attribs, pool)?;
                            undo_for.insert(old_attribs.to_owned(), undo.clone());
                            undo
                        }
                    };
                    builder.keep(text_length(piece), count_newlines(piece), &undo);
                    Ok(())
                })?;
                check_lines(op, lines)?;
            }
            OpCode::Remove => {
                let mut lines = 0;
                old.consume(op.chars, |piece, old_attribs| {
                    lines += count_newlines(piece);
                    builder.insert(piece, old_attribs);
                    Ok(())
                })?;
                check_lines(op, lines)?;
            }
        }
    }
    builder.build()
}

/// The attribute changes that turn `old_attribs` changed by `change` back into `old_attribs`.
fn undo_attribs(
    change: &AttributeMap,
    old_attribs: &str,
    pool: &mut AttributePool,
) -> Result<String> {
    let old = AttributeMap::from_attribs(old_attribs, pool)?;
    let mut back = AttributeMap::new();
    for (key, value) in change.iter() {
        let old_value = old.get(key).unwrap_or("");
        if old_value != value {
            back.set(key, old_value);
        }
    }
    Ok(back.to_attribs(pool))
}

fn check_lines(op: &Op, actual: usize) -> Result<()> {
    if actual != op.lines {
        return Err(Error::NewlineCountMismatch {
            op: op.to_string(),
            claimed: op.lines,
            actual,
        });
    }
    Ok(())
}

/// The old text walked together with its attribute runs.
struct OldText<'a> {
    runs: std::vec::IntoIter<Op>,
    run: Option<Op>,
    text: Utf16Cursor<'a>,
}

impl OldText<'_> {
    /// Consumes `n` characters, calling `f` with pieces that lie within one attribute run and
    /// contain at most one newline, at their end.
    fn consume(&mut self, mut n: usize, mut f: impl FnMut(&str, &str) -> Result<()>) -> Result<()> {
        while n > 0 {
            if self.run.as_ref().is_none_or(|r| r.chars == 0) {
                self.run = self.runs.next();
            }
            let run = self.run.as_mut().ok_or(Error::AttributionLengthMismatch {
                attribs: 0,
                text: n,
            })?;
            let k = n.min(run.chars);
            let piece = self.text.take(k).map_err(|e| match e {
                CursorError::PastEnd => Error::AttributionLengthMismatch {
                    attribs: k,
                    text: 0,
                },
                CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
            })?;
            for line in piece.split_inclusive('\n') {
                f(line, &run.attribs)?;
            }
            run.chars -= k;
            n -= k;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atext::apply_to_atext;

    #[test]
    fn etherpad_inverse_vector() {
        // Etherpad easysync spec, "testInverse" #1: take "FFFFTTTTT" and apply "-FT--FFTT",
        // the inverse of which is "--F--TT--".
        let mut pool = AttributePool::new();
        pool.put_attrib("bold", "");
        pool.put_attrib("bold", "true");
        let cs = Changeset::parse("Z:9>0=1*0=1*1=1=2*0=2*1|1=2$").unwrap();
        let before = AText::from_parts("abcdefgh\n", "+4*1|1+5").unwrap();
        let inv = inverse(&cs, &before, &mut pool).unwrap();
        assert_eq!(inv.to_string(), "Z:9>0=2*0=1=2*1=2$");
    }

    #[test]
    fn restores_removed_text_with_its_attributes() {
        let mut pool = AttributePool::new();
        pool.put_attrib("bold", "true");
        let before = AText::from_parts("ab\ncd\n", "*0+1|1+2*0+2|1+1").unwrap();
        let cs = Changeset::parse("Z:6<1=1|1-2+1$X").unwrap();
        let after = apply_to_atext(&cs, &before, &pool).unwrap();
        assert_eq!(after.text, "aXcd\n");
        let inv = inverse(&cs, &before, &mut pool).unwrap();
        assert_eq!(apply_to_atext(&inv, &after, &pool).unwrap(), before);
    }

    #[test]
    fn refuses_a_text_of_the_wrong_length() {
        let mut pool = AttributePool::new();
        let cs = Changeset::parse("Z:2>1+1$x").unwrap();
        let before = AText::new("abc\n").unwrap();
        assert!(matches!(
            inverse(&cs, &before, &mut pool),
            Err(Error::OldLengthMismatch { .. })
        ));
    }
}
