//! Line attributes: Etherpad marks a list line (bullet, numbered, indented) with a `*`
//! character at its start carrying a `list` attribute such as `bullet1`. Exports read the list
//! type and level from it and hide the marker (Etherpad's `_analyzeLine`).

use crate::attribute_map::AttributeMap;
use crate::attribution::subattribution;
use crate::error::{Error, Result};
use crate::ops::parse_ops;
use crate::pool::AttributePool;

/// Deepest list level accepted; Etherpad's editor stops far below this.
const MAX_LIST_LEVEL: u64 = 64;

/// One line of a pad as exports see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// The line's text without its newline and without its line marker.
    pub text: String,
    /// The line's attribution without the line marker.
    pub attribs: String,
    /// The list type (`bullet`, `number`, `indent`, ...), if the line is a list item.
    pub list_type: Option<String>,
    /// The list nesting level, 0 when not in a list.
    pub list_level: usize,
    /// The `start` attribute of a numbered list's first line, if any.
    pub start: Option<String>,
}

/// Reads a line's list attributes from the first operation of its attribution `aline` and
/// strips the line marker.
pub fn analyze_line(text: &str, aline: &str, pool: &AttributePool) -> Result<Line> {
    let mut line = Line {
        text: text.to_owned(),
        attribs: aline.to_owned(),
        list_type: None,
        list_level: 0,
        start: None,
    };
    let Some(first) = parse_ops(aline)?.into_iter().next() else {
        return Ok(line);
    };
    let attribs = AttributeMap::from_attribs(&first.attribs, pool)?;
    line.start = attribs
        .get("start")
        .filter(|s| !s.is_empty())
        .map(str::to_owned);
    let Some(list) = attribs.get("list").filter(|l| !l.is_empty()) else {
        return Ok(line);
    };
    if let Some((kind, level)) = list_type_and_level(list) {
        if level > MAX_LIST_LEVEL {
            return Err(Error::ListTooDeep(level));
        }
        line.list_type = Some(kind.to_owned());
        line.list_level = usize::try_from(level).map_err(|_| Error::ListTooDeep(level))?;
    }
    let mut chars = text.chars();
    chars.next();
    line.text = chars.as_str().to_owned();
    line.attribs = subattribution(aline, 1, None)?;
    Ok(line)
}

/// The first `[a-z]+[0-9]+` in a list attribute value: `bullet1` → (`bullet`, 1).
fn list_type_and_level(value: &str) -> Option<(&str, u64)> {
    let bytes = value.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !bytes.get(i).is_some_and(u8::is_ascii_lowercase) {
            i += 1;
            continue;
        }
        let letters_end = i + bytes.get(i..).map_or(0, |r| {
            r.iter().take_while(|b| b.is_ascii_lowercase()).count()
        });
        let digits = bytes
            .get(letters_end..)
            .map_or(0, |r| r.iter().take_while(|b| b.is_ascii_digit()).count());
        if digits > 0 {
            let kind = value.get(i..letters_end)?;
            let level = value
                .get(letters_end..letters_end + digits)?
                .parse::<u64>()
                .unwrap_or(u64::MAX);
            return Some((kind, level));
        }
        i = letters_end;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_list_type_and_level() {
        assert_eq!(list_type_and_level("bullet1"), Some(("bullet", 1)));
        assert_eq!(list_type_and_level("number12"), Some(("number", 12)));
        assert_eq!(list_type_and_level("1bullet2x"), Some(("bullet", 2)));
        assert_eq!(list_type_and_level("bullet"), None);
        assert_eq!(list_type_and_level("Bullet1"), Some(("ullet", 1)));
    }

    #[test]
    fn strips_the_marker_of_list_lines() {
        let mut pool = AttributePool::new();
        pool.put_attrib("lmkr", "1");
        pool.put_attrib("list", "bullet2");
        pool.put_attrib("bold", "true");
        let line = analyze_line("*item", "*0*1+1*2+4", &pool).unwrap();
        assert_eq!(line.text, "item");
        assert_eq!(line.attribs, "*2+4");
        assert_eq!(line.list_type.as_deref(), Some("bullet"));
        assert_eq!(line.list_level, 2);
        let plain = analyze_line("text", "*2+4", &pool).unwrap();
        assert_eq!(plain.text, "text");
        assert_eq!(plain.list_level, 0);
    }

    #[test]
    fn refuses_absurd_levels() {
        let mut pool = AttributePool::new();
        pool.put_attrib("list", "bullet99999999999999999999");
        assert!(analyze_line("*x", "*0+1+1", &pool).is_err());
    }
}
