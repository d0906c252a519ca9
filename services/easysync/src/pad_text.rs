//! The edits Etherpad's server makes to a pad's text on its own (`Pad.spliceText`, `setText`,
//! `appendText`), which keep the pad's invariant: the text always ends with a newline.

use crate::changeset::Changeset;
use crate::cursor::{Utf16Cursor, text_length};
use crate::error::{Error, Result};
use crate::splice::make_splice;

/// Normalises text from outside (Etherpad's `cleanText`): CRLF and CR become LF, a tab becomes
/// eight spaces, a no-break space becomes a space.
pub fn clean_text(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "        ")
        .replace('\u{a0}', " ")
}

/// The changeset for Etherpad's `Pad.spliceText(start, ndel, ins)` on a pad whose text is
/// `orig`: `ins` is cleaned, a newline is appended when the edit would otherwise remove the
/// final one, and `None` means there is nothing to do. `attribs` go on the inserted text
/// (Etherpad puts `author` there).
///
/// Fails if `orig` does not end with a newline or the range is outside it.
pub fn splice_text(
    orig: &str,
    start: usize,
    ndel: usize,
    ins: &str,
    attribs: &str,
) -> Result<Option<Changeset>> {
    if !orig.ends_with('\n') {
        return Err(Error::MissingFinalNewline);
    }
    let len = text_length(orig);
    if start.checked_add(ndel).is_none_or(|end| end > len) {
        return Err(Error::SpliceOutOfRange { start, ndel, len });
    }
    let mut ins = clean_text(ins);
    let prefix_ends_with_newline = {
        let mut cursor = Utf16Cursor::new(orig);
        cursor
            .take(start)
            .map_err(|_| Error::SplitsSurrogatePair)?
            .ends_with('\n')
    };
    let will_end_with_newline = start + ndel < len // keeping the final newline
        || ins.ends_with('\n')
        || (ins.is_empty() && start > 0 && prefix_ends_with_newline);
    if !will_end_with_newline {
        ins.push('\n');
    }
    if ndel == 0 && ins.is_empty() {
        return Ok(None);
    }
    make_splice(orig, start, ndel, &ins, attribs).map(Some)
}

/// The changeset for Etherpad's `Pad.setText(newText)`: replace the whole text, ending it with a
/// newline if `new_text` does not. `None` if nothing changes.
pub fn set_text(orig: &str, new_text: &str, attribs: &str) -> Result<Option<Changeset>> {
    splice_text(orig, 0, text_length(orig), new_text, attribs)
}

/// The changeset for Etherpad's `Pad.appendText(text)`: insert just before the final newline.
pub fn append_text(orig: &str, text: &str, attribs: &str) -> Result<Option<Changeset>> {
    let len = text_length(orig);
    if len == 0 {
        return Err(Error::MissingFinalNewline);
    }
    splice_text(orig, len - 1, 0, text, attribs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::apply_to_text;

    fn run(orig: &str, cs: Option<Changeset>) -> String {
        match cs {
            Some(cs) => apply_to_text(&cs, orig).unwrap(),
            None => orig.to_owned(),
        }
    }

    #[test]
    fn cleans_like_etherpad() {
        assert_eq!(clean_text("a\r\nb\rc\td\u{a0}e"), "a\nb\nc        d e");
    }

    #[test]
    fn set_text_replaces_everything_and_keeps_the_final_newline() {
        let cs = set_text("\n", "hello", "").unwrap().unwrap();
        assert_eq!(cs.to_string(), "Z:1>5|1-1|1+6$hello\n");
        assert_eq!(
            run("old\ntext\n", set_text("old\ntext\n", "new", "").unwrap()),
            "new\n"
        );
        assert_eq!(
            run("old\n", set_text("old\n", "new\n", "").unwrap()),
            "new\n"
        );
        assert_eq!(run("old\n", set_text("old\n", "", "").unwrap()), "\n");
    }

    #[test]
    fn append_text_goes_before_the_final_newline() {
        let cs = append_text("ab\n", "cd", "*0").unwrap().unwrap();
        assert_eq!(cs.to_string(), "Z:3>2=2*0+2$cd");
        assert_eq!(run("ab\n", Some(cs)), "abcd\n");
        assert_eq!(append_text("ab\n", "", "").unwrap(), None);
    }

    #[test]
    fn splice_text_keeps_the_invariant() {
        // Deleting everything leaves the text ending with a newline.
        let cs = splice_text("ab\n", 0, 3, "", "").unwrap();
        assert_eq!(run("ab\n", cs), "\n");
        // Deleting the final newline after another newline needs nothing re-added.
        let cs = splice_text("ab\n\n", 3, 1, "", "").unwrap();
        assert_eq!(run("ab\n\n", cs), "ab\n");
        assert!(matches!(
            splice_text("ab\n", 2, 2, "", ""),
            Err(Error::SpliceOutOfRange { .. })
        ));
        assert!(matches!(
            splice_text("ab", 0, 0, "x", ""),
            Err(Error::MissingFinalNewline)
        ));
    }
}
