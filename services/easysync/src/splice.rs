//! Splices: the changeset that replaces a range of a text with new text (Etherpad's
//! `makeSplice`), the building block of every server-side edit.

use crate::assembler::SmartOpAssembler;
use crate::changeset::Changeset;
use crate::cursor::{CursorError, Utf16Cursor, count_newlines, text_length};
use crate::error::{Error, Result};
use crate::ops::{Op, OpCode};

/// The one or two operations that cover `text` (Etherpad's `opsFromText`): everything up to
/// and including the last newline as a multi-line operation, then the rest. Empty operations
/// are included and dropped by the assemblers.
pub fn ops_from_text(opcode: OpCode, text: &str, attribs: &str) -> Vec<Op> {
    match text.rfind('\n') {
        None => vec![Op::new(opcode, text_length(text), 0).with_attribs(attribs)],
        Some(i) => {
            let (head, tail) = text.split_at(i + 1);
            vec![
                Op::new(opcode, text_length(head), count_newlines(head)).with_attribs(attribs),
                Op::new(opcode, text_length(tail), 0).with_attribs(attribs),
            ]
        }
    }
}

/// The changeset that removes `ndel` characters of `orig` at `start` and inserts `ins` there
/// with the attribute string `attribs` (Etherpad's `makeSplice`).
///
/// Positions are UTF-16 code units; as in Etherpad, a `start` past the end is clamped to the
/// end and `ndel` to what is left. Fails only if a position splits a surrogate pair.
/// O(orig + ins).
pub fn make_splice(
    orig: &str,
    start: usize,
    ndel: usize,
    ins: &str,
    attribs: &str,
) -> Result<Changeset> {
    let len = text_length(orig);
    let start = start.min(len);
    let ndel = ndel.min(len - start);
    let mut cursor = Utf16Cursor::new(orig);
    let split = |e: CursorError| match e {
        CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
        CursorError::PastEnd => Error::SpliceOutOfRange { start, ndel, len },
    };
    let kept = cursor.take(start).map_err(split)?;
    let deleted = cursor.take(ndel).map_err(split)?;
    let mut assem = SmartOpAssembler::new();
    for op in ops_from_text(OpCode::Keep, kept, "")
        .into_iter()
        .chain(ops_from_text(OpCode::Remove, deleted, ""))
        .chain(ops_from_text(OpCode::Insert, ins, attribs))
    {
        assem.append(op);
    }
    assem.end_document();
    Ok(Changeset {
        old_len: len,
        new_len: len - ndel + text_length(ins),
        ops: assem.finish(),
        char_bank: ins.to_owned(),
    })
}

/// The changeset inserting `ins` at `pos` of `orig` (a splice that deletes nothing).
pub fn insert_at(orig: &str, pos: usize, ins: &str, attribs: &str) -> Result<Changeset> {
    make_splice(orig, pos, 0, ins, attribs)
}

/// The changeset deleting `ndel` characters of `orig` at `start`.
pub fn delete_range(orig: &str, start: usize, ndel: usize) -> Result<Changeset> {
    make_splice(orig, start, ndel, "", "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::apply_to_text;

    #[test]
    fn make_splice_etherpad_vector() {
        // Etherpad easysync-other spec, "testMakeSplice".
        let t = "a\nb\nc\n";
        let cs = make_splice(t, 5, 0, "def", "").unwrap();
        assert_eq!(cs.to_string(), "Z:6>3|2=4=1+3$def");
        assert_eq!(apply_to_text(&cs, t).unwrap(), "a\nb\ncdef\n");
    }

    #[test]
    fn splices_replace_and_clamp() {
        let cs = make_splice("hello\n", 1, 3, "ipp", "*0").unwrap();
        assert_eq!(cs.to_string(), "Z:6>0=1-3*0+3$ipp");
        assert_eq!(apply_to_text(&cs, "hello\n").unwrap(), "hippo\n");
        let cs = make_splice("ab\n", 10, 5, "x", "").unwrap();
        assert_eq!(cs.to_string(), "Z:3>1|1=3+1$x");
        let cs = make_splice("\n", 0, 1, "hello\n", "").unwrap();
        assert_eq!(cs.to_string(), "Z:1>5|1-1|1+6$hello\n");
        cs.check(None).unwrap();
    }

    #[test]
    fn helpers_insert_and_delete() {
        let cs = insert_at("ac\n", 1, "b", "").unwrap();
        assert_eq!(apply_to_text(&cs, "ac\n").unwrap(), "abc\n");
        let cs = delete_range("abc\n", 1, 1).unwrap();
        assert_eq!(cs.to_string(), "Z:4<1=1-1$");
        assert_eq!(apply_to_text(&cs, "abc\n").unwrap(), "ac\n");
    }

    #[test]
    fn refuses_to_split_a_surrogate_pair() {
        assert_eq!(
            make_splice("😀\n", 1, 0, "x", ""),
            Err(Error::SplitsSurrogatePair)
        );
        let cs = make_splice("😀\n", 2, 0, "x", "").unwrap();
        assert_eq!(cs.to_string(), "Z:3>1=2+1$x");
    }
}
