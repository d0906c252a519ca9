//! The easysync operations the pads context uses, on changesets in their wire form.
//!
//! Events and store records carry changesets as strings (`Z:1>5+5$hello`); the `easysync`
//! crate works on parsed [`Changeset`]s. These functions take and give strings so the domain
//! and the projector stay in Etherpad's terms.

use palimpsest_events::pads::AText;

pub use easysync::{
    AttributeMap, AttributePool, Changeset, Error, Op, OpCode, ops_from_text, parse_ops,
    text_length,
};

/// Etherpad's `applyToAText` on a recorded changeset: the text and attribution after it.
pub fn apply_to_atext(cs: &str, atext: &AText, pool: &AttributePool) -> Result<AText, Error> {
    let cs = Changeset::unpack(cs)?;
    Ok(AText {
        text: easysync::apply_to_text(&cs, &atext.text)?,
        attribs: easysync::apply_to_attribution(&cs, &atext.attribs, pool)?,
    })
}

/// Etherpad's `makeSplice(orig, start, ndel, ins)` without attributes.
pub fn make_splice(orig: &str, start: usize, ndel: usize, ins: &str) -> Result<String, Error> {
    Ok(easysync::make_splice(orig, start, ndel, ins, "")?.to_string())
}

/// Splits `s` after `units` UTF-16 units.
pub fn split_at_units(s: &str, units: usize) -> Result<(&str, &str), Error> {
    let mut taken = 0usize;
    for (i, c) in s.char_indices() {
        if taken == units {
            return Ok(s.split_at(i));
        }
        taken += c.len_utf16();
        if taken > units {
            return Err(Error::SplitsSurrogatePair);
        }
    }
    if taken == units {
        Ok((s, ""))
    } else {
        Err(Error::AttributionLengthMismatch {
            attribs: units,
            text: taken,
        })
    }
}

/// Etherpad's `Builder.toString()`: canonicalises `ops` and packs them for a text of `old_len`
/// units with the inserted characters `bank`.
pub fn pack_ops(old_len: usize, ops: Vec<Op>, bank: String) -> Result<String, Error> {
    let mut assem = easysync::SmartOpAssembler::new();
    for op in ops {
        assem.append(op);
    }
    let (inserted, removed) = (assem.inserted(), assem.removed());
    assem.end_document();
    let new_len = (old_len + inserted)
        .checked_sub(removed)
        .ok_or(Error::NegativeLength {
            old_len,
            shrink: removed,
        })?;
    Ok(Changeset {
        old_len,
        new_len,
        ops: assem.finish(),
        char_bank: bank,
    }
    .to_string())
}

/// Etherpad's `moveOpsToNewPool`: the changeset with `from`'s attribute numbers renumbered into
/// `to` (attributes missing from `to` are added).
pub fn move_ops_to_new_pool(
    cs: &str,
    from: &AttributePool,
    to: &mut AttributePool,
) -> Result<String, Error> {
    let cs = Changeset::unpack(cs)?;
    Ok(easysync::move_ops_to_new_pool(&cs, from, to).to_string())
}

/// The changeset that changes nothing in a text of `len` units.
pub fn identity(len: usize) -> String {
    Changeset::identity(len).to_string()
}

/// Etherpad's `follow(a, b, reverseInsertOrder, pool)`: `b` rebased to apply after `a`.
pub fn follow(a: &str, b: &str, reverse: bool, pool: &AttributePool) -> Result<String, Error> {
    let (a, b) = (Changeset::unpack(a)?, Changeset::unpack(b)?);
    Ok(easysync::follow(&a, &b, reverse, pool)?.to_string())
}

/// The changeset that inserts `source`'s text and attributes (without its final newline) at the
/// start of a pad of `old_len` units, keeping that pad's text after it: Etherpad's
/// `copyPadWithoutHistory` changeset, with its lengths stated correctly.
pub fn insert_before_blank(source: &AText, old_len: usize) -> Result<String, Error> {
    let atext = easysync::AText {
        text: source.text.clone(),
        attribs: source.attribs.clone(),
    };
    let ops = atext.ops_without_final_newline()?;
    let bank = source
        .text
        .strip_suffix('\n')
        .unwrap_or(&source.text)
        .to_owned();
    pack_ops(old_len, ops, bank)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atext(text: &str, attribs: &str) -> AText {
        AText {
            text: text.into(),
            attribs: attribs.into(),
        }
    }

    #[test]
    fn splices_and_applies() {
        let cs = make_splice("\n", 0, 0, "hello").expect("splice");
        assert_eq!(cs, "Z:1>5+5$hello");
        let after =
            apply_to_atext(&cs, &atext("\n", "|1+1"), &AttributePool::new()).expect("apply");
        assert_eq!(after, atext("hello\n", "|1+6"));
    }

    #[test]
    fn copies_a_text_before_a_blank_pad() {
        let source = atext("ab\ncd\n", "|1+3+2|1+1");
        let cs = insert_before_blank(&source, 2).expect("cs");
        let after =
            apply_to_atext(&cs, &atext("\n\n", "|2+2"), &AttributePool::new()).expect("apply");
        assert_eq!(after.text, "ab\ncd\n\n");
    }

    #[test]
    fn splits_by_utf16_units() {
        assert_eq!(split_at_units("a😀b", 3).expect("split"), ("a😀", "b"));
        assert!(split_at_units("a😀b", 2).is_err());
        assert_eq!(split_at_units("ab", 2).expect("split"), ("ab", ""));
    }
}
