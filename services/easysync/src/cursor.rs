//! Reading a string by UTF-16 code units, because Etherpad (JavaScript) counts every length and
//! position in a changeset in UTF-16 code units, while Rust strings are UTF-8.

/// Length of `s` in UTF-16 code units, i.e. JavaScript's `s.length`.
///
/// This is the unit of every length in a changeset and of `AText` positions. Linear in `s`.
pub fn text_length(s: &str) -> usize {
    if s.is_ascii() {
        return s.len();
    }
    s.bytes().map(utf16_units_of_byte).sum()
}

/// Number of `\n` in `s`.
pub(crate) fn count_newlines(s: &str) -> usize {
    s.bytes().filter(|&b| b == b'\n').count()
}

/// UTF-16 units contributed by one UTF-8 byte: leading bytes carry the count of their character
/// (1, or 2 for a four-byte character), continuation bytes none.
fn utf16_units_of_byte(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0x80..=0xbf => 0,
        0xc0..=0xef => 1,
        _ => 2,
    }
}

/// Byte width of the UTF-8 character starting with `b`.
fn width_of_lead_byte(b: u8) -> usize {
    match b {
        0x00..=0x7f => 1,
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        _ => 4,
    }
}

/// Why a cursor could not move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CursorError {
    /// Fewer units are left than asked for.
    PastEnd,
    /// The position would split a surrogate pair.
    SplitsSurrogatePair,
}

/// A forward-only position in a string, moved in UTF-16 code units.
#[derive(Debug, Clone)]
pub(crate) struct Utf16Cursor<'a> {
    text: &'a str,
    byte: usize,
}

impl<'a> Utf16Cursor<'a> {
    /// A cursor at the start of `text`.
    pub(crate) fn new(text: &'a str) -> Self {
        Self { text, byte: 0 }
    }

    /// Takes the next `units` UTF-16 code units. Linear in the bytes taken.
    pub(crate) fn take(&mut self, units: usize) -> Result<&'a str, CursorError> {
        let bytes = self.text.as_bytes();
        let start = self.byte;
        // Fast path: ASCII text has one unit per byte.
        if let Some(end) = start.checked_add(units)
            && let Some(chunk) = bytes.get(start..end)
            && chunk.is_ascii()
        {
            let taken = self.text.get(start..end).ok_or(CursorError::PastEnd)?;
            self.byte = end;
            return Ok(taken);
        }
        let mut i = start;
        let mut left = units;
        while left > 0 {
            let &b = bytes.get(i).ok_or(CursorError::PastEnd)?;
            let u = utf16_units_of_byte(b);
            if u > left {
                return Err(CursorError::SplitsSurrogatePair);
            }
            i += width_of_lead_byte(b);
            left -= u;
        }
        let taken = self.text.get(start..i).ok_or(CursorError::PastEnd)?;
        self.byte = i;
        Ok(taken)
    }

    /// Skips the next `units` UTF-16 code units.
    pub(crate) fn skip(&mut self, units: usize) -> Result<(), CursorError> {
        self.take(units).map(|_| ())
    }

    /// Whether the next character is a newline (`false` at the end).
    pub(crate) fn next_is_newline(&self) -> bool {
        self.text.as_bytes().get(self.byte) == Some(&b'\n')
    }

    /// Units up to and including the next newline, without moving; `None` if there is none.
    pub(crate) fn units_through_next_newline(&self) -> Option<usize> {
        let rest = self.rest();
        let idx = rest.find('\n')?;
        rest.get(..=idx).map(text_length)
    }

    /// Everything not yet taken.
    pub(crate) fn rest(&self) -> &'a str {
        self.text.get(self.byte..).unwrap_or("")
    }

    /// Whether everything has been taken.
    pub(crate) fn is_at_end(&self) -> bool {
        self.byte >= self.text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lengths_are_utf16_units() {
        assert_eq!(text_length(""), 0);
        assert_eq!(text_length("abc\n"), 4);
        assert_eq!(text_length("é日"), 2);
        assert_eq!(text_length("😀"), 2);
        assert_eq!(text_length("a😀b"), 4);
    }

    #[test]
    fn takes_by_units_and_refuses_half_pairs() {
        let mut c = Utf16Cursor::new("a😀é\n");
        assert_eq!(c.take(1), Ok("a"));
        assert_eq!(c.take(1), Err(CursorError::SplitsSurrogatePair));
        assert_eq!(c.take(2), Ok("😀"));
        assert!(!c.next_is_newline());
        assert_eq!(c.units_through_next_newline(), Some(2));
        assert_eq!(c.take(1), Ok("é"));
        assert!(c.next_is_newline());
        assert_eq!(c.take(2), Err(CursorError::PastEnd));
        assert_eq!(c.take(1), Ok("\n"));
        assert!(c.is_at_end());
        assert_eq!(c.rest(), "");
    }
}
