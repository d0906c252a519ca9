//! Fuzz harness (proptest-driven): arbitrary and mutated input into the parsers and the
//! appliers. Nothing may panic, and whatever `parse` accepts must apply consistently to any
//! text of its old length: either the claimed new length comes out, or a text-dependent error
//! (newline placement, surrogate pairs) is reported.

mod common;

use common::{build, pad_text, plan, two_prop_pool};
use easysync::{
    AText, AttributePool, Changeset, Error, apply_to_attribution, apply_to_text, compose, follow,
    parse_ops, split_attribution_lines, subattribution, text_length,
};
use proptest::prelude::*;

/// Bytes that matter to the grammar, plus a few that do not.
const GRAMMAR: &[char] = &[
    'Z', ':', '0', '1', '2', '9', 'a', 'z', '>', '<', '*', '|', '+', '-', '=', '$', '\n', 'x',
    '😀', 'é', ' ',
];

fn grammar_string() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(GRAMMAR), 0..40)
        .prop_map(|v| v.into_iter().collect())
}

/// A text of exactly `len` UTF-16 units, ending with a newline when `len > 0`.
fn text_of_len(len: usize, seed: u64) -> String {
    let mut s = String::with_capacity(len);
    for i in 0..len.saturating_sub(1) {
        s.push(if (seed >> (i % 64)) & 1 == 1 {
            '\n'
        } else {
            'a'
        });
    }
    if len > 0 {
        s.push('\n');
    }
    s
}

/// A text of `cs.old_len` units whose newlines sit where `cs`'s keeps and removes expect them
/// (so that oddly shaped but valid changesets actually apply); `seed` varies the letters.
pub fn text_for(cs: &Changeset, seed: u64) -> String {
    let mut s = String::new();
    for op in &cs.ops {
        if op.opcode != easysync::OpCode::Insert {
            let plain = op.chars.saturating_sub(op.lines);
            s.extend(std::iter::repeat_n(
                if seed & 1 == 1 { 'b' } else { 'a' },
                plain,
            ));
            s.extend(std::iter::repeat_n('\n', op.chars - plain));
        }
    }
    let rest = cs.old_len.saturating_sub(text_length(&s));
    s.push_str(&text_of_len(rest, seed));
    s
}

/// Feeds `s` to every entry point that reads untrusted text; checks the contract of `parse`.
fn exercise(s: &str, seed: u64) {
    let pool = two_prop_pool();
    let _ = parse_ops(s);
    let _ = Changeset::unpack(s);
    let _ = AText::from_parts("ab\n", s);
    let _ = apply_to_attribution(&Changeset::identity(3), s, &pool);
    let _ = split_attribution_lines(s, "ab\ncd\n");
    let _ = subattribution(s, 1, Some(3));
    let _ = serde_json::from_str::<AttributePool>(s);
    let _ = serde_json::from_str::<AText>(s);
    let Ok(cs) = Changeset::parse(s) else {
        return;
    };
    // Accepted: canonical, consistent, and it applies to texts of its old length.
    assert_eq!(cs.to_string(), s);
    cs.check(None).expect("parse implies check");
    if cs.old_len > 4096 {
        return;
    }
    let text = text_of_len(cs.old_len, seed);
    match apply_to_text(&cs, &text) {
        Ok(out) => assert_eq!(text_length(&out), cs.new_len, "{s}"),
        Err(
            Error::NewlineCountMismatch { .. }
            | Error::MultilineNotEndingInNewline(_)
            | Error::SplitsSurrogatePair,
        ) => {}
        Err(e) => panic!("accepted changeset {s:?} failed to apply: {e}"),
    }
    if cs.check(Some(&pool)).is_ok()
        && let Ok(atext) = AText::new(text.clone())
    {
        let _ = atext.apply(&cs, &pool);
    }
    let _ = compose(&cs, &Changeset::identity(cs.new_len), &pool);
    let _ = follow(&cs, &cs, false, &pool);
}

/// Raw material of a changeset: operations (opcode, chars, lines, attributes, an optional odd
/// character for the bank), extra old length, and sometimes a wrong new length.
#[derive(Debug, Clone)]
pub struct RawChangeset {
    ops: Vec<(char, usize, usize, &'static str, Option<char>)>,
    extra_old: usize,
    wrong_new: Option<usize>,
}

impl RawChangeset {
    /// Renders the wire format. With `old_len`, the header claims that old length when the
    /// operations fit in it.
    pub fn render(&self, old_len: Option<usize>) -> String {
        let walked: usize = self
            .ops
            .iter()
            .filter(|op| op.0 != '+')
            .map(|op| op.1)
            .sum();
        let extra = match old_len {
            Some(n) if n >= walked => n - walked,
            _ => self.extra_old,
        };
        let mut old_len = extra;
        let mut new_len = extra;
        let mut body = String::new();
        let mut bank = String::new();
        for &(opcode, chars, lines, attribs, odd_char) in &self.ops {
            match opcode {
                '=' => {
                    old_len += chars;
                    new_len += chars;
                }
                '-' => old_len += chars,
                _ => {
                    new_len += chars;
                    // Usually the bank text the op claims: letters, then its newlines.
                    let plain = chars.saturating_sub(lines);
                    bank.extend(std::iter::repeat_n('a', plain));
                    bank.extend(std::iter::repeat_n('\n', chars - plain));
                    bank.extend(odd_char);
                }
            }
            body.push_str(attribs);
            if lines > 0 {
                body.push('|');
                body.push_str(&easysync::num_to_string(lines));
            }
            body.push(opcode);
            body.push_str(&easysync::num_to_string(chars));
        }
        let new_len = self.wrong_new.unwrap_or(new_len);
        let (sign, change) = if new_len >= old_len {
            ('>', new_len - old_len)
        } else {
            ('<', old_len - new_len)
        };
        format!(
            "Z:{}{sign}{}{body}${bank}",
            easysync::num_to_string(old_len),
            easysync::num_to_string(change)
        )
    }
}

/// Random [`RawChangeset`]s: usually consistent, often not; they reach `check`'s and `apply`'s
/// deeper branches far more often than random text does.
pub fn raw_parts() -> impl Strategy<Value = RawChangeset> {
    let op = (
        prop::sample::select(&['=', '+', '-'][..]),
        0usize..5,
        0usize..3,
        prop::sample::select(&["", "", "", "*0", "*1", "*3", "*0*2", "*5"][..]),
        prop::option::weighted(0.15, prop::sample::select(&['a', '\n', '😀', 'é'][..])),
    );
    (
        prop::collection::vec(op, 0..8),
        0usize..3,
        prop::option::weighted(0.2, 0usize..20),
    )
        .prop_map(|(ops, extra_old, wrong_new)| RawChangeset {
            ops,
            extra_old,
            wrong_new,
        })
}

/// [`raw_parts`] rendered as they come.
pub fn raw_changeset() -> impl Strategy<Value = String> {
    raw_parts().prop_map(|r| r.render(None))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// Changesets assembled from random raw operations (often consistent, often not).
    #[test]
    fn raw_operation_soup(s in raw_changeset(), seed in any::<u64>()) {
        exercise(&s, seed);
    }

    /// Any unicode string.
    #[test]
    fn arbitrary_strings(s in "\\PC*", seed in any::<u64>()) {
        exercise(&s, seed);
    }

    /// Any bytes (lossily decoded, as a server would after rejecting invalid UTF-8).
    #[test]
    fn arbitrary_bytes(bytes in prop::collection::vec(any::<u8>(), 0..64), seed in any::<u64>()) {
        exercise(&String::from_utf8_lossy(&bytes), seed);
    }

    /// Strings made of the grammar's own characters: far more of them get past the header.
    #[test]
    fn grammar_soup(s in grammar_string(), seed in any::<u64>()) {
        exercise(&s, seed);
        exercise(&format!("Z:{s}"), seed);
        exercise(&format!("Z:5>0{s}"), seed);
    }

    /// Valid changesets with one byte-level mutation (insert, delete or replace a character).
    #[test]
    fn mutated_valid_changesets(
        text in pad_text(), p in plan(), at in any::<prop::sample::Index>(),
        what in 0u8..3, c in prop::sample::select(GRAMMAR), seed in any::<u64>()
    ) {
        let (cs, _) = build(&text, &p, true);
        let mut chars: Vec<char> = cs.to_string().chars().collect();
        let i = at.index(chars.len() + 1);
        match what {
            0 => chars.insert(i, c),
            1 if i < chars.len() => { chars.remove(i); }
            _ if i < chars.len() => chars[i] = c,
            _ => chars.push(c),
        }
        let mutated: String = chars.into_iter().collect();
        exercise(&mutated, seed);
        // The mutant against the original text, when the lengths still match.
        if let Ok(m) = Changeset::parse(&mutated)
            && m.old_len == text_length(&text)
        {
            match apply_to_text(&m, &text) {
                Ok(out) => prop_assert_eq!(text_length(&out), m.new_len),
                Err(Error::NewlineCountMismatch { .. }
                    | Error::MultilineNotEndingInNewline(_)
                    | Error::SplitsSurrogatePair) => {}
                Err(e) => prop_assert!(false, "accepted mutant {} failed: {}", mutated, e),
            }
        }
    }

    /// Pairs of accepted changesets go through compose and follow without panicking; when
    /// both apply to a text, the results apply too and agree with sequential application.
    #[test]
    fn compose_and_follow_on_raw_pairs(
        a in raw_changeset(), b in raw_parts(), for_follow in any::<bool>(), seed in any::<u64>()
    ) {
        let pool = two_prop_pool();
        let Ok(a) = Changeset::parse(&a) else {
            return Ok(());
        };
        let b = b.render(Some(if for_follow { a.old_len } else { a.new_len }));
        let Ok(b) = Changeset::parse(&b) else {
            return Ok(());
        };
        let composed = compose(&a, &b, &pool);
        let followed = follow(&a, &b, false, &pool);
        if a.old_len > 4096 || a.check(Some(&pool)).is_err() || b.check(Some(&pool)).is_err() {
            return Ok(());
        }
        let text = text_of_len(a.old_len, seed);
        let Ok(t1) = apply_to_text(&a, &text) else {
            return Ok(());
        };
        if a.new_len == b.old_len
            && let Ok(t2) = apply_to_text(&b, &t1)
        {
            let ab = composed.expect("composable");
            ab.check(None).unwrap();
            prop_assert_eq!(apply_to_text(&ab, &text).unwrap(), t2);
        }
        if a.old_len == b.old_len
            && apply_to_text(&b, &text).is_ok()
        {
            let afb = followed.expect("followable");
            let bfa = follow(&b, &a, true, &pool).expect("followable");
            afb.check(None).unwrap();
            bfa.check(None).unwrap();
            let via_a = apply_to_text(&afb, &t1).unwrap();
            let via_b = apply_to_text(&bfa, &apply_to_text(&b, &text).unwrap()).unwrap();
            prop_assert_eq!(via_a, via_b);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// An oddly shaped but accepted changeset `a` (from raw operations) composed with and
    /// transformed against ordinary ones: the algebra must hold for it too.
    #[test]
    fn raw_changesets_obey_the_algebra(
        a in raw_changeset(), pb in plan(), pc in plan(), style in plan(), seed in any::<u64>()
    ) {
        let pool = two_prop_pool();
        let Ok(a) = Changeset::parse(&a) else {
            return Ok(());
        };
        if a.check(Some(&pool)).is_err() {
            return Ok(());
        }
        let text = text_for(&a, seed);
        let Ok(t1) = apply_to_text(&a, &text) else {
            return Ok(());
        };
        let base = if text.ends_with('\n') {
            common::styled(&text, &style, &pool)
        } else {
            AText { text: text.clone(), attribs: easysync::make_attribution(&text) }
        };
        // Composition.
        let (b, _) = build(&t1, &pb, true);
        let ab = compose(&a, &b, &pool).unwrap();
        ab.check(Some(&pool)).unwrap();
        prop_assert_eq!(apply_to_text(&ab, &text).unwrap(), apply_to_text(&b, &t1).unwrap());
        let stepwise = easysync::apply_to_atext(&b, &easysync::apply_to_atext(&a, &base, &pool).unwrap(), &pool).unwrap();
        prop_assert_eq!(easysync::apply_to_atext(&ab, &base, &pool).unwrap(), stepwise);
        // Transformation.
        let (c, _) = build(&text, &pc, true);
        let afc = follow(&a, &c, false, &pool).unwrap();
        let cfa = follow(&c, &a, true, &pool).unwrap();
        afc.check(Some(&pool)).unwrap();
        cfa.check(Some(&pool)).unwrap();
        let via_a = easysync::apply_to_atext(&afc, &easysync::apply_to_atext(&a, &base, &pool).unwrap(), &pool).unwrap();
        let via_c = easysync::apply_to_atext(&cfa, &easysync::apply_to_atext(&c, &base, &pool).unwrap(), &pool).unwrap();
        prop_assert_eq!(via_a, via_c);
    }
}

#[test]
fn hostile_numbers_do_not_panic() {
    for s in [
        "Z:zzzzzzzzzzzzz>0$",
        "Z:zzzzzzzzzzzzzz>zzzzzzzzzzzzzz$",
        "Z:0>zzzzzzzzzzzzz+zzzzzzzzzzzzz$",
        "Z:5>0=zzzzzzzzzzzzzzzzzzzzzzzzzzzzz$",
        "Z:5>0*zzzzzzzzzzzzzzzzzzzzzzzz=1$",
        "Z:5>0|zzzzzzzzzzzz=1$",
        "Z:3>0|1=1|1=1$",
    ] {
        exercise(s, 0);
    }
    let pool = two_prop_pool();
    let big = Changeset::unpack("Z:zzzzzzzzzzzz>0=zzzzzzzzzzzz=zzzzzzzzzzzz$").unwrap();
    let _ = compose(&big, &Changeset::identity(big.new_len), &pool);
    let _ = follow(&big, &big, true, &pool);
    assert!(big.check(None).is_err());
}
