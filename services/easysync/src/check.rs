//! Validating a changeset before anyone applies it: the parts agree with each other, the form is
//! canonical, and (given the pad's pool) every attribute it names exists.

use crate::assembler::canonicalize_ops;
use crate::attribs::{decode_attribs, validate_attribs};
use crate::base36::num_to_string;
use crate::changeset::Changeset;
use crate::cursor::{CursorError, Utf16Cursor, count_newlines};
use crate::error::{Error, Result};
use crate::ops::OpCode;
use crate::pool::AttributePool;

impl Changeset {
    /// Checks everything that can be checked without the text: Etherpad's `checkRep` and more.
    ///
    /// - every operation covers at least one character and no more newlines than characters,
    ///   and has a well-formed attribute string;
    /// - keeps and removes stay inside the old text;
    /// - each insert takes characters from the char bank whose newline count is the one it
    ///   claims, and a multi-line insert ends with a newline;
    /// - the operations produce exactly `new_len`, and consume exactly the char bank;
    /// - the operations are in canonical form (what [`crate::SmartOpAssembler`] makes of them);
    /// - with `pool`, every attribute number is in the pool.
    ///
    /// Newline counts of keeps and removes need the text; applying checks them. Linear in the
    /// size of the changeset.
    pub fn check(&self, pool: Option<&AttributePool>) -> Result<()> {
        let mut bank = Utf16Cursor::new(&self.char_bank);
        let mut old_pos: usize = 0;
        let mut new_len: usize = 0;
        let overflow = || Error::BadNumber("length overflow".to_owned());
        for op in &self.ops {
            if op.chars == 0 {
                return Err(Error::EmptyOp(op.to_string()));
            }
            if op.lines > op.chars {
                return Err(Error::MoreLinesThanChars(op.to_string()));
            }
            validate_attribs(&op.attribs)?;
            match op.opcode {
                OpCode::Keep | OpCode::Remove => {
                    old_pos = old_pos.checked_add(op.chars).ok_or_else(overflow)?;
                    if old_pos > self.old_len {
                        return Err(Error::PastOldEnd {
                            op: op.to_string(),
                            old_len: self.old_len,
                        });
                    }
                    if op.opcode == OpCode::Keep {
                        new_len = new_len.checked_add(op.chars).ok_or_else(overflow)?;
                    }
                }
                OpCode::Insert => {
                    let text = bank.take(op.chars).map_err(|e| match e {
                        CursorError::PastEnd => Error::CharBankTooShort(op.to_string()),
                        CursorError::SplitsSurrogatePair => Error::SplitsSurrogatePair,
                    })?;
                    let actual = count_newlines(text);
                    if actual != op.lines {
                        return Err(Error::NewlineCountMismatch {
                            op: op.to_string(),
                            claimed: op.lines,
                            actual,
                        });
                    }
                    if op.lines > 0 && !text.ends_with('\n') {
                        return Err(Error::MultilineNotEndingInNewline(op.to_string()));
                    }
                    new_len = new_len.checked_add(op.chars).ok_or_else(overflow)?;
                }
            }
        }
        let actual = new_len
            .checked_add(self.old_len - old_pos)
            .ok_or_else(overflow)?;
        if actual != self.new_len {
            return Err(Error::LengthMismatch {
                claimed: self.new_len,
                actual,
            });
        }
        if !bank.is_at_end() {
            return Err(Error::ExcessCharBank(crate::text_length(bank.rest())));
        }
        let canonical = canonicalize_ops(self.ops.iter().cloned());
        if canonical != self.ops {
            let expected = Changeset {
                ops: canonical,
                ..self.clone()
            };
            return Err(Error::NotCanonical {
                expected: expected.to_string(),
            });
        }
        if let Some(pool) = pool {
            self.check_attributes_in(pool)?;
        }
        Ok(())
    }

    /// Checks that every attribute number the changeset uses is in `pool`.
    pub fn check_attributes_in(&self, pool: &AttributePool) -> Result<()> {
        for op in &self.ops {
            for n in decode_attribs(&op.attribs)? {
                if pool.get_attrib(n).is_none() {
                    return Err(Error::UnknownAttribute(num_to_string(n)));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(s: &str) -> Error {
        Changeset::parse(s).unwrap_err()
    }

    #[test]
    fn accepts_etherpad_vectors() {
        for s in [
            "Z:z>9*0=1=4-3+9=1|1-4-4+1*0+a$123456789abcdefghijk",
            "Z:7>3-1*0=1*1=1=3+4$abcd",
            "Z:g<4*1|1=6*1=5-4$",
            "Z:c>0|1=4=1*0=1$",
            "Z:11>7-2*t+1*u+1|2=b|2+a=2*b+1*o+1*t+1*0|1+1*b+1*u+1=3|1-3-6$tucream\npie\nbot\nbu",
            "Z:2>1*1+1*1=1$x",
            "Z:3>0*0|1=3$",
            "Z:bc<6|x=b4|2-6$",
        ] {
            Changeset::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
        }
    }

    #[test]
    fn refuses_each_kind_of_inconsistency() {
        assert!(matches!(err("Z:1>4+5$hello"), Error::LengthMismatch { .. }));
        assert!(matches!(err("Z:1>6+6$hello"), Error::CharBankTooShort(_)));
        assert!(matches!(err("Z:1>4+4$hello"), Error::ExcessCharBank(1)));
        assert!(matches!(
            err("Z:1>2+2$a\n"),
            Error::NewlineCountMismatch {
                claimed: 0,
                actual: 1,
                ..
            }
        ));
        assert!(matches!(
            err("Z:1>2|1+2$\na"),
            Error::MultilineNotEndingInNewline(_)
        ));
        assert!(matches!(err("Z:1>1=3+1$a"), Error::PastOldEnd { .. }));
        assert!(matches!(err("Z:1<2-2$"), Error::NegativeLength { .. }));
        assert!(matches!(err("Z:1<1-2$"), Error::PastOldEnd { .. }));
        assert!(matches!(err("Z:5>0|3=2$"), Error::MoreLinesThanChars(_)));
        assert!(matches!(err("Z:5>0=0$"), Error::EmptyOp(_)));
        assert!(matches!(err("Z:5>0*01=2$"), Error::BadAttribs(_)));
        assert!(matches!(err("Z:5>0=#$"), Error::BadOp { .. }));
        assert!(matches!(err("Z:5>0=5#$"), Error::BadOp { .. }));
    }

    #[test]
    fn refuses_non_canonical_forms() {
        for (s, canonical) in [
            ("Z:2>0+1-1$a", "Z:2>0-1+1$a"),
            ("Z:5>0=2=3$", "Z:5>0$"),
            ("Z:5>0=5$", "Z:5>0$"),
            ("Z:5>0-1-1+2$ab", "Z:5>0-2+2$ab"),
        ] {
            assert_eq!(
                err(s),
                Error::NotCanonical {
                    expected: canonical.to_owned()
                },
                "{s}"
            );
        }
        // Leading zeros and a missing `$` are caught by comparing the serialisation.
        assert!(matches!(err("Z:05>0$"), Error::NotCanonical { .. }));
        assert!(matches!(err("Z:5<1-01$"), Error::NotCanonical { .. }));
        assert!(matches!(err("Z:5<1|0-1$"), Error::NotCanonical { .. }));
        assert!(matches!(err("Z:5<0$"), Error::NotCanonical { .. }));
    }

    #[test]
    fn pool_check_finds_unknown_attributes() {
        let mut pool = AttributePool::new();
        pool.put_attrib("bold", "true");
        let cs = Changeset::parse("Z:2>1*1+1$x").unwrap();
        assert_eq!(
            cs.check(Some(&pool)),
            Err(Error::UnknownAttribute("1".into()))
        );
        let cs = Changeset::parse("Z:2>1*0+1$x").unwrap();
        cs.check(Some(&pool)).unwrap();
    }

    #[test]
    fn surrogate_pairs_count_two_and_cannot_be_split() {
        Changeset::parse("Z:1>2+2$😀").unwrap();
        assert_eq!(err("Z:1>2+1+1$😀"), Error::SplitsSurrogatePair);
        let split = Changeset {
            old_len: 1,
            new_len: 2,
            ops: vec![
                crate::Op::new(OpCode::Insert, 1, 0).with_attribs("*0"),
                crate::Op::new(OpCode::Insert, 1, 0),
            ],
            char_bank: "😀".into(),
        };
        assert_eq!(split.check(None), Err(Error::SplitsSurrogatePair));
    }
}
