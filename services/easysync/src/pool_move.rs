//! Renumbering attributes from one pool into another: a client's changeset arrives with the
//! client's pool numbers and must be stored with the pad's (Etherpad's `moveOpsToNewPool`).

use crate::attribs::decode_attribs;
use crate::base36::num_to_string;
use crate::changeset::Changeset;
use crate::error::Result;
use crate::ops::{Op, parse_ops, serialize_ops};
use crate::pool::AttributePool;

/// The changeset with every attribute number of `old` replaced by the number of the same pair
/// in `new` (added to `new` if missing). Attribute order is kept and operations are not
/// re-merged, exactly as Etherpad's string rewrite. A number not in `old` is dropped, as in
/// Etherpad (check with [`Changeset::check_attributes_in`] first to refuse such input).
pub fn move_ops_to_new_pool(
    cs: &Changeset,
    old: &AttributePool,
    new: &mut AttributePool,
) -> Changeset {
    Changeset {
        ops: cs.ops.iter().map(|op| move_op(op, old, new)).collect(),
        ..cs.clone()
    }
}

/// The changeset renumbered into a fresh pool holding only the attributes it uses, for sending
/// to a client (Etherpad's `prepareForWire`).
pub fn prepare_for_wire(cs: &Changeset, pool: &AttributePool) -> (Changeset, AttributePool) {
    let mut wire = AttributePool::new();
    let translated = move_ops_to_new_pool(cs, pool, &mut wire);
    (translated, wire)
}

/// [`move_ops_to_new_pool`] for an attribution string (an attributed text's `attribs`).
pub fn move_attribution_to_new_pool(
    attribution: &str,
    old: &AttributePool,
    new: &mut AttributePool,
) -> Result<String> {
    let ops: Vec<Op> = parse_ops(attribution)?
        .iter()
        .map(|op| move_op(op, old, new))
        .collect();
    Ok(serialize_ops(&ops))
}

/// Keeps only the attribute numbers for which `keep` is true, in a changeset (Etherpad's
/// `filterAttribNumbers`). Operations are not re-merged.
pub fn filter_attrib_numbers(cs: &Changeset, keep: impl Fn(usize) -> bool) -> Changeset {
    Changeset {
        ops: cs
            .ops
            .iter()
            .map(|op| Op {
                attribs: remap(&op.attribs, |n| keep(n).then_some(n)),
                ..op.clone()
            })
            .collect(),
        ..cs.clone()
    }
}

fn move_op(op: &Op, old: &AttributePool, new: &mut AttributePool) -> Op {
    Op {
        attribs: remap(&op.attribs, |n| {
            old.get_attrib(n).map(|(k, v)| new.put_attrib(k, v))
        }),
        ..op.clone()
    }
}

/// Rewrites each `*n` of an attribute string through `f`; `None` drops it. A malformed string
/// (never the case for parsed operations) loses its attributes.
fn remap(attribs: &str, mut f: impl FnMut(usize) -> Option<usize>) -> String {
    let mut out = String::new();
    for n in decode_attribs(attribs).unwrap_or_default() {
        if let Some(m) = f(n) {
            out.push('*');
            out.push_str(&num_to_string(m));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn move_ops_to_new_pool_etherpad_vector() {
        let mut pool1 = AttributePool::new();
        let mut pool2 = AttributePool::new();
        pool1.put_attrib("baz", "qux");
        pool1.put_attrib("foo", "bar");
        pool2.put_attrib("foo", "bar");
        let cs = Changeset::parse("Z:1>2*1+1*0+1$ab").unwrap();
        assert_eq!(
            move_ops_to_new_pool(&cs, &pool1, &mut pool2).to_string(),
            "Z:1>2*0+1*1+1$ab"
        );
        assert_eq!(
            move_attribution_to_new_pool("*1+1*0+1", &pool1, &mut pool2).unwrap(),
            "*0+1*1+1"
        );
        assert_eq!(pool2.get_attrib(1), Some(("baz", "qux")));
    }

    #[test]
    fn prepare_for_wire_keeps_only_used_attributes() {
        let mut pool = AttributePool::new();
        pool.put_attrib("author", "a.x");
        pool.put_attrib("bold", "true");
        let cs = Changeset::parse("Z:1>2*1+2$ab").unwrap();
        let (wire_cs, wire_pool) = prepare_for_wire(&cs, &pool);
        assert_eq!(wire_cs.to_string(), "Z:1>2*0+2$ab");
        assert_eq!(
            serde_json::to_string(&wire_pool).unwrap(),
            r#"{"numToAttrib":{"0":["bold","true"]},"nextNum":1}"#
        );
    }

    #[test]
    fn filter_attrib_numbers_etherpad_vectors() {
        // Etherpad's vectors are attribution strings; wrap them in an insert-only changeset.
        let ops = parse_ops("*0*1+1+2+3*1+4*2+5*0*2*1*b*c+6").unwrap();
        let cs = Changeset {
            old_len: 0,
            new_len: 21,
            ops,
            char_bank: "x".repeat(21),
        };
        let even = filter_attrib_numbers(&cs, |n| n % 2 == 0);
        assert_eq!(serialize_ops(&even.ops), "*0+1+2+3+4*2+5*0*2*c+6");
        let odd = filter_attrib_numbers(&cs, |n| n % 2 == 1);
        assert_eq!(serialize_ops(&odd.ops), "*1+1+2+3*1+4+5*1*b+6");
    }
}
