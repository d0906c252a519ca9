//! libFuzzer target: arbitrary bytes as a changeset. Nothing may panic; an accepted changeset
//! must round-trip, and must apply to a text of its old length producing its new length unless
//! the text's newlines disagree with it.
#![no_main]

use easysync::{AttributePool, Changeset, Error, apply_to_text, compose, follow, text_length};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let s = String::from_utf8_lossy(data);
    let _ = easysync::parse_ops(&s);
    let Ok(cs) = Changeset::parse(&s) else {
        return;
    };
    assert_eq!(cs.to_string(), s);
    cs.check(None).expect("parse implies check");
    if cs.old_len > 1 << 16 {
        return;
    }
    // Two texts of the old length: one of letters, one with newlines where the changeset's
    // keeps and removes expect them.
    let mut shaped = String::new();
    for op in &cs.ops {
        if op.opcode != easysync::OpCode::Insert {
            let plain = op.chars.saturating_sub(op.lines);
            shaped.extend(std::iter::repeat_n('a', plain));
            shaped.extend(std::iter::repeat_n('\n', op.chars - plain));
        }
    }
    let rest = cs.old_len.saturating_sub(text_length(&shaped));
    shaped.extend(std::iter::repeat_n('a', rest));
    let letters: String = std::iter::repeat_n('a', cs.old_len).collect();
    for text in [letters, shaped] {
        match apply_to_text(&cs, &text) {
            Ok(out) => assert_eq!(text_length(&out), cs.new_len),
            Err(
                Error::NewlineCountMismatch { .. }
                | Error::MultilineNotEndingInNewline(_)
                | Error::SplitsSurrogatePair,
            ) => {}
            Err(e) => panic!("accepted changeset {s:?} failed to apply: {e}"),
        }
    }
    let pool = AttributePool::new();
    if let Ok(c) = compose(&cs, &Changeset::identity(cs.new_len), &pool) {
        c.check(None).expect("composition is valid");
    }
    if let Ok(f) = follow(&cs, &cs, false, &pool) {
        f.check(None).expect("transformation is valid");
    }
});
