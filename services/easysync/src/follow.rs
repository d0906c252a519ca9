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
    let mut follower = Follower {
        chars1: Utf16Cursor::new(&cs1.char_bank),
        chars2: Utf16Cursor::new(&cs2.char_bank),
        insert_first: pool.lookup("insertorder", "first"),
        reverse_insert_order,
        pool,
        old_pos: 0,
        new_len: 0,
    };
    let ops = zip_ops(
        cs1.ops.iter().cloned(),
        cs2.ops.iter().cloned(),
        |slot1, slot2| follower.step(slot1, slot2),
    )?;
    // The result applies to cs1's new text; what its ops do not reach is kept.
    let old_len = cs1.new_len;
    let rest = old_len
        .checked_sub(follower.old_pos)
        .ok_or(Error::PastOldEnd {
            op: "followed keep".to_owned(),
            old_len,
        })?;
    Ok(Changeset {
        old_len,
        new_len: follower.new_len.saturating_add(rest),
        ops,
        char_bank: cs2.char_bank.clone(),
    })
}

/// One run of [`follow`]: where each changeset's inserted characters are read, the tie-break
/// settings, and the lengths of the result so far. Each step takes the next operations of
/// `cs1` and `cs2` over the same old text and emits at most one operation of the result.
struct Follower<'a> {
    /// `cs1`'s char bank, at the next character one of its inserts will take.
    chars1: Utf16Cursor<'a>,
    /// `cs2`'s char bank, likewise.
    chars2: Utf16Cursor<'a>,
    /// The pool number of `insertorder=first`, if the pool has it.
    insert_first: Option<usize>,
    /// Whether `cs2`'s insert goes first when nothing else decides.
    reverse_insert_order: bool,
    /// The pool both changesets' attributes refer to.
    pool: &'a AttributePool,
    /// How much of `cs1`'s new text the result has kept or removed so far.
    old_pos: usize,
    /// How long the result's new text is so far.
    new_len: usize,
}

/// Which of two operations over the same old text counts as the shorter when they are equally
/// long (it decides the lines the passed part has and which line count must not be exceeded).
#[derive(Clone, Copy)]
enum OnTie {
    First,
    Second,
}

impl Follower<'_> {
    /// One step of the zip: the case of the two operations at hand, then the result's lengths.
    fn step(&mut self, slot1: &mut Option<Op>, slot2: &mut Option<Op>) -> Result<Option<Op>> {
        let out = if is(slot1, OpCode::Insert) || is(slot2, OpCode::Insert) {
            self.insert(slot1, slot2)?
        } else if is(slot1, OpCode::Remove) {
            cs1_removed(slot1, slot2)?;
            None
        } else if is(slot2, OpCode::Remove) {
            cs2_removes(slot1, slot2)?
        } else {
            self.both_keep(slot1, slot2)?
        };
        if let Some(op) = &out {
            self.count(op);
        }
        Ok(out)
    }

    /// An insert on either side: it goes first (an insert of `cs1` becomes a keep of the text
    /// it inserted; one of `cs2` stays an insert); two inserts at the same place are ordered by
    /// [`Follower::cs1_inserts_first`].
    fn insert(&mut self, slot1: &mut Option<Op>, slot2: &mut Option<Op>) -> Result<Option<Op>> {
        let cs1_first = match (slot1.as_ref(), slot2.as_ref()) {
            (Some(op1), Some(op2))
                if op1.opcode == OpCode::Insert && op2.opcode == OpCode::Insert =>
            {
                self.cs1_inserts_first(op1, op2)?
            }
            _ => !is(slot2, OpCode::Insert),
        };
        if cs1_first {
            if let Some(op1) = slot1.take() {
                self.chars1.skip(op1.chars).map_err(bank_error)?;
                return Ok(Some(Op::new(OpCode::Keep, op1.chars, op1.lines)));
            }
        } else if let Some(op2) = slot2.take() {
            self.chars2.skip(op2.chars).map_err(bank_error)?;
            return Ok(Some(op2));
        }
        Ok(None)
    }

    /// Etherpad's tie-break for two inserts at the same place: `insertorder=first`, then the
    /// insert not starting with a newline, then `cs1` unless `reverse_insert_order`.
    fn cs1_inserts_first(&self, op1: &Op, op2: &Op) -> Result<bool> {
        let first1 = self.has_insert_first(&op1.attribs)?;
        let first2 = self.has_insert_first(&op2.attribs)?;
        let nl1 = self.chars1.next_is_newline();
        let nl2 = self.chars2.next_is_newline();
        Ok(if first1 != first2 {
            first1
        } else if nl1 != nl2 {
            // Insert the text that does not start with a newline first.
            nl2
        } else {
            !self.reverse_insert_order
        })
    }

    /// Whether `attribs` holds `insertorder=first`.
    fn has_insert_first(&self, attribs: &str) -> Result<bool> {
        Ok(match self.insert_first {
            Some(n) => decode_attribs(attribs)?.contains(&n),
            None => false,
        })
    }

    /// Both keep the text (or one changeset has ended): `cs2`'s keep stays, its attribute
    /// changes merged with `cs1`'s ([`follow_attributes`]).
    fn both_keep(&self, slot1: &mut Option<Op>, slot2: &mut Option<Op>) -> Result<Option<Op>> {
        match (slot1.as_ref(), slot2.as_ref()) {
            // Past the end of cs1: cs2's keeps (with their attribute changes) stay.
            (None, Some(_)) => Ok(slot2.take()),
            // Past the end of cs2: nothing to do. (Etherpad issue #1625: copying cs1's keep
            // here would leak cs1's attributes into the result.)
            (Some(_), None) => {
                *slot1 = None;
                Ok(None)
            }
            (Some(op1), Some(op2)) => {
                let attribs = follow_attributes(&op1.attribs, &op2.attribs, self.pool)?;
                let (chars, lines) = pass_shorter(slot1, slot2, OnTie::First)?;
                Ok(Some(
                    Op::new(OpCode::Keep, chars, lines).with_attribs(attribs),
                ))
            }
            (None, None) => Ok(None),
        }
    }

    /// Counts an emitted operation into the result's lengths.
    fn count(&mut self, op: &Op) {
        match op.opcode {
            OpCode::Keep => {
                self.old_pos = self.old_pos.saturating_add(op.chars);
                self.new_len = self.new_len.saturating_add(op.chars);
            }
            OpCode::Remove => self.old_pos = self.old_pos.saturating_add(op.chars),
            OpCode::Insert => self.new_len = self.new_len.saturating_add(op.chars),
        }
    }
}

/// Whether the operation in `slot` has `opcode`.
fn is(slot: &Option<Op>, opcode: OpCode) -> bool {
    slot.as_ref().is_some_and(|op| op.opcode == opcode)
}

/// `cs1` removed this text: whatever `cs2` did to it is moot, so nothing is emitted; the
/// removed length is passed on both sides.
fn cs1_removed(slot1: &mut Option<Op>, slot2: &mut Option<Op>) -> Result<()> {
    match (slot1.as_ref(), slot2.as_ref()) {
        (Some(_), None) => *slot1 = None,
        (Some(_), Some(_)) => {
            pass_shorter(slot1, slot2, OnTie::First)?;
        }
        (None, _) => {}
    }
    Ok(())
}

/// `cs2` removes text that `cs1` kept: remove it (as far as `cs1`'s keep reaches).
fn cs2_removes(slot1: &mut Option<Op>, slot2: &mut Option<Op>) -> Result<Option<Op>> {
    let mut removal = slot2.clone();
    match (slot1.as_ref(), slot2.as_ref()) {
        (None, Some(_)) => *slot2 = None,
        (Some(_), Some(_)) => {
            let (chars, lines) = pass_shorter(slot1, slot2, OnTie::Second)?;
            if let Some(r) = removal.as_mut() {
                r.chars = chars;
                r.lines = lines;
            }
        }
        (_, None) => {}
    }
    Ok(removal)
}

/// Passes the shorter of two operations over the same old text: it leaves its slot, and the
/// other is shortened by its length (and leaves too when nothing is left of it). Returns the
/// length passed (characters, lines). A longer operation with fewer lines than the shorter is
/// a mismatch of the two changesets.
fn pass_shorter(
    slot1: &mut Option<Op>,
    slot2: &mut Option<Op>,
    on_tie: OnTie,
) -> Result<(usize, usize)> {
    let (Some(op1), Some(op2)) = (slot1.as_mut(), slot2.as_mut()) else {
        return Ok((0, 0));
    };
    let first_is_shorter = match on_tie {
        OnTie::First => op1.chars <= op2.chars,
        OnTie::Second => op1.chars < op2.chars,
    };
    if first_is_shorter {
        let passed = (op1.chars, op1.lines);
        op2.chars -= op1.chars;
        op2.lines = op2
            .lines
            .checked_sub(op1.lines)
            .ok_or_else(|| mismatch(op1, op2))?;
        let emptied = op2.chars == 0;
        *slot1 = None;
        if emptied {
            *slot2 = None;
        }
        Ok(passed)
    } else {
        let passed = (op2.chars, op2.lines);
        op1.chars -= op2.chars;
        op1.lines = op1
            .lines
            .checked_sub(op2.lines)
            .ok_or_else(|| mismatch(op1, op2))?;
        let emptied = op1.chars == 0;
        *slot2 = None;
        if emptied {
            *slot1 = None;
        }
        Ok(passed)
    }
}

/// The two changesets disagree on how many lines the text at hand has.
fn mismatch(op1: &Op, op2: &Op) -> Error {
    Error::LineCountMismatch(op1.to_string(), op2.to_string())
}

/// A followed insert reaching past its changeset's char bank.
fn bank_error(e: CursorError) -> Error {
    match e {
        CursorError::PastEnd => Error::CharBankTooShort("followed insert".to_owned()),
        CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
    }
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
