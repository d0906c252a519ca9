//! The attributed text: a pad's current content, its text plus the attribute runs over it.
//! Serialises exactly as Etherpad stores it, `{"text": ..., "attribs": ...}`.

use serde::{Deserialize, Serialize};

use crate::apply::{apply_to_attribution, apply_to_text};
use crate::assembler::{MergingOpAssembler, SmartOpAssembler};
use crate::attribs::{decode_attribs, validate_attribs};
use crate::attribution::make_attribution;
use crate::base36::num_to_string;
use crate::changeset::Changeset;
use crate::cursor::{CursorError, Utf16Cursor, count_newlines, text_length};
use crate::error::{Error, Result};
use crate::ops::{Op, OpCode, parse_ops};
use crate::pool::AttributePool;

/// A text with attributes (Etherpad's `AText`). A pad's text always ends with a newline.
///
/// `attribs` is an attribution: insert operations (`+`) that cover the text exactly, each
/// carrying the attributes of its run, e.g. `*0+5|1+1` for `hello\n` whose first five
/// characters have attribute 0.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct AText {
    /// The text, ending with `\n`.
    pub text: String,
    /// The attribution of `text`.
    pub attribs: String,
}

impl AText {
    /// The attributed text of a plain text, without attributes (Etherpad's `makeAText`).
    /// The text must end with a newline.
    pub fn new(text: impl Into<String>) -> Result<Self> {
        let text = text.into();
        if !text.ends_with('\n') {
            return Err(Error::MissingFinalNewline);
        }
        let attribs = make_attribution(&text);
        Ok(Self { text, attribs })
    }

    /// An attributed text from its two parts, checked with [`AText::check`] (no pool).
    pub fn from_parts(text: impl Into<String>, attribs: impl Into<String>) -> Result<Self> {
        let atext = Self {
            text: text.into(),
            attribs: attribs.into(),
        };
        atext.check(None)?;
        Ok(atext)
    }

    /// Length of the text in UTF-16 code units (the unit of changeset lengths).
    pub fn length(&self) -> usize {
        text_length(&self.text)
    }

    /// Checks that the text ends with a newline and that the attribution is canonical, made of
    /// inserts only, covers the text exactly and agrees with it on newlines; with `pool`, that
    /// every attribute exists. Use it on attributed texts read from untrusted places.
    pub fn check(&self, pool: Option<&AttributePool>) -> Result<()> {
        if !self.text.ends_with('\n') {
            return Err(Error::MissingFinalNewline);
        }
        let ops = parse_ops(&self.attribs)?;
        let mut text = Utf16Cursor::new(&self.text);
        let mut covered: usize = 0;
        for op in &ops {
            if op.opcode != OpCode::Insert {
                return Err(Error::AttributionNotInsert(op.to_string()));
            }
            if op.chars == 0 {
                return Err(Error::EmptyOp(op.to_string()));
            }
            validate_attribs(&op.attribs)?;
            let piece = text.take(op.chars).map_err(|e| match e {
                CursorError::PastEnd => Error::AttributionLengthMismatch {
                    attribs: covered.saturating_add(op.chars),
                    text: self.length(),
                },
                CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
            })?;
            covered += op.chars;
            let actual = count_newlines(piece);
            if actual != op.lines {
                return Err(Error::NewlineCountMismatch {
                    op: op.to_string(),
                    claimed: op.lines,
                    actual,
                });
            }
            if op.lines > 0 && !piece.ends_with('\n') {
                return Err(Error::MultilineNotEndingInNewline(op.to_string()));
            }
            if let Some(pool) = pool {
                for n in decode_attribs(&op.attribs)? {
                    if pool.get_attrib(n).is_none() {
                        return Err(Error::UnknownAttribute(num_to_string(n)));
                    }
                }
            }
        }
        if !text.is_at_end() {
            return Err(Error::AttributionLengthMismatch {
                attribs: covered,
                text: self.length(),
            });
        }
        let mut assem = MergingOpAssembler::new();
        for op in ops.iter().cloned() {
            assem.append(op);
        }
        let canonical = assem.finish();
        if canonical != ops {
            return Err(Error::NotCanonical {
                expected: crate::ops::serialize_ops(&canonical),
            });
        }
        Ok(())
    }

    /// The text after `cs` (Etherpad's `applyToAText`). The pool is only read.
    pub fn apply(&self, cs: &Changeset, pool: &AttributePool) -> Result<AText> {
        apply_to_atext(cs, self, pool)
    }

    /// The attribution's operations without the final newline (Etherpad's `opsFromAText`):
    /// what must be inserted into a blank pad (`"\n"`) to recreate this text.
    pub fn ops_without_final_newline(&self) -> Result<Vec<Op>> {
        let mut ops = parse_ops(&self.attribs)?;
        let Some(mut last) = ops.pop() else {
            return Ok(ops);
        };
        if last.lines <= 1 {
            last.lines = 0;
            last.chars = last.chars.saturating_sub(1);
        } else {
            let body = self.text.strip_suffix('\n').unwrap_or(&self.text);
            let last_line = match body.rfind('\n') {
                Some(i) => body.get(i + 1..).unwrap_or(""),
                None => body,
            };
            let last_line_len = text_length(last_line);
            let mut head = last.clone();
            head.lines -= 1;
            head.chars = head.chars.checked_sub(last_line_len + 1).ok_or_else(|| {
                Error::AttributionLengthMismatch {
                    attribs: last.chars,
                    text: self.length(),
                }
            })?;
            ops.push(head);
            last.lines = 0;
            last.chars = last_line_len;
        }
        if last.chars > 0 {
            ops.push(last);
        }
        Ok(ops)
    }

    /// The changeset that turns a blank pad (`"\n"`) into this text with its attributes, as
    /// Etherpad's `copyPadWithoutHistory` builds it.
    pub fn changeset_from_blank(&self) -> Result<Changeset> {
        let mut assem = SmartOpAssembler::new();
        for op in self.ops_without_final_newline()? {
            assem.append(op);
        }
        assem.end_document();
        let bank = self.text.strip_suffix('\n').unwrap_or(&self.text);
        let cs = Changeset {
            old_len: 1,
            new_len: self.length(),
            ops: assem.finish(),
            char_bank: bank.to_owned(),
        };
        cs.check(None)?;
        Ok(cs)
    }
}

/// The attributed text of a plain text ending with a newline (Etherpad's `makeAText`).
pub fn make_atext(text: &str) -> Result<AText> {
    AText::new(text)
}

/// Applies `cs` to an attributed text: its text and its attribution (Etherpad's
/// `applyToAText`). O(text + attribution + changeset).
pub fn apply_to_atext(cs: &Changeset, atext: &AText, pool: &AttributePool) -> Result<AText> {
    Ok(AText {
        text: apply_to_text(cs, &atext.text)?,
        attribs: apply_to_attribution(cs, &atext.attribs, pool)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::serialize_ops;

    #[test]
    fn makes_atext_like_etherpad() {
        let a = AText::new("\n").unwrap();
        assert_eq!(a.attribs, "|1+1");
        let a = AText::new("hello\nworld\n").unwrap();
        assert_eq!(a.attribs, "|2+c");
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            r#"{"text":"hello\nworld\n","attribs":"|2+c"}"#
        );
        assert!(AText::new("no newline").is_err());
    }

    #[test]
    fn ops_from_atext_match_etherpad_vectors() {
        // Etherpad easysync-assembler spec, "testAppendATextToAssembler" #1..#8.
        for (text, attribs, expected) in [
            ("\n", "|1+1", ""),
            ("\n\n", "|2+2", "|1+1"),
            ("\n\n", "*x|2+2", "*x|1+1"),
            ("\n\n", "*x|1+1|1+1", "*x|1+1"),
            ("foo\n", "|1+4", "+3"),
            ("\nfoo\n", "|2+5", "|1+1+3"),
            ("\nfoo\n", "*x|2+5", "*x|1+1*x+3"),
            ("\n\n\nfoo\n", "|2+2*x|2+5", "|2+2*x|1+1*x+3"),
        ] {
            let atext = AText {
                text: text.into(),
                attribs: attribs.into(),
            };
            let mut assem = SmartOpAssembler::new();
            for op in atext.ops_without_final_newline().unwrap() {
                assem.append(op);
            }
            assert_eq!(serialize_ops(&assem.finish()), expected, "{attribs}");
        }
    }

    #[test]
    fn check_refuses_broken_attributions() {
        let ok = AText::from_parts("ab\n", "*0+2|1+1").unwrap();
        let mut pool = AttributePool::new();
        assert!(ok.check(Some(&pool)).is_err());
        pool.put_attrib("bold", "true");
        ok.check(Some(&pool)).unwrap();
        for (text, attribs) in [
            ("ab", "+2"),
            ("ab\n", "+3"),
            ("ab\n", "|1+4"),
            ("ab\n", "=3"),
            ("ab\n", "+1+1|1+1"),
            ("ab\n", "|1+1+2"),
            ("ab\n", "+2|1+2"),
        ] {
            assert!(
                AText::from_parts(text, attribs).is_err(),
                "{text:?} {attribs}"
            );
        }
    }

    #[test]
    fn changeset_from_blank_recreates_the_text() {
        let mut pool = AttributePool::new();
        pool.put_attrib("bold", "true");
        let atext = AText::from_parts("ab\ncd\n", "*0+1|1+2*0+2|1+1").unwrap();
        let cs = atext.changeset_from_blank().unwrap();
        let blank = AText::new("\n").unwrap();
        assert_eq!(blank.apply(&cs, &pool).unwrap(), atext);
    }
}
