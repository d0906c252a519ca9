//! Building a changeset step by step (keep this, remove that, insert this), canonicalised on
//! the way (Etherpad's `Changeset.builder`).

use crate::assembler::SmartOpAssembler;
use crate::changeset::Changeset;
use crate::error::{Error, Result};
use crate::ops::{Op, OpCode};
use crate::splice::ops_from_text;

/// Builds a changeset for a text of a known length, front to back.
///
/// Attribute arguments are attribute strings (`*0*1`); make them with
/// [`crate::make_attribs_string`] or [`crate::AttributeMap::to_attribs`].
#[derive(Debug, Clone)]
pub struct Builder {
    old_len: usize,
    assem: SmartOpAssembler,
    char_bank: String,
}

impl Builder {
    /// A builder for a changeset applying to a text of `old_len` UTF-16 code units.
    pub fn new(old_len: usize) -> Self {
        Self {
            old_len,
            assem: SmartOpAssembler::new(),
            char_bank: String::new(),
        }
    }

    /// Keeps `chars` characters containing `lines` newlines (if any, the last character is a
    /// newline), applying the attribute changes `attribs`.
    pub fn keep(&mut self, chars: usize, lines: usize, attribs: &str) -> &mut Self {
        self.assem
            .append(Op::new(OpCode::Keep, chars, lines).with_attribs(attribs));
        self
    }

    /// Keeps the characters of `text` (which must be the next characters of the old text).
    pub fn keep_text(&mut self, text: &str, attribs: &str) -> &mut Self {
        for op in ops_from_text(OpCode::Keep, text, attribs) {
            self.assem.append(op);
        }
        self
    }

    /// Inserts `text` with the attributes `attribs`.
    pub fn insert(&mut self, text: &str, attribs: &str) -> &mut Self {
        for op in ops_from_text(OpCode::Insert, text, attribs) {
            self.assem.append(op);
        }
        self.char_bank.push_str(text);
        self
    }

    /// Removes `chars` characters containing `lines` newlines.
    pub fn remove(&mut self, chars: usize, lines: usize) -> &mut Self {
        self.assem.append(Op::new(OpCode::Remove, chars, lines));
        self
    }

    /// Removes the characters of `text` (which must be the next characters of the old text).
    pub fn remove_text(&mut self, text: &str) -> &mut Self {
        for op in ops_from_text(OpCode::Remove, text, "") {
            self.assem.append(op);
        }
        self
    }

    /// The changeset, checked with [`Changeset::check`]: fails if the steps do not fit the old
    /// length or claim newlines where there are none.
    pub fn build(&self) -> Result<Changeset> {
        let mut assem = self.assem.clone();
        assem.end_document();
        let new_len = self
            .old_len
            .checked_add(assem.inserted())
            .and_then(|n| n.checked_sub(assem.removed()))
            .ok_or(Error::LengthMismatch {
                claimed: self.old_len,
                actual: assem.removed(),
            })?;
        let cs = Changeset {
            old_len: self.old_len,
            new_len,
            ops: assem.finish(),
            char_bank: self.char_bank.clone(),
        };
        cs.check(None)?;
        Ok(cs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::apply_to_text;
    use crate::cursor::text_length;

    /// Etherpad's easysync-mutations spec: mutation lists turned into changesets with a
    /// SmartOpAssembler, applied to the joined lines.
    enum M {
        Skip(usize, usize),
        Remove(usize, usize),
        Insert(&'static str),
    }

    fn mutations_to_changeset(old_len: usize, muts: &[M]) -> Changeset {
        let mut b = Builder::new(old_len);
        for m in muts {
            match *m {
                M::Skip(n, l) => b.keep(n, l, ""),
                M::Remove(n, l) => b.remove(n, l),
                M::Insert(t) => b.insert(t, ""),
            };
        }
        b.build().unwrap()
    }

    fn run(orig: &[&str], muts: &[M], correct: &[&str]) {
        let text: String = orig.concat();
        let cs = mutations_to_changeset(text_length(&text), muts);
        assert_eq!(apply_to_text(&cs, &text).unwrap(), correct.concat());
    }

    use M::{Insert as I, Remove as R, Skip as S};
    const FRUIT: &[&str] = &["apple\n", "banana\n", "cabbage\n", "duffle\n", "eggplant\n"];

    #[test]
    fn etherpad_mutation_vectors() {
        let expect1 = &[
            "tuple\n",
            "banana\n",
            "cream\n",
            "pie\n",
            "cabot\n",
            "bubba\n",
            "eggplant\n",
        ];
        run(
            FRUIT,
            &[
                R(1, 0),
                I("tu"),
                R(1, 0),
                S(4, 1),
                S(7, 1),
                I("cream\npie\n"),
                S(2, 0),
                I("bot"),
                I("\n"),
                I("bu"),
                S(3, 0),
                R(3, 1),
                R(6, 0),
            ],
            expect1,
        );
        run(
            FRUIT,
            &[
                R(1, 0),
                R(1, 0),
                I("tu"),
                S(11, 2),
                I("cream\npie\n"),
                S(2, 0),
                I("bot"),
                I("\n"),
                I("bu"),
                S(3, 0),
                R(3, 1),
                R(6, 0),
            ],
            expect1,
        );
        run(
            FRUIT,
            &[R(6, 1), S(15, 2), S(6, 0), R(1, 1), R(8, 0), S(1, 1)],
            &["banana\n", "cabbage\n", "duffle\n"],
        );
        run(
            &["15\n"],
            &[S(1, 0), I("\n2\n3\n4\n"), S(2, 1)],
            &["1\n", "2\n", "3\n", "4\n", "5\n"],
        );
        run(
            &["1\n", "2\n", "3\n", "4\n", "5\n"],
            &[S(1, 0), R(7, 4), S(2, 1)],
            &["15\n"],
        );
        run(
            &["123\n", "abc\n", "def\n", "ghi\n", "xyz\n"],
            &[I("0"), S(4, 1), S(4, 1), R(8, 2), S(4, 1)],
            &["0123\n", "abc\n", "xyz\n"],
        );
        run(
            &["\n", "fun\n", "\n"],
            &[R(1, 1), S(3, 0), R(2, 2), I("c")],
            &["func"],
        );
        run(
            &["\n", "fun\n", "\n"],
            &[R(1, 1), S(3, 0), R(2, 2), I("c"), I("a\n"), I("c")],
            &["funca\n", "c"],
        );
        run(
            &["\n", "fun\n", "\n"],
            &[R(1, 1), S(2, 0), R(3, 2), I("z")],
            &["fuz"],
        );
        run(&["\n"], &[R(1, 1), I("c")], &["c"]);
        run(&["\n"], &[R(1, 1), I("a\n"), I("c")], &["a\n", "c"]);
        run(
            &["\n", "fun\n", "\n"],
            &[R(1, 1), S(4, 1), R(1, 1), I("c")],
            &["fun\n", "c"],
        );
    }

    #[test]
    fn builds_with_text_helpers() {
        let mut b = Builder::new(6);
        b.keep_text("he", "").remove_text("ll").insert("LL", "*0");
        let cs = b.build().unwrap();
        assert_eq!(cs.to_string(), "Z:6>0=2-2*0+2$LL");
        assert_eq!(apply_to_text(&cs, "hello\n").unwrap(), "heLLo\n");
    }

    #[test]
    fn build_refuses_steps_that_do_not_fit() {
        let mut b = Builder::new(2);
        b.remove(3, 0);
        assert!(b.build().is_err());
        let mut b = Builder::new(2);
        b.insert("a\nb", "").keep(2, 3, "*0");
        assert!(b.build().is_err());
    }
}
