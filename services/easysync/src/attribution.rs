//! Attributions (strings of insert operations describing attribute runs): making one for plain
//! text, splitting one per line and joining lines back, and taking a slice of one line.

use crate::assembler::{MergingOpAssembler, SmartOpAssembler};
use crate::cursor::{CursorError, Utf16Cursor};
use crate::error::{Error, Result};
use crate::ops::{Op, OpCode, parse_ops, serialize_ops};
use crate::pool::AttributePool;
use crate::splice::ops_from_text;
use crate::zip::slice_zip;

/// The attribution of `text` without attributes (Etherpad's `makeAttribution`), e.g. `|2+c`.
pub fn make_attribution(text: &str) -> String {
    let mut assem = SmartOpAssembler::new();
    for op in ops_from_text(OpCode::Insert, text, "") {
        assem.append(op);
    }
    serialize_ops(&assem.finish())
}

/// Splits an attribution into one attribution per line of `text` (Etherpad's
/// `splitAttributionLines`). Every line's attribution ends with its newline.
pub fn split_attribution_lines(attribution: &str, text: &str) -> Result<Vec<String>> {
    let mut assem = MergingOpAssembler::new();
    let mut lines = Vec::new();
    let mut cursor = Utf16Cursor::new(text);
    let cursor_err = |e: CursorError| match e {
        CursorError::PastEnd => Error::AttributionLengthMismatch {
            attribs: 0,
            text: crate::text_length(text),
        },
        CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
    };
    let mut emit = |op: Op, assem: &mut MergingOpAssembler, cursor: &mut Utf16Cursor<'_>| {
        cursor.skip(op.chars).map_err(cursor_err)?;
        let ends_line = op.lines > 0;
        assem.append(op);
        if ends_line {
            lines.push(serialize_ops(&assem.take()));
        }
        Ok::<(), Error>(())
    };
    for op in parse_ops(attribution)? {
        let mut chars = op.chars;
        let mut lines_left = op.lines;
        while lines_left > 1 {
            let line_len =
                cursor
                    .units_through_next_newline()
                    .ok_or_else(|| Error::NewlineCountMismatch {
                        op: op.to_string(),
                        claimed: op.lines,
                        actual: op.lines - lines_left,
                    })?;
            let piece = Op {
                chars: line_len,
                lines: 1,
                ..op.clone()
            };
            chars = chars
                .checked_sub(line_len)
                .ok_or_else(|| Error::NewlineCountMismatch {
                    op: op.to_string(),
                    claimed: op.lines,
                    actual: op.lines - lines_left,
                })?;
            lines_left -= 1;
            emit(piece, &mut assem, &mut cursor)?;
        }
        emit(
            Op {
                chars,
                lines: lines_left,
                ..op
            },
            &mut assem,
            &mut cursor,
        )?;
    }
    Ok(lines)
}

/// Joins per-line attributions into one (Etherpad's `joinAttributionLines`).
pub fn join_attribution_lines<S: AsRef<str>>(lines: &[S]) -> Result<String> {
    let mut assem = MergingOpAssembler::new();
    for line in lines {
        for op in parse_ops(line.as_ref())? {
            assem.append(op);
        }
    }
    Ok(serialize_ops(&assem.finish()))
}

/// The attribution of characters `start..end` of a single-line attribution (to its end when
/// `end` is `None`), like `substring` (Etherpad's `subattribution`).
pub fn subattribution(attribution: &str, start: usize, end: Option<usize>) -> Result<String> {
    let no_pool = AttributePool::new();
    let mut att_ops = parse_ops(attribution)?.into_iter().filter(|o| o.chars > 0);
    let mut assem = SmartOpAssembler::new();
    let mut att_op: Option<Op> = None;

    let run = |cs_op: &mut Option<Op>,
               att_op: &mut Option<Op>,
               att_ops: &mut dyn Iterator<Item = Op>,
               assem: &mut SmartOpAssembler|
     -> Result<()> {
        if cs_op.as_ref().is_none_or(|o| o.chars == 0) {
            return Ok(());
        }
        while cs_op.is_some() {
            if att_op.is_none() {
                *att_op = att_ops.next();
                if att_op.is_none() {
                    break;
                }
            }
            if let (Some(cs), Some(att)) = (cs_op.as_mut(), att_op.as_ref())
                && cs.chars >= att.chars
                && att.lines > 0
                && cs.lines == 0
            {
                // Let the cut cover the line's newline (Etherpad's workaround for the
                // line-count agreement the slicer insists on).
                cs.lines += 1;
            }
            if let Some(out) = slice_zip(att_op, cs_op, &no_pool)? {
                assem.append(out);
            }
        }
        Ok(())
    };

    let mut cs_op = Some(Op::new(OpCode::Remove, start, 0));
    run(&mut cs_op, &mut att_op, &mut att_ops, &mut assem)?;
    match end {
        None => {
            if let Some(op) = att_op {
                assem.append(op);
            }
            for op in att_ops {
                assem.append(op);
            }
        }
        Some(end) => {
            let len = end.checked_sub(start).ok_or(Error::SpliceOutOfRange {
                start,
                ndel: 0,
                len: end,
            })?;
            let mut cs_op = Some(Op::new(OpCode::Keep, len, 0));
            run(&mut cs_op, &mut att_op, &mut att_ops, &mut assem)?;
        }
    }
    Ok(serialize_ops(&assem.finish()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subattribution_matches_etherpad_vectors() {
        // Etherpad easysync spec, "testSubattribution" #1..#42.
        let cases: &[(&str, usize, Option<usize>, &str)] = &[
            ("+1", 0, Some(0), ""),
            ("+1", 0, Some(1), "+1"),
            ("+1", 0, None, "+1"),
            ("|1+1", 0, Some(0), ""),
            ("|1+1", 0, Some(1), "|1+1"),
            ("|1+1", 0, None, "|1+1"),
            ("*0+1", 0, Some(0), ""),
            ("*0+1", 0, Some(1), "*0+1"),
            ("*0+1", 0, None, "*0+1"),
            ("*0|1+1", 0, Some(0), ""),
            ("*0|1+1", 0, Some(1), "*0|1+1"),
            ("*0|1+1", 0, None, "*0|1+1"),
            ("*0+2+1*1+3", 0, Some(1), "*0+1"),
            ("*0+2+1*1+3", 0, Some(2), "*0+2"),
            ("*0+2+1*1+3", 0, Some(3), "*0+2+1"),
            ("*0+2+1*1+3", 0, Some(4), "*0+2+1*1+1"),
            ("*0+2+1*1+3", 0, Some(5), "*0+2+1*1+2"),
            ("*0+2+1*1+3", 0, Some(6), "*0+2+1*1+3"),
            ("*0+2+1*1+3", 0, Some(7), "*0+2+1*1+3"),
            ("*0+2+1*1+3", 0, None, "*0+2+1*1+3"),
            ("*0+2+1*1+3", 1, None, "*0+1+1*1+3"),
            ("*0+2+1*1+3", 2, None, "+1*1+3"),
            ("*0+2+1*1+3", 3, None, "*1+3"),
            ("*0+2+1*1+3", 4, None, "*1+2"),
            ("*0+2+1*1+3", 5, None, "*1+1"),
            ("*0+2+1*1+3", 6, None, ""),
            ("*0+2+1*1|1+3", 0, Some(1), "*0+1"),
            ("*0+2+1*1|1+3", 0, Some(2), "*0+2"),
            ("*0+2+1*1|1+3", 0, Some(3), "*0+2+1"),
            ("*0+2+1*1|1+3", 0, Some(4), "*0+2+1*1+1"),
            ("*0+2+1*1|1+3", 0, Some(5), "*0+2+1*1+2"),
            ("*0+2+1*1|1+3", 0, Some(6), "*0+2+1*1|1+3"),
            ("*0+2+1*1|1+3", 0, Some(7), "*0+2+1*1|1+3"),
            ("*0+2+1*1|1+3", 0, None, "*0+2+1*1|1+3"),
            ("*0+2+1*1|1+3", 1, None, "*0+1+1*1|1+3"),
            ("*0+2+1*1|1+3", 2, None, "+1*1|1+3"),
            ("*0+2+1*1|1+3", 3, None, "*1|1+3"),
            ("*0+2+1*1|1+3", 4, None, "*1|1+2"),
            ("*0+2+1*1|1+3", 5, None, "*1|1+1"),
            ("*0+2+1*1|1+3", 1, Some(5), "*0+1+1*1+2"),
            ("*0+2+1*1|1+3", 2, Some(6), "+1*1|1+3"),
            ("*0+2+1*1+3", 2, Some(6), "+1*1+3"),
        ];
        assert_eq!(cases.len(), 42);
        for &(astr, start, end, expected) in cases {
            assert_eq!(
                subattribution(astr, start, end).unwrap(),
                expected,
                "subattribution({astr:?}, {start}, {end:?})"
            );
        }
    }

    #[test]
    fn split_and_join_lines() {
        let text = "ab\n\ncd\n";
        let joined = "*0+1|2+3*0+2|1+1";
        let lines = split_attribution_lines(joined, text).unwrap();
        assert_eq!(lines, vec!["*0+1|1+2", "|1+1", "*0+2|1+1"]);
        assert_eq!(join_attribution_lines(&lines).unwrap(), joined);
        assert_eq!(make_attribution(text), "|3+7");
        assert_eq!(
            split_attribution_lines("|3+7", text).unwrap(),
            vec!["|1+3", "|1+1", "|1+3"]
        );
    }

    #[test]
    fn split_refuses_attribution_that_disagrees_with_text() {
        assert!(split_attribution_lines("|3+7", "ab\ncd\n\n").is_ok());
        assert!(split_attribution_lines("|3+7", "abcdef\n").is_err());
        assert!(split_attribution_lines("|1+9", "ab\n").is_err());
    }
}
