//! Applying a changeset: to a plain text, and to an attribution (the attribute runs of an
//! attributed text). Both are a single pass, linear in the text plus the changeset.

use crate::changeset::Changeset;
use crate::cursor::{CursorError, Utf16Cursor, count_newlines, text_length};
use crate::error::{Error, Result};
use crate::ops::{OpCode, parse_ops, serialize_ops};
use crate::pool::AttributePool;
use crate::zip::{slice_zip, zip_ops};

/// Applies `cs` to `text` (Etherpad's `applyToText`).
///
/// Fails if the text's length is not `cs.old_len`, if an operation's newline count does not
/// match the characters it covers, if an operation with newlines does not end with one (every
/// line-based part of Etherpad assumes it), or if the changeset is inconsistent. Runs in one pass:
/// O(text + changeset).
pub fn apply_to_text(cs: &Changeset, text: &str) -> Result<String> {
    let len = text_length(text);
    if len != cs.old_len {
        return Err(Error::OldLengthMismatch {
            expected: cs.old_len,
            actual: len,
        });
    }
    let mut out = String::with_capacity(text.len() + cs.char_bank.len());
    let mut bank = Utf16Cursor::new(&cs.char_bank);
    let mut old = Utf16Cursor::new(text);
    let mut consumed: usize = 0;
    let mut produced: usize = 0;
    for op in &cs.ops {
        let piece = match op.opcode {
            OpCode::Insert => bank.take(op.chars).map_err(|e| match e {
                CursorError::PastEnd => Error::CharBankTooShort(op.to_string()),
                CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
            })?,
            OpCode::Keep | OpCode::Remove => old.take(op.chars).map_err(|e| match e {
                CursorError::PastEnd => Error::PastOldEnd {
                    op: op.to_string(),
                    old_len: cs.old_len,
                },
                CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
            })?,
        };
        let actual = count_newlines(piece);
        if actual != op.lines {
            return Err(Error::NewlineCountMismatch {
                op: op.to_string(),
                claimed: op.lines,
                actual,
            });
        }
        if op.lines > 0 && !piece.ends_with('\n') {
            // Stricter than Etherpad's applyToText, as its line-based code assumes it.
            return Err(Error::MultilineNotEndingInNewline(op.to_string()));
        }
        if op.opcode != OpCode::Remove {
            out.push_str(piece);
            produced += op.chars;
        }
        if op.opcode != OpCode::Insert {
            consumed += op.chars;
        }
    }
    out.push_str(old.rest());
    produced += cs.old_len - consumed;
    if produced != cs.new_len {
        return Err(Error::LengthMismatch {
            claimed: cs.new_len,
            actual: produced,
        });
    }
    Ok(out)
}

/// Applies `cs` to an attribution string (the `attribs` of an attributed text), giving the
/// attribution of the new text (Etherpad's `applyToAttribution`).
///
/// Inserts bring their attributes; keeps with attributes change the runs they cover (an empty
/// value removes the key). The pool is only read. O(attribution + changeset).
pub fn apply_to_attribution(
    cs: &Changeset,
    attribution: &str,
    pool: &AttributePool,
) -> Result<String> {
    let att_ops = parse_ops(attribution)?;
    let ops = zip_ops(att_ops, cs.ops.iter().cloned(), |att, op| {
        slice_zip(att, op, pool)
    })?;
    Ok(serialize_ops(&ops))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool_of(pairs: &[&str]) -> AttributePool {
        let mut p = AttributePool::new();
        for kv in pairs {
            let (k, v) = kv.split_once(',').unwrap();
            p.put_attrib(k, v);
        }
        p
    }

    #[test]
    fn applies_text_vectors() {
        // Etherpad easysync-other spec, "testMakeSplice".
        let cs = Changeset::parse("Z:6>3|2=4=1+3$def").unwrap();
        assert_eq!(apply_to_text(&cs, "a\nb\nc\n").unwrap(), "a\nb\ncdef\n");
        // Etherpad easysync-mutations spec, "testMutateTextLines" #1 and #2 (joined lines).
        let cs = Changeset::parse("Z:4<1|1-2-1|1+1+1$\nc").unwrap();
        assert_eq!(apply_to_text(&cs, "a\nb\n").unwrap(), "\nc\n");
        let cs = Changeset::parse("Z:4>0|1-2-1|2+3$\nc\n").unwrap();
        assert_eq!(apply_to_text(&cs, "a\nb\n").unwrap(), "\nc\n\n");
    }

    #[test]
    fn refuses_wrong_length_and_wrong_newlines() {
        let cs = Changeset::parse("Z:4<1|1-2-1|1+1+1$\nc").unwrap();
        assert!(matches!(
            apply_to_text(&cs, "abc"),
            Err(Error::OldLengthMismatch { .. })
        ));
        assert!(matches!(
            apply_to_text(&cs, "ab\nc"),
            Err(Error::NewlineCountMismatch { .. })
        ));
        let cs = Changeset::parse("Z:4<2|1-2$").unwrap();
        assert!(matches!(
            apply_to_text(&cs, "\nabc"),
            Err(Error::MultilineNotEndingInNewline(_))
        ));
        assert_eq!(apply_to_text(&cs, "b\nc\n").unwrap(), "c\n");
    }

    #[test]
    fn applies_attribution_vectors() {
        // Etherpad easysync-other spec, "applyToAttribution" #1 and #2.
        let p = pool_of(&["bold,", "bold,true"]);
        let cs = Changeset::parse("Z:7>3-1*0=1*1=1=3+4$abcd").unwrap();
        assert_eq!(
            apply_to_attribution(&cs, "+1*1+1|1+5", &p).unwrap(),
            "+1*1+1|1+8"
        );
        let cs = Changeset::parse("Z:g<4*1|1=6*1=5-4$").unwrap();
        assert_eq!(
            apply_to_attribution(&cs, "|2+g", &p).unwrap(),
            "*1|1+6*1+5|1+1"
        );
    }
}
