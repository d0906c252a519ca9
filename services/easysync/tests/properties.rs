//! Property tests over random pad texts and random valid changesets: the algebra the server
//! relies on (apply, compose, follow, inverse) and the wire format's round trip.

mod common;

use common::{build, pad_text, plan, styled, two_prop_pool};
use easysync::{
    AText, Changeset, apply_to_atext, apply_to_text, compose, follow, inverse,
    join_attribution_lines, make_splice, parse_ops, split_attribution_lines, subattribution,
    text_length,
};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The generator's changesets are accepted by `check` (with the pool), and the wire format
    /// round-trips exactly.
    #[test]
    fn serialize_parse_round_trip(text in pad_text(), p in plan()) {
        let pool = two_prop_pool();
        let (cs, _) = build(&text, &p, true);
        cs.check(Some(&pool)).unwrap();
        let s = cs.to_string();
        let back = Changeset::parse(&s).unwrap();
        prop_assert_eq!(&back, &cs);
        prop_assert_eq!(back.to_string(), s);
        let json = serde_json::to_string(&cs).unwrap();
        prop_assert_eq!(serde_json::from_str::<Changeset>(&json).unwrap(), cs);
    }

    /// Applying produces the text the edit plan describes, of the claimed length.
    #[test]
    fn apply_produces_the_planned_text(text in pad_text(), p in plan()) {
        let (cs, expected) = build(&text, &p, false);
        let out = apply_to_text(&cs, &text).unwrap();
        prop_assert_eq!(text_length(&out), cs.new_len);
        prop_assert_eq!(out, expected);
    }

    /// apply(compose(a, b)) == apply(b, apply(a)), for texts and attributed texts, and the
    /// composition is itself a valid changeset.
    #[test]
    fn compose_is_sequential_application(
        text in pad_text(), style in plan(), pa in plan(), pb in plan()
    ) {
        let pool = two_prop_pool();
        let base = styled(&text, &style, &pool);
        let (a, t1) = build(&text, &pa, true);
        let (b, t2) = build(&t1, &pb, true);
        let ab = compose(&a, &b, &pool).unwrap();
        ab.check(Some(&pool)).unwrap();
        prop_assert_eq!(apply_to_text(&ab, &text).unwrap(), t2.clone());
        let stepwise = apply_to_atext(&b, &apply_to_atext(&a, &base, &pool).unwrap(), &pool).unwrap();
        let at_once = apply_to_atext(&ab, &base, &pool).unwrap();
        at_once.check(Some(&pool)).unwrap();
        prop_assert_eq!(&at_once.text, &t2);
        prop_assert_eq!(at_once, stepwise);
    }

    /// compose(compose(a, b), c) == compose(a, compose(b, c)) (Etherpad's testCompose).
    #[test]
    fn compose_is_associative(text in pad_text(), pa in plan(), pb in plan(), pc in plan()) {
        let pool = two_prop_pool();
        let (a, t1) = build(&text, &pa, true);
        let (b, t2) = build(&t1, &pb, true);
        let (c, _) = build(&t2, &pc, true);
        let left = compose(&compose(&a, &b, &pool).unwrap(), &c, &pool).unwrap();
        let right = compose(&a, &compose(&b, &c, &pool).unwrap(), &pool).unwrap();
        prop_assert_eq!(left, right);
    }

    /// Convergence: apply(follow(a, b, false), apply(a, t)) == apply(follow(b, a, true),
    /// apply(b, t)), for the text and for the attributes.
    #[test]
    fn follow_converges(text in pad_text(), style in plan(), pa in plan(), pb in plan()) {
        let pool = two_prop_pool();
        let base = styled(&text, &style, &pool);
        let (a, _) = build(&text, &pa, true);
        let (b, _) = build(&text, &pb, true);
        let a_then_b = follow(&a, &b, false, &pool).unwrap();
        let b_then_a = follow(&b, &a, true, &pool).unwrap();
        a_then_b.check(Some(&pool)).unwrap();
        b_then_a.check(Some(&pool)).unwrap();
        let via_a = apply_to_atext(&a_then_b, &apply_to_atext(&a, &base, &pool).unwrap(), &pool).unwrap();
        let via_b = apply_to_atext(&b_then_a, &apply_to_atext(&b, &base, &pool).unwrap(), &pool).unwrap();
        via_a.check(Some(&pool)).unwrap();
        prop_assert_eq!(via_a, via_b);
    }

    /// Without attributes the two merged changesets are identical strings (Etherpad's
    /// testFollow: compose(cs1, afb) == compose(cs2, bfa)).
    #[test]
    fn follow_then_compose_gives_the_same_changeset(text in pad_text(), pa in plan(), pb in plan()) {
        let pool = two_prop_pool();
        let (a, _) = build(&text, &pa, false);
        let (b, _) = build(&text, &pb, false);
        let merge1 = compose(&a, &follow(&a, &b, false, &pool).unwrap(), &pool).unwrap();
        let merge2 = compose(&b, &follow(&b, &a, true, &pool).unwrap(), &pool).unwrap();
        prop_assert_eq!(merge1.to_string(), merge2.to_string());
    }

    /// Following an identity changes nothing; following over an identity changes nothing.
    #[test]
    fn follow_with_identity_is_neutral(text in pad_text(), pa in plan()) {
        let pool = two_prop_pool();
        let (a, _) = build(&text, &pa, true);
        let id = Changeset::identity(a.old_len);
        prop_assert_eq!(follow(&id, &a, false, &pool).unwrap(), a.clone());
        prop_assert_eq!(follow(&a, &id, false, &pool).unwrap(), Changeset::identity(a.new_len));
    }

    /// apply(inverse(cs), apply(cs, atext)) == atext, text and attributes.
    #[test]
    fn inverse_undoes(text in pad_text(), style in plan(), p in plan()) {
        let mut pool = two_prop_pool();
        let before = styled(&text, &style, &pool);
        let (cs, _) = build(&text, &p, true);
        let after = apply_to_atext(&cs, &before, &pool).unwrap();
        let inv = inverse(&cs, &before, &mut pool).unwrap();
        inv.check(Some(&pool)).unwrap();
        prop_assert_eq!(apply_to_atext(&inv, &after, &pool).unwrap(), before);
    }

    /// Splitting an attribution per line and joining it back is the identity
    /// (Etherpad's testSplitJoinAttributionLines).
    #[test]
    fn split_join_attribution_lines(text in pad_text(), style in plan()) {
        let pool = two_prop_pool();
        let atext = styled(&text, &style, &pool);
        let lines = split_attribution_lines(&atext.attribs, &atext.text).unwrap();
        prop_assert_eq!(lines.len(), atext.text.matches('\n').count());
        for line in &lines {
            let ops = parse_ops(line).unwrap();
            let newlines: Vec<usize> = ops.iter().map(|op| op.lines).collect();
            prop_assert_eq!(newlines.last(), Some(&1), "line {} must end with its newline", line);
            prop_assert_eq!(newlines.iter().sum::<usize>(), 1, "line {} has one newline", line);
        }
        prop_assert_eq!(join_attribution_lines(&lines).unwrap(), atext.attribs);
    }

    /// makeSplice replaces exactly the given range, at any character boundary.
    #[test]
    fn make_splice_splices(
        text in pad_text(), start in 0usize..80, ndel in 0usize..80, ins in common::inserted_text()
    ) {
        let chars: Vec<char> = text.chars().collect();
        let start_c = start.min(chars.len());
        let end_c = (start_c + ndel).min(chars.len());
        let prefix: String = chars[..start_c].iter().collect();
        let deleted: String = chars[start_c..end_c].iter().collect();
        let suffix: String = chars[end_c..].iter().collect();
        let cs = make_splice(&text, text_length(&prefix), text_length(&deleted), &ins, "").unwrap();
        cs.check(None).unwrap();
        prop_assert_eq!(apply_to_text(&cs, &text).unwrap(), format!("{prefix}{ins}{suffix}"));
    }

    /// A blank pad plus `changeset_from_blank` recreates any pad whose final newline is plain.
    #[test]
    fn changeset_from_blank_recreates(text in pad_text(), style in plan()) {
        let pool = two_prop_pool();
        let atext = styled(&text, &style, &pool);
        let cs = atext.changeset_from_blank().unwrap();
        let rebuilt = AText::new("\n").unwrap().apply(&cs, &pool).unwrap();
        prop_assert_eq!(&rebuilt.text, &atext.text);
        // The final newline keeps the blank pad's (absent) attributes, as in Etherpad.
        let lines = split_attribution_lines(&rebuilt.attribs, &rebuilt.text).unwrap();
        let orig = split_attribution_lines(&atext.attribs, &atext.text).unwrap();
        prop_assert_eq!(lines.len(), orig.len());
        prop_assert_eq!(&lines[..lines.len() - 1], &orig[..orig.len() - 1]);
        let body = atext.text.strip_suffix('\n').unwrap();
        let last_len = text_length(body.rsplit('\n').next().unwrap());
        prop_assert_eq!(
            subattribution(&lines[lines.len() - 1], 0, Some(last_len)).unwrap(),
            subattribution(&orig[orig.len() - 1], 0, Some(last_len)).unwrap()
        );
    }
}
