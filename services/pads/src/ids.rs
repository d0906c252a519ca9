//! Etherpad's ids: how they look, how new ones are drawn, which pad ids are valid.
//!
//! Author and group ids are a prefix (`a.`, `g.`) and 16 random letters or digits; session and
//! read-only ids are a prefix (`s.`, `r.`) and 32 lower-case hex digits (Etherpad's
//! `randomString(16)`: 16 random bytes in hex). A group pad's id is `groupID$name`. New ids are
//! drawn by the HTTP edge (the decider never touches a random source) with [`new_id`].
//!
//! Ids are only ever looked up, never parsed, so session and read-only ids this server drew in
//! its older form (`s.`/`r.` and 16 letters or digits) stay valid.

use crate::js_number::is_js_space;
use rand::Rng;

/// The kinds of ids Etherpad draws at random.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdKind {
    /// `a.` + 16: an author.
    Author,
    /// `g.` + 16: a group.
    Group,
    /// `s.` + 32 hex digits: a session.
    Session,
    /// `r.` + 32 hex digits: a pad's read-only id.
    ReadOnly,
}

impl IdKind {
    /// The id's prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            IdKind::Author => "a.",
            IdKind::Group => "g.",
            IdKind::Session => "s.",
            IdKind::ReadOnly => "r.",
        }
    }
}

const ALPHANUMERIC: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/// `len` random letters and digits.
pub fn random_alphanumeric(rng: &mut impl Rng, len: usize) -> String {
    (0..len)
        .map(|_| ALPHANUMERIC[rng.random_range(0..ALPHANUMERIC.len())] as char)
        .collect()
}

/// A new id of `kind`, in the form Etherpad draws it.
pub fn new_id(kind: IdKind, rng: &mut impl Rng) -> String {
    let random = match kind {
        IdKind::Author | IdKind::Group => random_alphanumeric(rng, 16),
        IdKind::Session | IdKind::ReadOnly => random_hex(rng, 16),
    };
    format!("{}{random}", kind.prefix())
}

/// `bytes` random bytes in lower-case hex: Etherpad's `randomString(bytes)`.
pub fn random_hex(rng: &mut impl Rng, bytes: usize) -> String {
    (0..bytes)
        .map(|_| format!("{:02x}", rng.random::<u8>()))
        .collect()
}

/// A saved revision's id: 10 random bytes in hex, as Etherpad's `randomString(10)`.
pub fn new_saved_revision_id(rng: &mut impl Rng) -> String {
    random_hex(rng, 10)
}

/// The group a pad belongs to: the part of its id before the first `$`, if any.
pub fn group_of_pad(pad_id: &str) -> Option<&str> {
    pad_id.split_once('$').map(|(g, _)| g)
}

/// Whether `s` is 1 to 50 UTF-16 units without a `$` (a pad name).
fn is_pad_name(s: &str) -> bool {
    let units = s.encode_utf16().count();
    (1..=50).contains(&units) && !s.contains('$')
}

/// Etherpad's `isValidPadId`: `^(g.[a-zA-Z0-9]{16}\$)?[^$]{1,50}$`, where `.` is any UTF-16
/// unit but a line terminator.
pub fn is_valid_pad_id(id: &str) -> bool {
    let units: Vec<u16> = id.encode_utf16().collect();
    let group_prefix = units.len() > 19
        && units[0] == u16::from(b'g')
        && !matches!(units[1], 0x0a | 0x0d | 0x2028 | 0x2029)
        && units[2..18]
            .iter()
            .all(|&u| u < 128 && (u as u8).is_ascii_alphanumeric())
        && units[18] == u16::from(b'$');
    if group_prefix {
        let rest = String::from_utf16_lossy(&units[19..]);
        if is_pad_name(&rest) {
            return true;
        }
    }
    is_pad_name(id)
}

/// The legacy pad id rewrites Etherpad tries in turn when a pad id does not exist: runs of white
/// space, then runs of `:`, become `_`.
pub fn pad_id_rewrites(id: &str) -> [String; 2] {
    let spaces = collapse_runs(id, is_js_space);
    let colons = collapse_runs(&spaces, |c| c == ':');
    [spaces, colons]
}

/// Replaces every run of characters matching `pred` with one `_`.
fn collapse_runs(s: &str, pred: impl Fn(char) -> bool) -> String {
    let mut out = String::with_capacity(s.len());
    let mut in_run = false;
    for c in s.chars() {
        if pred(c) {
            if !in_run {
                out.push('_');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn author_and_group_ids_have_prefix_and_16_alphanumerics() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        for kind in [IdKind::Author, IdKind::Group] {
            let id = new_id(kind, &mut rng);
            assert!(id.starts_with(kind.prefix()));
            assert_eq!(id.len(), 18);
            assert!(id[2..].bytes().all(|b| b.is_ascii_alphanumeric()));
        }
        assert_eq!(new_saved_revision_id(&mut rng).len(), 20);
    }

    /// Etherpad 2.5.3 answered `r.b61db33b69557b3794f2dbf716674436` and
    /// `s.8fdf53798d54deee8b8ed411de7e7370` (tests/fixtures/etherpad/misc.json).
    #[test]
    fn session_and_read_only_ids_have_prefix_and_32_lower_case_hex_digits() {
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        for kind in [IdKind::Session, IdKind::ReadOnly] {
            let id = new_id(kind, &mut rng);
            assert!(id.starts_with(kind.prefix()));
            assert_eq!(id.len(), 34, "{id}");
            assert!(
                id[2..]
                    .bytes()
                    .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
            );
        }
    }

    #[test]
    fn pad_ids_follow_etherpads_pattern() {
        assert!(is_valid_pad_id("test"));
        assert!(is_valid_pad_id("g.abcdefghijklmnop$name"));
        assert!(is_valid_pad_id(&"x".repeat(50)));
        assert!(!is_valid_pad_id(&"x".repeat(51)));
        assert!(!is_valid_pad_id(""));
        assert!(!is_valid_pad_id("a$b"));
        assert!(!is_valid_pad_id("g.short$name"));
        assert!(is_valid_pad_id(&format!(
            "g.abcdefghijklmnop${}",
            "y".repeat(50)
        )));
        assert!(!is_valid_pad_id("g.abcdefghijklmnop$"));
    }

    #[test]
    fn rewrites_replace_runs_of_spaces_then_colons() {
        assert_eq!(
            pad_id_rewrites("a  b::c"),
            ["a_b::c".to_owned(), "a_b_c".to_owned()]
        );
        assert_eq!(group_of_pad("g.x$y$z"), Some("g.x"));
        assert_eq!(group_of_pad("plain"), None);
    }
}
