//! Moving a character range (a selection, a caret, a comment anchor) through a changeset
//! (Etherpad's `characterRangeFollow` and `toSplices`).

use crate::changeset::Changeset;
use crate::cursor::{CursorError, Utf16Cursor, text_length};
use crate::error::{Error, Result};
use crate::ops::OpCode;

/// A changeset seen as replacements of old-text ranges: `(start, end, new_text)` replaces
/// `start..end` of the old text with `new_text`. Runs of removes and inserts between keeps
/// make one splice.
pub fn to_splices(cs: &Changeset) -> Result<Vec<(usize, usize, String)>> {
    let mut splices: Vec<(usize, usize, String)> = Vec::new();
    let mut old_pos: usize = 0;
    let mut bank = Utf16Cursor::new(&cs.char_bank);
    let mut in_splice = false;
    for op in &cs.ops {
        if op.opcode == OpCode::Keep {
            old_pos = old_pos.saturating_add(op.chars);
            in_splice = false;
            continue;
        }
        if !in_splice {
            splices.push((old_pos, old_pos, String::new()));
            in_splice = true;
        }
        if let Some(splice) = splices.last_mut() {
            if op.opcode == OpCode::Remove {
                old_pos = old_pos.saturating_add(op.chars);
                splice.1 = splice.1.saturating_add(op.chars);
            } else {
                let text = bank.take(op.chars).map_err(|e| match e {
                    CursorError::PastEnd => Error::CharBankTooShort(op.to_string()),
                    CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
                })?;
                splice.2.push_str(text);
            }
        }
    }
    Ok(splices)
}

/// Where the range `start..end` of the old text is after `cs`. A range wholly replaced
/// collapses to the start of the replacement if `insertions_after`, else to its end.
pub fn character_range_follow(
    cs: &Changeset,
    start: usize,
    end: usize,
    insertions_after: bool,
) -> Result<(usize, usize)> {
    let to_i = |n: usize| i128::try_from(n).unwrap_or(i128::MAX);
    let mut new_start = to_i(start);
    let mut new_end = to_i(end);
    let mut length_change_so_far: i128 = 0;
    for (s, e, text) in to_splices(cs)? {
        let splice_start = to_i(s) + length_change_so_far;
        let splice_end = to_i(e) + length_change_so_far;
        let new_text_len = to_i(text_length(&text));
        let this_length_change = new_text_len - (splice_end - splice_start);
        if splice_start <= new_start && splice_end >= new_end {
            // The splice replaces the whole range (or inserts at a collapsed range).
            let at = if insertions_after {
                splice_start
            } else {
                splice_start + new_text_len
            };
            new_start = at;
            new_end = at;
        } else if splice_end <= new_start {
            // Before the range.
            new_start += this_length_change;
            new_end += this_length_change;
        } else if splice_start >= new_end {
            // After the range: nothing moves.
        } else if splice_start >= new_start && splice_end <= new_end {
            // Inside the range.
            new_end += this_length_change;
        } else if splice_end < new_end {
            // Overlaps the start of the range.
            new_start = splice_start + new_text_len;
            new_end += this_length_change;
        } else {
            // Overlaps the end of the range.
            new_end = splice_start;
        }
        length_change_so_far += this_length_change;
    }
    let back = |n: i128| {
        usize::try_from(n).map_err(|_| Error::SpliceOutOfRange {
            start,
            ndel: end.saturating_sub(start),
            len: cs.old_len,
        })
    };
    Ok((back(new_start)?, back(new_end)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_splices_etherpad_vector() {
        let cs = Changeset::parse("Z:z>9*0=1=4-3+9=1|1-4-4+1*0+a$123456789abcdefghijk").unwrap();
        assert_eq!(
            to_splices(&cs).unwrap(),
            vec![
                (5, 8, "123456789".to_owned()),
                (9, 17, "abcdefghijk".to_owned())
            ]
        );
    }

    #[test]
    fn character_range_follow_etherpad_vectors() {
        // Etherpad easysync-follow spec, "chracterRangeFollow" #1..#11.
        for (cs, (s, e), after, expected) in [
            (
                "Z:z>9*0=1=4-3+9=1|1-4-4+1*0+a$123456789abcdefghijk",
                (7, 10),
                false,
                (14, 15),
            ),
            ("Z:bc<6|x=b4|2-6$", (400, 407), false, (400, 401)),
            ("Z:4>0-3+3$abc", (0, 3), false, (3, 3)),
            ("Z:4>0-3+3$abc", (0, 3), true, (0, 0)),
            ("Z:5>1+1=1-3+3$abcd", (1, 4), false, (5, 5)),
            ("Z:5>1+1=1-3+3$abcd", (1, 4), true, (2, 2)),
            ("Z:5>1+1=1-3+3$abcd", (0, 6), false, (1, 7)),
            ("Z:5>1+1=1-3+3$abcd", (0, 3), false, (1, 2)),
            ("Z:5>1+1=1-3+3$abcd", (2, 5), false, (5, 6)),
            ("Z:2>1+1$a", (0, 0), false, (1, 1)),
            ("Z:2>1+1$a", (0, 0), true, (0, 0)),
        ] {
            let cs = Changeset::parse(cs).unwrap();
            assert_eq!(
                character_range_follow(&cs, s, e, after).unwrap(),
                expected,
                "{cs}"
            );
        }
    }
}
