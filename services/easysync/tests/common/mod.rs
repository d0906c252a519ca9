//! Generators shared by the property and fuzz tests: random pad texts and random valid
//! changesets for a given text, in the spirit of Etherpad's `easysync-helper.js`
//! (`randomMultiline`, `randomTestChangeset`, `randomTwoPropAttribs`).
#![allow(dead_code)]

use easysync::{AText, AttributePool, Builder, Changeset};
use proptest::prelude::*;

/// Characters of generated texts: ASCII, newlines, two-byte and three-byte characters and an
/// astral character (two UTF-16 units) so lengths in UTF-16 units are exercised.
const ALPHABET: &[char] = &['a', 'b', 'c', 'x', ' ', '\n', '\n', 'é', '日', '😀', '*'];

/// A pad text: up to 60 characters, always ending with a newline.
pub fn pad_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 0..60).prop_map(|chars| {
        let mut s: String = chars.into_iter().collect();
        s.push('\n');
        s
    })
}

/// A short inserted string (may contain newlines and astral characters).
pub fn inserted_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(ALPHABET), 1..8)
        .prop_map(|chars| chars.into_iter().collect())
}

/// One step of a random edit.
#[derive(Debug, Clone)]
pub enum Step {
    /// Keep up to this many characters, with the attribute choice.
    Keep(usize, u8),
    /// Remove up to this many characters.
    Remove(usize),
    /// Insert this text with the attribute choice.
    Insert(String, u8),
}

/// A random edit plan; interpreted against a text by [`build`].
pub fn plan() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        3 => (1usize..12, any::<u8>()).prop_map(|(n, a)| Step::Keep(n, a)),
        2 => (1usize..12).prop_map(Step::Remove),
        2 => (inserted_text(), any::<u8>()).prop_map(|(t, a)| Step::Insert(t, a)),
    ];
    prop::collection::vec(step, 0..12)
}

/// The pool Etherpad's random tests use: `apple=""`, `apple=true`, `banana=""`, `banana=true`.
pub fn two_prop_pool() -> AttributePool {
    let mut p = AttributePool::new();
    for (k, v) in [
        ("apple", ""),
        ("apple", "true"),
        ("banana", ""),
        ("banana", "true"),
    ] {
        p.put_attrib(k, v);
    }
    p
}

/// Attribute changes a keep may carry (canonical order: apple before banana).
fn keep_attribs(choice: u8) -> &'static str {
    const KEEP: &[&str] = &[
        "", "", "", "*0", "*1", "*2", "*3", "*0*2", "*0*3", "*1*2", "*1*3",
    ];
    KEEP.get(usize::from(choice) % KEEP.len())
        .copied()
        .unwrap_or("")
}

/// Attributes an insert may carry.
fn insert_attribs(choice: u8) -> &'static str {
    const INSERT: &[&str] = &["", "", "*1", "*3", "*1*3"];
    INSERT
        .get(usize::from(choice) % INSERT.len())
        .copied()
        .unwrap_or("")
}

/// Interprets `plan` against `text`, never touching its final newline: returns the changeset
/// and the text it must produce. With `with_attribs` false, no attributes are used.
pub fn build(text: &str, plan: &[Step], with_attribs: bool) -> (Changeset, String) {
    let body: Vec<char> = text.strip_suffix('\n').unwrap_or(text).chars().collect();
    let mut pos = 0;
    let mut b = Builder::new(easysync::text_length(text));
    let mut expected = String::new();
    for step in plan {
        match step {
            Step::Keep(n, a) => {
                let end = (pos + n).min(body.len());
                let piece: String = body[pos..end].iter().collect();
                let attribs = if with_attribs { keep_attribs(*a) } else { "" };
                b.keep_text(&piece, attribs);
                expected.push_str(&piece);
                pos = end;
            }
            Step::Remove(n) => {
                let end = (pos + n).min(body.len());
                let piece: String = body[pos..end].iter().collect();
                b.remove_text(&piece);
                pos = end;
            }
            Step::Insert(t, a) => {
                let attribs = if with_attribs { insert_attribs(*a) } else { "" };
                b.insert(t, attribs);
                expected.push_str(t);
            }
        }
    }
    expected.extend(&body[pos..]);
    expected.push('\n');
    (b.build().expect("generated changesets are valid"), expected)
}

/// A pad with attributes: `text` styled by a random attribute-only changeset.
pub fn styled(text: &str, style_plan: &[Step], pool: &AttributePool) -> AText {
    let keeps_only: Vec<Step> = style_plan
        .iter()
        .filter(|s| matches!(s, Step::Keep(..)))
        .cloned()
        .collect();
    let (stylifier, same) = build(text, &keeps_only, true);
    assert_eq!(same, text);
    AText::new(text)
        .unwrap()
        .apply(&stylifier, pool)
        .expect("styling applies")
}
