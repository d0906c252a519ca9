//! `Range: bytes=…` on an attachment: CouchDB answers a single byte range with 206 and the
//! bytes of that range, so a client can resume a large download or read part of it.

/// What a `Range` header asks of content of a known length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wanted {
    /// The whole content (no header, several ranges, or a header this does not read).
    Whole,
    /// Bytes `start..=end` (inclusive, as `Content-Range` names them).
    Part {
        /// The first byte.
        start: u64,
        /// The last byte.
        end: u64,
    },
    /// A range that starts past the end: 416.
    Unsatisfiable,
}

/// Reads one `bytes=start-end`, `bytes=start-` or `bytes=-suffix` range against `length`.
pub fn wanted(header: Option<&str>, length: u64) -> Wanted {
    let Some(spec) = header.and_then(|h| h.trim().strip_prefix("bytes=")) else {
        return Wanted::Whole;
    };
    if spec.contains(',') {
        return Wanted::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return Wanted::Whole;
    };
    let (first, last) = (first.trim(), last.trim());
    let parsed = |text: &str| text.parse::<u64>().ok();
    let (start, end) = match (first.is_empty(), last.is_empty()) {
        (true, true) => return Wanted::Whole,
        (true, false) => match parsed(last) {
            Some(0) => return Wanted::Unsatisfiable,
            Some(suffix) => (length.saturating_sub(suffix), length.saturating_sub(1)),
            None => return Wanted::Whole,
        },
        (false, true) => match parsed(first) {
            Some(start) => (start, length.saturating_sub(1)),
            None => return Wanted::Whole,
        },
        (false, false) => match (parsed(first), parsed(last)) {
            (Some(start), Some(end)) if start <= end => (start, end.min(length.saturating_sub(1))),
            _ => return Wanted::Whole,
        },
    };
    if start >= length {
        return Wanted::Unsatisfiable;
    }
    Wanted::Part { start, end }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_range_is_read_and_others_mean_the_whole() {
        assert_eq!(wanted(None, 10), Wanted::Whole);
        assert_eq!(
            wanted(Some("bytes=2-4"), 10),
            Wanted::Part { start: 2, end: 4 }
        );
        assert_eq!(
            wanted(Some("bytes=7-"), 10),
            Wanted::Part { start: 7, end: 9 }
        );
        assert_eq!(
            wanted(Some("bytes=-3"), 10),
            Wanted::Part { start: 7, end: 9 }
        );
        assert_eq!(
            wanted(Some("bytes=5-100"), 10),
            Wanted::Part { start: 5, end: 9 }
        );
        assert_eq!(wanted(Some("bytes=10-"), 10), Wanted::Unsatisfiable);
        assert_eq!(wanted(Some("bytes=0-1,4-5"), 10), Wanted::Whole);
        assert_eq!(wanted(Some("bytes=4-2"), 10), Wanted::Whole);
        assert_eq!(wanted(Some("items=0-1"), 10), Wanted::Whole);
    }
}
