//! Etherpad's easysync: changesets, attribute pools and attributed text; parse, check, apply,
//! compose, follow. Pure, no I/O.
//!
//! A pad is an attributed text ([`AText`]): a text that always ends with `\n` plus an
//! attribution saying which attributes (numbers into the pad's [`AttributePool`]) each run of
//! characters has. Every edit is a [`Changeset`], written `Z:<old len><'>'|'<'><change><ops>$<chars>`
//! with base-36 numbers, e.g. `Z:1>5+5$hello`.
//!
//! The behaviour, the wire format and the canonical form follow Etherpad-lite's `Changeset.js`
//! exactly, so changesets and records move between Etherpad and this crate unchanged:
//!
//! - lengths and positions are UTF-16 code units, as in JavaScript ([`text_length`]); a position
//!   inside a surrogate pair is refused ([`Error::SplitsSurrogatePair`]);
//! - every changeset this crate produces is canonical (run through a [`SmartOpAssembler`]), so
//!   its [`Display`](std::fmt::Display) form is what Etherpad's `pack` writes;
//! - [`Changeset::parse`] refuses anything Etherpad's `checkRep` refuses, and a little more
//!   (keeps past the end, leading zeros in attribute numbers). Nothing here panics on input.
//!
//! Complexity: parsing, checking and applying are single passes, linear in the text plus the
//! changeset; composing and following are linear in the two changesets. Attribute lookups are
//! hash or B-tree lookups in the pool.
//!
//! ```
//! use easysync::{AText, AttributePool, Changeset, apply_to_atext, compose, follow};
//!
//! let pool = AttributePool::new();
//! let pad = AText::new("hello\n")?;
//! let a = Changeset::parse("Z:6>6=5+6$ world")?; // "hello world\n"
//! let b = Changeset::parse("Z:6>1+1$>")?; // ">hello\n", concurrent with a
//! let b_after_a = follow(&a, &b, false, &pool)?;
//! let both = compose(&a, &b_after_a, &pool)?;
//! assert_eq!(apply_to_atext(&both, &pad, &pool)?.text, ">hello world\n");
//! # Ok::<(), easysync::Error>(())
//! ```
#![deny(missing_docs)]

mod apply;
mod assembler;
mod atext;
mod attribs;
mod attribute_map;
mod attribution;
mod base36;
mod builder;
mod changeset;
mod check;
mod compose;
mod cursor;
mod error;
mod follow;
mod inverse;
mod line_marker;
mod ops;
mod pad_text;
mod plain_text;
mod pool;
mod pool_move;
mod range_follow;
mod splice;
mod zip;

pub use apply::{apply_to_attribution, apply_to_text};
pub use assembler::{MergingOpAssembler, SmartOpAssembler, canonicalize_ops};
pub use atext::{AText, apply_to_atext, make_atext};
pub use attribs::{decode_attribs, encode_attribs};
pub use attribute_map::{AttributeMap, make_attribs_string};
pub use attribution::{
    join_attribution_lines, make_attribution, split_attribution_lines, subattribution,
};
pub use base36::{num_to_string, parse_num};
pub use builder::Builder;
pub use changeset::Changeset;
pub use compose::{compose, compose_attributes};
pub use cursor::text_length;
pub use error::{Error, Result};
pub use follow::{follow, follow_attributes};
pub use inverse::inverse;
pub use line_marker::{Line, analyze_line};
pub use ops::{Op, OpCode, parse_ops, serialize_ops};
pub use pad_text::{append_text, clean_text, set_text, splice_text};
pub use plain_text::atext_to_plain_text;
pub use pool::AttributePool;
pub use pool_move::{
    filter_attrib_numbers, move_attribution_to_new_pool, move_ops_to_new_pool, prepare_for_wire,
};
pub use range_follow::{character_range_follow, to_splices};
pub use splice::{delete_range, insert_at, make_splice, ops_from_text};
