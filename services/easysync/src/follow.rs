//! Operational transformation: rebasing one changeset over a concurrent one (Etherpad's
//! `follow`). The server rebases every client changeset over the revisions it missed.

use crate::attribs::decode_attribs;
use crate::base36::num_to_string;
use crate::changeset::Changeset;
use crate::cursor::{CursorError, Utf16Cursor};
use crate::error::{Error, Result};
use crate::ops::{Op, OpCode};
use crate::pool::AttributePool;
use crate::zip::zip_ops;

/// Rebases `cs2` over `cs1`: both apply to the same text; the result applies after `cs1` and
/// does what `cs2` meant. `compose(cs1, follow(cs1, cs2))` and `compose(cs2, follow(cs2, cs1))`
/// make the same text when exactly one of the two calls has `reverse_insert_order` set.
///
/// Tie-break for two inserts at the same place (Etherpad's): an insert carrying the attribute
/// `insertorder=first` goes first; otherwise an insert that starts with a newline goes after
/// one that does not (so lines are not broken up); otherwise `cs1`'s insert goes first unless
/// `reverse_insert_order`. Attribute changes to the same character merge, the lexically
/// smaller value winning per key. The pool is only read. O(cs1 + cs2).
pub fn follow(
    cs1: &Changeset,
    cs2: &Changeset,
    reverse_insert_order: bool,
    pool: &AttributePool,
) -> Result<Changeset> {
    if cs1.old_len != cs2.old_len {
        return Err(Error::FollowMismatch(cs1.old_len, cs2.old_len));
    }
    let mut chars1 = Utf16Cursor::new(&cs1.char_bank);
    let mut chars2 = Utf16Cursor::new(&cs2.char_bank);
    let old_len = cs1.new_len;
    let mut old_pos: usize = 0;
    let mut new_len: usize = 0;
    let insert_first = pool.lookup("insertorder", "first");
    let has_insert_first = |attribs: &str| -> Result<bool> {
        Ok(match insert_first {
            Some(n) => decode_attribs(attribs)?.contains(&n),
            None => false,
        })
    };
    let bank_err = |e: CursorError| match e {
        CursorError::PastEnd => Error::CharBankTooShort("followed insert".to_owned()),
        CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
    };
    let mismatch = |a: &Op, b: &Op| Error::LineCountMismatch(a.to_string(), b.to_string());

    let ops = zip_ops(
        cs1.ops.iter().cloned(),
        cs2.ops.iter().cloned(),
        |slot1, slot2| {
            let is_insert = |s: &Option<Op>| s.as_ref().is_some_and(|o| o.opcode == OpCode::Insert);
            let mut out: Option<Op> = None;
            if is_insert(slot1) || is_insert(slot2) {
                let first_is_1 = match (slot1.as_ref(), slot2.as_ref()) {
                    (Some(op1), Some(op2))
                        if op1.opcode == OpCode::Insert && op2.opcode == OpCode::Insert =>
                    {
                        let first1 = has_insert_first(&op1.attribs)?;
                        let first2 = has_insert_first(&op2.attribs)?;
                        let nl1 = chars1.next_is_newline();
                        let nl2 = chars2.next_is_newline();
                        if first1 != first2 {
                            first1
                        } else if nl1 != nl2 {
                            // Insert the text that does not start with a newline first.
                            nl2
                        } else {
                            !reverse_insert_order
                        }
                    }
                    _ => !is_insert(slot2),
                };
                if first_is_1 {
                    if let Some(op1) = slot1.take() {
                        chars1.skip(op1.chars).map_err(bank_err)?;
                        out = Some(Op::new(OpCode::Keep, op1.chars, op1.lines));
                    }
                } else if let Some(op2) = slot2.take() {
                    chars2.skip(op2.chars).map_err(bank_err)?;
                    out = Some(op2);
                }
            } else if slot1.as_ref().is_some_and(|o| o.opcode == OpCode::Remove) {
                // cs1 removed this text: whatever cs2 did to it is moot.
                match (slot1.as_mut(), slot2.as_mut()) {
                    (Some(_), None) => *slot1 = None,
                    (Some(op1), Some(op2)) => {
                        if op1.chars <= op2.chars {
                            op2.chars -= op1.chars;
                            op2.lines = op2
                                .lines
                                .checked_sub(op1.lines)
                                .ok_or_else(|| mismatch(op1, op2))?;
                            *slot1 = None;
                            if op2.chars == 0 {
                                *slot2 = None;
                            }
                        } else {
                            op1.chars -= op2.chars;
                            op1.lines = op1
                                .lines
                                .checked_sub(op2.lines)
                                .ok_or_else(|| mismatch(op1, op2))?;
                            *slot2 = None;
                        }
                    }
                    (None, _) => {}
                }
            } else if slot2.as_ref().is_some_and(|o| o.opcode == OpCode::Remove) {
                // cs2 removes text that cs1 kept: remove it.
                let mut removal = slot2.clone();
                match (slot1.as_mut(), slot2.as_mut()) {
                    (None, Some(_)) => *slot2 = None,
                    (Some(op1), Some(op2)) => {
                        if op2.chars <= op1.chars {
                            op1.chars -= op2.chars;
                            op1.lines = op1
                                .lines
                                .checked_sub(op2.lines)
                                .ok_or_else(|| mismatch(op1, op2))?;
                            *slot2 = None;
                            if op1.chars == 0 {
                                *slot1 = None;
                            }
                        } else {
                            if let Some(r) = removal.as_mut() {
                                r.chars = op1.chars;
                                r.lines = op1.lines;
                            }
                            op2.chars -= op1.chars;
                            op2.lines = op2
                                .lines
                                .checked_sub(op1.lines)
                                .ok_or_else(|| mismatch(op1, op2))?;
                            *slot1 = None;
                        }
                    }
                    (_, None) => {}
                }
                out = removal;
            } else {
                match (slot1.as_mut(), slot2.as_mut()) {
                    // Past the end of cs1: cs2's keeps (with their attribute changes) stay.
                    (None, Some(_)) => out = slot2.take(),
                    // Past the end of cs2: nothing to do. (Etherpad issue #1625: copying cs1's keep
                    // here would leak cs1's attributes into the result.)
                    (Some(_), None) => *slot1 = None,
                    (Some(op1), Some(op2)) => {
                        let attribs = follow_attributes(&op1.attribs, &op2.attribs, pool)?;
                        if op1.chars <= op2.chars {
                            out = Some(
                                Op::new(OpCode::Keep, op1.chars, op1.lines).with_attribs(attribs),
                            );
                            op2.chars -= op1.chars;
                            op2.lines = op2
                                .lines
                                .checked_sub(op1.lines)
                                .ok_or_else(|| mismatch(op1, op2))?;
                            *slot1 = None;
                            if op2.chars == 0 {
                                *slot2 = None;
                            }
                        } else {
                            out = Some(
                                Op::new(OpCode::Keep, op2.chars, op2.lines).with_attribs(attribs),
                            );
                            op1.chars -= op2.chars;
                            op1.lines = op1
                                .lines
                                .checked_sub(op2.lines)
                                .ok_or_else(|| mismatch(op1, op2))?;
                            *slot2 = None;
                        }
                    }
                    (None, None) => {}
                }
            }
            if let Some(o) = &out {
                match o.opcode {
                    OpCode::Keep => {
                        old_pos = old_pos.saturating_add(o.chars);
                        new_len = new_len.saturating_add(o.chars);
                    }
                    OpCode::Remove => old_pos = old_pos.saturating_add(o.chars),
                    OpCode::Insert => new_len = new_len.saturating_add(o.chars),
                }
            }
            Ok(out)
        },
    )?;
    let rest = old_len.checked_sub(old_pos).ok_or(Error::PastOldEnd {
        op: "followed keep".to_owned(),
        old_len,
    })?;
    Ok(Changeset {
        old_len,
        new_len: new_len.saturating_add(rest),
        ops,
        char_bank: cs2.char_bank.clone(),
    })
}

/// The attribute changes to apply after `att1` so that the text ends up with the merge of
/// `att1` and `att2` (Etherpad's `followAttributes`): all of `att2`'s changes, except for a key
/// that `att1` also sets to a value lexically no greater, which wins.
pub fn follow_attributes(att1: &str, att2: &str, pool: &AttributePool) -> Result<String> {
    if att2.is_empty() {
        return Ok(String::new());
    }
    if att1.is_empty() {
        return Ok(att2.to_owned());
    }
    let lookup = |n: usize| {
        pool.get_attrib(n)
            .ok_or_else(|| Error::UnknownAttribute(num_to_string(n)))
    };
    // att2's attributes, one value per key, in order of first appearance.
    let mut atts: Vec<(&str, &str)> = Vec::new();
    for n in decode_attribs(att2)? {
        let (k, v) = lookup(n)?;
        match atts.iter_mut().find(|(key, _)| *key == k) {
            Some(entry) => entry.1 = v,
            None => atts.push((k, v)),
        }
    }
    for n in decode_attribs(att1)? {
        let (k, v) = lookup(n)?;
        if let Some(i) = atts.iter().position(|(key, _)| *key == k)
            && let Some(&(_, v2)) = atts.get(i)
            && crate::attribute_map::js_cmp(v, v2) != std::cmp::Ordering::Greater
        {
            atts.remove(i);
        }
    }
    let mut out = String::new();
    for (k, v) in atts {
        let n = pool
            .lookup(k, v)
            .ok_or_else(|| Error::UnknownAttribute(format!("[{k:?}, {v:?}]")))?;
        out.push('*');
        out.push_str(&num_to_string(n));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compose::{compose, compose_attributes};

    fn pool_xy() -> AttributePool {
        let mut p = AttributePool::new();
        for (k, v) in [
            ("x", ""),
            ("x", "abc"),
            ("x", "def"),
            ("y", ""),
            ("y", "abc"),
            ("y", "def"),
        ] {
            p.put_attrib(k, v);
        }
        p
    }

    #[test]
    fn follow_attributes_etherpad_vectors() {
        // Etherpad easysync-follow spec, "followAttributes & composeAttributes" manual #1..#8.
        let p = pool_xy();
        for (a, b, afb, bfa, merge) in [
            ("", "", "", "", ""),
            ("*0", "", "", "*0", "*0"),
            ("*0", "*0", "", "", "*0"),
            ("*0", "*1", "", "*0", "*0"),
            ("*1", "*2", "", "*1", "*1"),
            ("*0*1", "", "", "*0*1", "*0*1"),
            ("*0*4", "*2*3", "*3", "*0", "*0*3"),
            ("*0*4", "*2", "", "*0*4", "*0*4"),
        ] {
            assert_eq!(
                follow_attributes(a, b, &p).unwrap(),
                afb,
                "follow({a}, {b})"
            );
            assert_eq!(
                follow_attributes(b, a, &p).unwrap(),
                bfa,
                "follow({b}, {a})"
            );
            assert_eq!(compose_attributes(a, afb, true, &p).unwrap(), merge);
            assert_eq!(compose_attributes(b, bfa, true, &p).unwrap(), merge);
        }
    }

    #[test]
    fn concurrent_inserts_at_the_same_place() {
        let p = AttributePool::new();
        let a = Changeset::parse("Z:1>1+1$a").unwrap();
        let b = Changeset::parse("Z:1>1+1$b").unwrap();
        let afb = follow(&a, &b, false, &p).unwrap();
        let bfa = follow(&b, &a, true, &p).unwrap();
        assert_eq!(afb.to_string(), "Z:2>1=1+1$b");
        assert_eq!(bfa.to_string(), "Z:2>1+1$a");
        assert_eq!(
            compose(&a, &afb, &p).unwrap(),
            compose(&b, &bfa, &p).unwrap()
        );
    }

    #[test]
    fn insert_starting_with_newline_goes_second() {
        let p = AttributePool::new();
        let a = Changeset::parse("Z:1>1|1+1$\n").unwrap();
        let b = Changeset::parse("Z:1>1+1$b").unwrap();
        // a's insert starts with a newline, so b's goes first even though a is cs1.
        assert_eq!(follow(&a, &b, false, &p).unwrap().to_string(), "Z:2>1+1$b");
    }

    #[test]
    fn insertorder_first_wins_the_tie() {
        let mut p = AttributePool::new();
        p.put_attrib("insertorder", "first");
        let a = Changeset::parse("Z:1>1+1$a").unwrap();
        let b = Changeset::parse("Z:1>1*0+1$b").unwrap();
        assert_eq!(
            follow(&a, &b, false, &p).unwrap().to_string(),
            "Z:2>1*0+1$b"
        );
    }

    #[test]
    fn deletes_of_the_same_text_do_not_double_up() {
        let p = AttributePool::new();
        let a = Changeset::parse("Z:5<2=1-2$").unwrap();
        let b = Changeset::parse("Z:5<3=1-3$").unwrap();
        let afb = follow(&a, &b, false, &p).unwrap();
        assert_eq!(afb.to_string(), "Z:3<1=1-1$");
    }

    #[test]
    fn refuses_different_base_lengths() {
        let p = AttributePool::new();
        let a = Changeset::parse("Z:1>1+1$a").unwrap();
        let b = Changeset::parse("Z:2>1+1$b").unwrap();
        assert_eq!(follow(&a, &b, false, &p), Err(Error::FollowMismatch(1, 2)));
    }
}
