//! Revision ids: `generation-digest`, parsed, ordered and computed.
//!
//! The digest of a new revision is computed the way CouchDB does in spirit (CouchDB hashes an
//! Erlang term we cannot reproduce): the lower-case hex MD5 of `deleted flag ‖ NUL ‖ parent rev
//! id (empty for a root) ‖ NUL ‖ body JSON text`. The same edit of the same parent therefore
//! gets the same rev id on every server, as in CouchDB, so a retried write is recognised.

use md5::{Digest, Md5};
use std::cmp::Ordering;
use std::fmt;

/// A revision id: its generation (depth in the tree, from 1) and its digest.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RevId {
    /// The depth of the revision: a root is 1, its child 2, ...
    pub generation: u64,
    /// The digest, any non-empty text without `-` prefix ambiguity (usually 32 hex digits).
    pub digest: String,
}

/// Why a rev id was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid rev format `{0}`: expected `generation-digest` with a generation of 1 or more")]
pub struct BadRev(pub String);

impl RevId {
    /// Parses `N-digest` (N ≥ 1, digest non-empty).
    pub fn parse(text: &str) -> Result<RevId, BadRev> {
        let bad = || BadRev(text.to_owned());
        let (generation, digest) = text.split_once('-').ok_or_else(bad)?;
        let generation: u64 = generation.parse().map_err(|_| bad())?;
        if generation == 0
            || digest.is_empty()
            || digest.chars().any(|c| c.is_control())
            || !text.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(bad());
        }
        Ok(RevId {
            generation,
            digest: digest.to_owned(),
        })
    }

    /// The revision that follows `parent` (or a root) with this body and deleted flag.
    pub fn next(parent: Option<&RevId>, body: &str, deleted: bool) -> RevId {
        let mut hasher = Md5::new();
        hasher.update(if deleted { b"1" } else { b"0" });
        hasher.update([0u8]);
        if let Some(parent) = parent {
            hasher.update(parent.to_string().as_bytes());
        }
        hasher.update([0u8]);
        hasher.update(body.as_bytes());
        RevId {
            generation: parent.map_or(1, |p| p.generation + 1),
            digest: hex::encode(hasher.finalize()),
        }
    }
}

impl fmt::Display for RevId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.generation, self.digest)
    }
}

impl Ord for RevId {
    /// CouchDB's order: by generation, then by digest text.
    fn cmp(&self, other: &Self) -> Ordering {
        self.generation
            .cmp(&other.generation)
            .then_with(|| self.digest.cmp(&other.digest))
    }
}

impl PartialOrd for RevId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display_round_trip() {
        let rev = RevId::parse("12-abc").expect("valid");
        assert_eq!(rev.generation, 12);
        assert_eq!(rev.to_string(), "12-abc");
    }

    #[test]
    fn malformed_revs_are_refused() {
        for bad in ["", "1", "0-abc", "x-abc", "1-", "-1-a", "+1-a"] {
            assert!(RevId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_same_edit_of_the_same_parent_gets_the_same_rev() {
        let parent = RevId::parse("1-a").expect("valid");
        let one = RevId::next(Some(&parent), r#"{"x":1}"#, false);
        assert_eq!(one, RevId::next(Some(&parent), r#"{"x":1}"#, false));
        assert_eq!(one.generation, 2);
        assert_eq!(one.digest.len(), 32);
        assert_ne!(one, RevId::next(Some(&parent), r#"{"x":1}"#, true));
        assert_ne!(one, RevId::next(None, r#"{"x":1}"#, false));
    }

    #[test]
    fn revs_order_by_generation_then_digest() {
        let parse = |s| RevId::parse(s).expect("valid");
        assert!(parse("2-a") > parse("1-z"));
        assert!(parse("2-b") > parse("2-a"));
        assert!(parse("10-a") > parse("9-z"));
    }
}
