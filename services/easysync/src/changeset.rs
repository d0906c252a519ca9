//! The changeset and its wire format, `Z:<old len><'>'|'<'><len change><ops>$<char bank>`
//! (all numbers base 36), e.g. `Z:1>5+5$hello`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::base36::{is_digit, parse_num, push_num};
use crate::error::{Error, Result};
use crate::ops::{Op, OpCode, parse_ops};

/// A change from a text of length `old_len` to one of length `new_len`.
///
/// Lengths are UTF-16 code units (JavaScript string lengths). The operations walk the old text
/// from its start; whatever they do not reach is kept unchanged. Inserted characters come, in
/// order, from `char_bank`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Changeset {
    /// Length of the text the changeset applies to.
    pub old_len: usize,
    /// Length of the text it produces.
    pub new_len: usize,
    /// The operations, in document order.
    pub ops: Vec<Op>,
    /// The inserted characters, concatenated.
    pub char_bank: String,
}

impl Changeset {
    /// Reads the wire format without checking that the parts agree (Etherpad's `unpack` plus
    /// operation parsing). Refuses anything that does not follow the grammar; never panics.
    ///
    /// Use [`Changeset::parse`] for untrusted input.
    pub fn unpack(s: &str) -> Result<Self> {
        let rest = s.strip_prefix("Z:").ok_or(Error::BadHeader)?;
        let bytes = rest.as_bytes();
        let old_digits = bytes.iter().take_while(|&&b| is_digit(b)).count();
        if old_digits == 0 {
            return Err(Error::BadHeader);
        }
        let old_len = parse_num(rest.get(..old_digits).ok_or(Error::BadHeader)?)?;
        let grows = match bytes.get(old_digits) {
            Some(b'>') => true,
            Some(b'<') => false,
            _ => return Err(Error::BadHeader),
        };
        let after_sign = rest.get(old_digits + 1..).ok_or(Error::BadHeader)?;
        let change_digits = after_sign.bytes().take_while(|&b| is_digit(b)).count();
        if change_digits == 0 {
            return Err(Error::BadHeader);
        }
        let change = parse_num(after_sign.get(..change_digits).ok_or(Error::BadHeader)?)?;
        let new_len = if grows {
            old_len
                .checked_add(change)
                .ok_or_else(|| Error::BadNumber(format!("{old_len} + {change}")))?
        } else {
            old_len.checked_sub(change).ok_or(Error::NegativeLength {
                old_len,
                shrink: change,
            })?
        };
        let body = after_sign.get(change_digits..).unwrap_or("");
        let (ops, char_bank) = match body.find('$') {
            Some(i) => (body.get(..i).unwrap_or(""), body.get(i + 1..).unwrap_or("")),
            None => (body, ""),
        };
        Ok(Self {
            old_len,
            new_len,
            ops: parse_ops(ops)?,
            char_bank: char_bank.to_owned(),
        })
    }

    /// Parses untrusted input: the grammar, the consistency checks of [`Changeset::check`]
    /// (without a pool) and Etherpad's canonical form (the input must be exactly what
    /// its `Display` form writes back). Etherpad's server runs the same `checkRep` on every
    /// changeset a client sends.
    pub fn parse(s: &str) -> Result<Self> {
        let cs = Self::unpack(s)?;
        cs.check(None)?;
        let canonical = cs.to_string();
        if canonical != s {
            return Err(Error::NotCanonical {
                expected: canonical,
            });
        }
        Ok(cs)
    }

    /// The changeset that changes nothing in a text of length `len` (`Z:<len>>0$`).
    pub fn identity(len: usize) -> Self {
        Self {
            old_len: len,
            new_len: len,
            ops: Vec::new(),
            char_bank: String::new(),
        }
    }

    /// Whether the changeset changes nothing (no operations, same length).
    pub fn is_identity(&self) -> bool {
        self.ops.is_empty() && self.old_len == self.new_len
    }

    /// Characters the changeset inserts (sum of insert lengths).
    pub fn inserted_len(&self) -> usize {
        self.ops
            .iter()
            .filter(|op| op.opcode == OpCode::Insert)
            .fold(0usize, |n, op| n.saturating_add(op.chars))
    }
}

impl fmt::Display for Changeset {
    /// Etherpad's `pack`: the operations are written as they are (producers in this crate
    /// always canonicalise them first).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(16 + self.ops.len() * 4 + self.char_bank.len());
        out.push_str("Z:");
        push_num(&mut out, self.old_len);
        if self.new_len >= self.old_len {
            out.push('>');
            push_num(&mut out, self.new_len - self.old_len);
        } else {
            out.push('<');
            push_num(&mut out, self.old_len - self.new_len);
        }
        for op in &self.ops {
            op.write_to(&mut out);
        }
        out.push('$');
        out.push_str(&self.char_bank);
        f.write_str(&out)
    }
}

impl FromStr for Changeset {
    type Err = Error;

    /// Same as [`Changeset::parse`].
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

impl Serialize for Changeset {
    /// A changeset is a JSON string in Etherpad's records.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Changeset {
    /// Reads a JSON string with [`Changeset::parse`].
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let s = String::deserialize(deserializer)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpacks_header_ops_and_bank() {
        let cs = Changeset::unpack("Z:1>5+5$hello").unwrap();
        assert_eq!(cs.old_len, 1);
        assert_eq!(cs.new_len, 6);
        assert_eq!(cs.ops, vec![Op::new(OpCode::Insert, 5, 0)]);
        assert_eq!(cs.char_bank, "hello");
        assert_eq!(cs.to_string(), "Z:1>5+5$hello");

        let cs = Changeset::unpack("Z:g<4*1|1=6*1=5-4$").unwrap();
        assert_eq!((cs.old_len, cs.new_len), (16, 12));
        assert_eq!(cs.to_string(), "Z:g<4*1|1=6*1=5-4$");
    }

    #[test]
    fn char_bank_may_contain_dollars() {
        let cs = Changeset::parse("Z:1>2+2$$$").unwrap();
        assert_eq!(cs.char_bank, "$$");
    }

    #[test]
    fn refuses_bad_headers() {
        for bad in [
            "", "Z", "Z:", "Z:>1$", "Z:1", "Z:1=", "Z:1>", "Z:1>$", "z:1>0$", "Z:1<2$", "X:1>0$",
            " Z:1>0$",
        ] {
            assert!(Changeset::unpack(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn identity_is_canonical() {
        let id = Changeset::identity(5);
        assert_eq!(id.to_string(), "Z:5>0$");
        assert!(id.is_identity());
        assert_eq!(Changeset::parse("Z:5>0$").unwrap(), id);
        assert!(Changeset::parse("Z:5<0$").is_err());
        assert!(Changeset::parse("Z:5>0").is_err());
    }

    #[test]
    fn serde_is_a_string() {
        let cs = Changeset::parse("Z:1>5+5$hello").unwrap();
        assert_eq!(serde_json::to_string(&cs).unwrap(), r#""Z:1>5+5$hello""#);
        let back: Changeset = serde_json::from_str(r#""Z:1>5+5$hello""#).unwrap();
        assert_eq!(back, cs);
        assert!(serde_json::from_str::<Changeset>(r#""Z:1>5+4$hello""#).is_err());
    }
}
