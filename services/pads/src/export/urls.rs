//! Finding URLs in a line of text, as Etherpad's `padutils.findURLs` does for the HTML export.
//!
//! A URL starts with a scheme (`http://`, `https://`, `ftp://`, `mailto:`, ... or `www.`),
//! continues with URL characters, and does not end with trailing punctuation. Positions are
//! UTF-16 units, as in JavaScript.

/// Schemes followed by `://`, in the order Etherpad's regular expression tries them.
const WITH_AUTH: &[&str] = &[
    "x-man", "man", "afp", "file", "ftps", "ftp", "gopher", "https", "http", "nfs", "sftp", "smb",
    "txmt",
];

/// Schemes followed by `:` only.
const WITHOUT_AUTH: &[&str] = &["about", "geo", "mailto", "tel"];

/// Etherpad's `wordCharRegex` ranges (letters and digits of many scripts).
fn is_word_char(u: u16) -> bool {
    matches!(u,
        0x30..=0x39 | 0x41..=0x5A | 0x61..=0x7A | 0xC0..=0xD6 | 0xD8..=0xF6 | 0xF8..=0xFF
        | 0x100..=0x1FFF | 0x3040..=0x9FFF | 0xF900..=0xFDFF | 0xFE70..=0xFEFE
        | 0xFF10..=0xFF19 | 0xFF21..=0xFF3A | 0xFF41..=0xFF5A | 0xFF66..=0xFFDC)
}

/// A character that may be part of a URL.
fn is_url_char(u: u16) -> bool {
    is_word_char(u) || "-:@_.,~%+/?=&#!;()[]$'*".encode_utf16().any(|c| c == u)
}

/// A character that does not end a URL.
fn is_trailing_punctuation(u: u16) -> bool {
    ":.,;?!)]'*".encode_utf16().any(|c| c == u)
}

/// Whether `units` at `at` starts with `prefix`.
fn starts_with(units: &[u16], at: usize, prefix: &str) -> bool {
    let p: Vec<u16> = prefix.encode_utf16().collect();
    units.get(at..at + p.len()) == Some(&p[..])
}

/// The length of the scheme (or `www.`) starting at `at`, if one does.
fn scheme_at(units: &[u16], at: usize) -> Option<usize> {
    for s in WITH_AUTH {
        let with = format!("{s}://");
        if starts_with(units, at, &with) {
            return Some(with.encode_utf16().count());
        }
    }
    for s in WITHOUT_AUTH {
        let with = format!("{s}:");
        if starts_with(units, at, &with) {
            return Some(with.encode_utf16().count());
        }
    }
    starts_with(units, at, "www.").then_some(4)
}

/// The URLs of `text`: (start in UTF-16 units, URL).
pub fn find_urls(text: &str) -> Vec<(usize, String)> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut found = Vec::new();
    let mut at = 0;
    while at < units.len() {
        if let Some(prefix) = scheme_at(&units, at) {
            let body = at + prefix;
            let mut run_end = body;
            while run_end < units.len() && is_url_char(units[run_end]) {
                run_end += 1;
            }
            let end = (body..run_end)
                .rev()
                .find(|&p| !is_trailing_punctuation(units[p]))
                .map(|p| p + 1);
            if let Some(end) = end {
                found.push((at, String::from_utf16_lossy(&units[at..end])));
                at = end;
                continue;
            }
        }
        at += 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_urls_without_trailing_punctuation() {
        assert_eq!(
            find_urls("see https://etherpad.org/x. and www.a.b!"),
            vec![
                (4, "https://etherpad.org/x".to_owned()),
                (32, "www.a.b".to_owned())
            ]
        );
        assert_eq!(
            find_urls("mailto:me@x.y"),
            vec![(0, "mailto:me@x.y".to_owned())]
        );
        assert!(find_urls("http://").is_empty());
        assert!(find_urls("plain text").is_empty());
    }
}
