//! Putting operations into Etherpad's canonical form: merging neighbours, dropping empty
//! operations and the final plain keep, and ordering removes before inserts. Two changesets that
//! do the same thing serialise to the same string only because every producer goes through this.

use std::mem;

use crate::ops::{Op, OpCode};

/// Merges consecutive mergeable operations, ignores empty ones and (on `end_document`) drops a
/// final keep without attributes. Does not reorder. Etherpad's `MergingOpAssembler`.
///
/// Operations with the same opcode and attributes merge, except that text after the last
/// newline stays a separate operation until a later operation with a newline absorbs it:
/// `[xxx\n, yyy]` stays two operations, `[xxx\n, yyy, zzz\n]` becomes one.
#[derive(Debug, Clone, Default)]
pub struct MergingOpAssembler {
    out: Vec<Op>,
    buf: Option<Op>,
    chars_after_newline: usize,
}

impl MergingOpAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an operation, merging it into the previous one when possible.
    pub fn append(&mut self, op: Op) {
        if op.chars == 0 {
            return;
        }
        if let Some(buf) = self.buf.as_mut()
            && buf.opcode == op.opcode
            && buf.attribs == op.attribs
        {
            if op.lines > 0 {
                // The buffered op, any text after its newline and this op merge into one op.
                buf.chars = buf
                    .chars
                    .saturating_add(self.chars_after_newline)
                    .saturating_add(op.chars);
                buf.lines = buf.lines.saturating_add(op.lines);
                self.chars_after_newline = 0;
            } else if buf.lines == 0 {
                buf.chars = buf.chars.saturating_add(op.chars);
            } else {
                self.chars_after_newline = self.chars_after_newline.saturating_add(op.chars);
            }
            return;
        }
        self.flush(false);
        self.buf = Some(op);
    }

    /// Ends the document: a final keep without attributes is left implicit.
    pub fn end_document(&mut self) {
        self.flush(true);
    }

    /// The assembled operations.
    pub fn finish(mut self) -> Vec<Op> {
        self.flush(false);
        self.out
    }

    /// Takes the operations assembled so far and starts over.
    pub(crate) fn take(&mut self) -> Vec<Op> {
        self.flush(false);
        self.chars_after_newline = 0;
        mem::take(&mut self.out)
    }

    fn flush(&mut self, end_document: bool) {
        let Some(buf) = self.buf.take() else {
            return;
        };
        let extra = mem::take(&mut self.chars_after_newline);
        if end_document && buf.opcode == OpCode::Keep && buf.attribs.is_empty() {
            return; // final merged keep, leave it implicit
        }
        if extra > 0 {
            let tail = Op {
                opcode: buf.opcode,
                chars: extra,
                lines: 0,
                attribs: buf.attribs.clone(),
            };
            self.out.push(buf);
            self.out.push(tail);
        } else {
            self.out.push(buf);
        }
    }
}

/// Canonicalises a looser sequence of operations: merges, drops empty operations, drops the
/// final plain keep and orders each run of removes and inserts as all removes then all inserts.
/// Etherpad's `SmartOpAssembler`; every changeset this crate produces is assembled by it.
#[derive(Debug, Clone, Default)]
pub struct SmartOpAssembler {
    minus: MergingOpAssembler,
    plus: MergingOpAssembler,
    keep: MergingOpAssembler,
    out: Vec<Op>,
    last: Option<OpCode>,
    inserted: usize,
    removed: usize,
}

impl SmartOpAssembler {
    /// An empty assembler.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an operation.
    pub fn append(&mut self, op: Op) {
        if op.chars == 0 {
            return;
        }
        let opcode = op.opcode;
        match opcode {
            OpCode::Remove => {
                if self.last == Some(OpCode::Keep) {
                    self.flush_keeps();
                }
                self.removed = self.removed.saturating_add(op.chars);
                self.minus.append(op);
            }
            OpCode::Insert => {
                if self.last == Some(OpCode::Keep) {
                    self.flush_keeps();
                }
                self.inserted = self.inserted.saturating_add(op.chars);
                self.plus.append(op);
            }
            OpCode::Keep => {
                if self.last != Some(OpCode::Keep) {
                    self.flush_plus_minus();
                }
                self.keep.append(op);
            }
        }
        self.last = Some(opcode);
    }

    /// Ends the document: a final keep without attributes is left implicit.
    pub fn end_document(&mut self) {
        self.keep.end_document();
    }

    /// Characters inserted so far (sum of insert lengths).
    pub fn inserted(&self) -> usize {
        self.inserted
    }

    /// Characters removed so far (sum of remove lengths).
    pub fn removed(&self) -> usize {
        self.removed
    }

    /// The assembled operations.
    pub fn finish(mut self) -> Vec<Op> {
        self.flush_plus_minus();
        self.flush_keeps();
        self.out
    }

    fn flush_keeps(&mut self) {
        let keeps = self.keep.take();
        self.out.extend(keeps);
    }

    fn flush_plus_minus(&mut self) {
        let minus = self.minus.take();
        self.out.extend(minus);
        let plus = self.plus.take();
        self.out.extend(plus);
    }
}

/// Runs operations through a [`SmartOpAssembler`] and ends the document.
pub fn canonicalize_ops(ops: impl IntoIterator<Item = Op>) -> Vec<Op> {
    let mut assem = SmartOpAssembler::new();
    for op in ops {
        assem.append(op);
    }
    assem.end_document();
    assem.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{parse_ops, serialize_ops};

    fn smart(s: &str) -> String {
        serialize_ops(&canonicalize_ops(parse_ops(s).unwrap()))
    }

    #[test]
    fn smart_assembler_keeps_etherpad_canonical_vector() {
        // Etherpad's easysync-assembler spec "smartOpAssembler".
        let x = "-c*3*4+6|3=az*asdf0*1*2*3+1=1-1+1*0+1=1-1+1|c=c-1";
        assert_eq!(smart(x), x);
    }

    #[test]
    fn smart_assembler_merges_reorders_and_drops_final_keep() {
        assert_eq!(smart("+1-1"), "-1+1");
        assert_eq!(smart("+1-1+1"), "-1+2");
        assert_eq!(smart("=2=3"), "");
        assert_eq!(smart("=5-1=3"), "=5-1");
        assert_eq!(smart("*0=2=3"), "*0=2");
        assert_eq!(smart("=3*0=2"), "=3*0=2");
        assert_eq!(smart("+0=0-0"), "");
        assert_eq!(smart("|1+4+2"), "|1+4+2");
        assert_eq!(smart("|1+4+2|1+3"), "|2+9");
        assert_eq!(smart("|1=2=3"), "");
    }

    #[test]
    fn merging_assembler_keeps_text_after_newline_separate() {
        let mut a = MergingOpAssembler::new();
        a.append(Op::new(OpCode::Insert, 4, 1));
        a.append(Op::new(OpCode::Insert, 3, 0));
        assert_eq!(serialize_ops(&a.clone().finish()), "|1+4+3");
        a.append(Op::new(OpCode::Insert, 4, 1));
        assert_eq!(serialize_ops(&a.finish()), "|2+b");
    }
}
