//! Walking two operation sequences side by side, splitting operations where the other side's
//! boundaries fall (Etherpad's `applyZip` and `slicerZipperFunc`). Applying a changeset to an
//! attribution, composing two changesets and slicing an attribution are all this walk.

use crate::assembler::SmartOpAssembler;
use crate::compose::compose_attributes;
use crate::error::{Error, Result};
use crate::ops::{Op, OpCode};
use crate::pool::AttributePool;

/// Walks `ops1` and `ops2` together. `step` gets the current operation of each side (`None`
/// when that side is exhausted), must consume at least one of them partly or wholly (setting it
/// to `None` when wholly consumed), and may return an operation for the output, which is
/// canonicalised. Empty input operations are skipped, so every step makes progress.
pub(crate) fn zip_ops<F>(
    ops1: impl IntoIterator<Item = Op>,
    ops2: impl IntoIterator<Item = Op>,
    mut step: F,
) -> Result<Vec<Op>>
where
    F: FnMut(&mut Option<Op>, &mut Option<Op>) -> Result<Option<Op>>,
{
    let mut it1 = ops1.into_iter().filter(|op| op.chars > 0);
    let mut it2 = ops2.into_iter().filter(|op| op.chars > 0);
    let mut cur1: Option<Op> = None;
    let mut cur2: Option<Op> = None;
    let mut assem = SmartOpAssembler::new();
    loop {
        if cur1.is_none() {
            cur1 = it1.next();
        }
        if cur2.is_none() {
            cur2 = it2.next();
        }
        if cur1.is_none() && cur2.is_none() {
            break;
        }
        let before = (op_len(&cur1), op_len(&cur2));
        if let Some(out) = step(&mut cur1, &mut cur2)? {
            assem.append(out);
        }
        if (op_len(&cur1), op_len(&cur2)) == before {
            // Defensive: a step that consumed nothing would loop forever.
            return Err(Error::LineCountMismatch(
                cur1.map(|o| o.to_string()).unwrap_or_default(),
                cur2.map(|o| o.to_string()).unwrap_or_default(),
            ));
        }
    }
    assem.end_document();
    Ok(assem.finish())
}

fn op_len(op: &Option<Op>) -> Option<(OpCode, usize)> {
    op.as_ref().map(|o| (o.opcode, o.chars))
}

/// Applies `cs_op` (from a changeset) to `att_op` (from an attribution, or from the earlier of
/// two changesets being composed), consuming what it covers; returns the resulting operation.
///
/// Removes on the attribution side and inserts on the changeset side pass through whole. A keep
/// or remove meeting an insert or keep is cut at the shorter of the two: insert+remove cancel,
/// insert+keep stays an insert (with the keep's attribute changes applied), keep+remove
/// removes, keep+keep keeps (attribute changes composed).
pub(crate) fn slice_zip(
    att_op: &mut Option<Op>,
    cs_op: &mut Option<Op>,
    pool: &AttributePool,
) -> Result<Option<Op>> {
    let (att, cs) = match (att_op.as_mut(), cs_op.as_mut()) {
        (None, _) => return Ok(cs_op.take()),
        (_, None) => return Ok(att_op.take()),
        (Some(att), _) if att.opcode == OpCode::Remove => return Ok(att_op.take()),
        (_, Some(cs)) if cs.opcode == OpCode::Insert => return Ok(cs_op.take()),
        (Some(att), Some(cs)) => (att, cs),
    };
    let mismatch = || Error::LineCountMismatch(att.to_string(), cs.to_string());
    let lines_agree = match att.chars.cmp(&cs.chars) {
        std::cmp::Ordering::Less => att.lines <= cs.lines,
        std::cmp::Ordering::Greater => att.lines >= cs.lines,
        std::cmp::Ordering::Equal => att.lines == cs.lines,
    };
    if att.lines > att.chars || cs.lines > cs.chars || !lines_agree {
        return Err(mismatch());
    }
    let opcode = match (att.opcode, cs.opcode) {
        (OpCode::Insert, OpCode::Remove) => None,
        (OpCode::Insert, OpCode::Keep) => Some(OpCode::Insert),
        (OpCode::Keep, OpCode::Remove) => Some(OpCode::Remove),
        (OpCode::Keep, OpCode::Keep) => Some(OpCode::Keep),
        _ => return Err(mismatch()),
    };
    // The shorter operation is consumed wholly (the attribution side on a tie).
    let (chars, lines) = if att.chars <= cs.chars {
        (att.chars, att.lines)
    } else {
        (cs.chars, cs.lines)
    };
    let out = match opcode {
        None => None,
        Some(opcode) => {
            let attribs = if cs.opcode == OpCode::Remove {
                // Removes normally carry no attributes, but Etherpad keeps any they have.
                cs.attribs.clone()
            } else if cs.attribs.is_empty() && att.chars <= cs.chars {
                // No attribute change and `att` is consumed: reuse its attributes as they are
                // (what `compose_attributes` returns here), without copying.
                std::mem::take(&mut att.attribs)
            } else {
                compose_attributes(&att.attribs, &cs.attribs, att.opcode == OpCode::Keep, pool)?
            };
            Some(Op {
                opcode,
                chars,
                lines,
                attribs,
            })
        }
    };
    att.chars -= chars;
    att.lines -= lines;
    cs.chars -= chars;
    cs.lines -= lines;
    if att.chars == 0 {
        *att_op = None;
    }
    if cs.chars == 0 {
        *cs_op = None;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_meeting_keep_stays_insert_and_is_cut() {
        let pool = AttributePool::new();
        let mut att = Some(Op::new(OpCode::Insert, 5, 1));
        let mut cs = Some(Op::new(OpCode::Keep, 2, 0));
        let out = slice_zip(&mut att, &mut cs, &pool).unwrap();
        assert_eq!(out, Some(Op::new(OpCode::Insert, 2, 0)));
        assert_eq!(att, Some(Op::new(OpCode::Insert, 3, 1)));
        assert_eq!(cs, None);
    }

    #[test]
    fn disagreeing_newlines_are_errors() {
        let pool = AttributePool::new();
        let mut att = Some(Op::new(OpCode::Insert, 5, 0));
        let mut cs = Some(Op::new(OpCode::Keep, 2, 1));
        assert!(slice_zip(&mut att, &mut cs, &pool).is_err());
    }
}
