//! One changeset operation (`*0*1|2+a`): keep, insert or remove a run of characters, with the
//! attributes it applies; and reading / writing a sequence of them.

use std::fmt;

use crate::base36::{is_digit, parse_num, push_num};
use crate::error::{Error, Result};

/// What an operation does to the text it walks over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OpCode {
    /// `=`: keep the next characters of the old text (and apply attribute changes to them).
    Keep,
    /// `+`: insert characters taken from the changeset's char bank.
    Insert,
    /// `-`: remove the next characters of the old text.
    Remove,
}

impl OpCode {
    /// The character Etherpad writes for this opcode.
    pub fn symbol(self) -> char {
        match self {
            OpCode::Keep => '=',
            OpCode::Insert => '+',
            OpCode::Remove => '-',
        }
    }

    fn from_byte(b: u8) -> Option<Self> {
        match b {
            b'=' => Some(OpCode::Keep),
            b'+' => Some(OpCode::Insert),
            b'-' => Some(OpCode::Remove),
            _ => None,
        }
    }
}

/// An operation of a changeset or of an attribution.
///
/// `chars` and `lines` are counted in UTF-16 code units and newlines. If `lines > 0` the last of
/// the `chars` characters is a newline. `attribs` is an attribute string such as `*0*3`: numbers
/// into the pad's attribute pool.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Op {
    /// What the operation does.
    pub opcode: OpCode,
    /// How many characters (UTF-16 code units) it covers.
    pub chars: usize,
    /// How many of those characters are newlines.
    pub lines: usize,
    /// The attribute string (`*n` repeated, base-36 pool numbers), possibly empty.
    pub attribs: String,
}

impl Op {
    /// An operation without attributes.
    pub fn new(opcode: OpCode, chars: usize, lines: usize) -> Self {
        Self {
            opcode,
            chars,
            lines,
            attribs: String::new(),
        }
    }

    /// The same operation with the given attribute string.
    pub fn with_attribs(mut self, attribs: impl Into<String>) -> Self {
        self.attribs = attribs.into();
        self
    }

    /// Appends the serialised operation to `out`.
    pub(crate) fn write_to(&self, out: &mut String) {
        out.push_str(&self.attribs);
        if self.lines > 0 {
            out.push('|');
            push_num(out, self.lines);
        }
        out.push(self.opcode.symbol());
        push_num(out, self.chars);
    }
}

impl fmt::Display for Op {
    /// Etherpad's `Op.toString()`: attributes, `|lines` when non-zero, opcode, chars.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = String::new();
        self.write_to(&mut s);
        f.write_str(&s)
    }
}

/// Serialises operations exactly as written, without merging (Etherpad's `OpAssembler`).
pub fn serialize_ops(ops: &[Op]) -> String {
    let mut out = String::with_capacity(ops.len() * 4);
    for op in ops {
        op.write_to(&mut out);
    }
    out
}

/// Parses a whole string of operations (no header, no `$`).
///
/// Grammar per operation: `(\*[0-9a-z]+)*(\|[0-9a-z]+)?[-+=][0-9a-z]+`. Anything else is an
/// error; never panics. Linear in the input.
pub fn parse_ops(s: &str) -> Result<Vec<Op>> {
    let bytes = s.as_bytes();
    let mut ops = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        let bad = |at: usize| Error::BadOp {
            at,
            found: s.get(at..).unwrap_or("").chars().take(20).collect(),
        };
        while bytes.get(i) == Some(&b'*') {
            let digits = scan_digits(bytes, i + 1);
            if digits == 0 {
                return Err(bad(i));
            }
            i += 1 + digits;
        }
        let attribs = s.get(start..i).ok_or_else(|| bad(start))?;
        let mut lines = 0;
        if bytes.get(i) == Some(&b'|') {
            let digits = scan_digits(bytes, i + 1);
            if digits == 0 {
                return Err(bad(i));
            }
            lines = parse_num(s.get(i + 1..i + 1 + digits).unwrap_or(""))?;
            i += 1 + digits;
        }
        let opcode = bytes
            .get(i)
            .copied()
            .and_then(OpCode::from_byte)
            .ok_or_else(|| bad(i))?;
        let digits = scan_digits(bytes, i + 1);
        if digits == 0 {
            return Err(bad(i));
        }
        let chars = parse_num(s.get(i + 1..i + 1 + digits).unwrap_or(""))?;
        i += 1 + digits;
        ops.push(Op {
            opcode,
            chars,
            lines,
            attribs: attribs.to_owned(),
        });
    }
    Ok(ops)
}

/// Number of base-36 digit bytes starting at `from`.
fn scan_digits(bytes: &[u8], from: usize) -> usize {
    bytes
        .get(from..)
        .map(|rest| rest.iter().take_while(|&&b| is_digit(b)).count())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    // From Etherpad's easysync-assembler spec ("opAssembler").
    const ETHERPAD_OPS: &str = "-c*3*4+6|3=az*asdf0*1*2*3+1=1-1+1*0+1=1-1+1|c=c-1";

    #[test]
    fn parses_and_reserialises_etherpad_vector_verbatim() {
        let ops = parse_ops(ETHERPAD_OPS).unwrap();
        assert_eq!(ops.len(), 13);
        assert_eq!(ops[0], Op::new(OpCode::Remove, 12, 0));
        assert_eq!(ops[1], Op::new(OpCode::Insert, 6, 0).with_attribs("*3*4"));
        assert_eq!(ops[2], Op::new(OpCode::Keep, 10 * 36 + 35, 3));
        assert_eq!(ops[3].attribs, "*asdf0*1*2*3");
        assert_eq!(serialize_ops(&ops), ETHERPAD_OPS);
    }

    #[test]
    fn rejects_garbage() {
        for bad in [
            "x", "+", "*+1", "|+1", "|1", "*1", "+1$", "+1 ", "=A", "+1\n",
        ] {
            assert!(parse_ops(bad).is_err(), "{bad:?} should be refused");
        }
        assert_eq!(parse_ops("").unwrap(), vec![]);
    }

    #[test]
    fn display_omits_zero_lines() {
        assert_eq!(Op::new(OpCode::Keep, 36, 0).to_string(), "=10");
        assert_eq!(
            Op::new(OpCode::Insert, 4, 1).with_attribs("*0").to_string(),
            "*0|1+4"
        );
    }
}
