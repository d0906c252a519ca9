//! A pad as plain text for people: list lines get an indented `*` bullet and lose their line
//! marker (Etherpad's `getPadPlainText`). Etherpad's `getText` API returns the raw `atext.text`
//! instead; that needs no function.

use crate::atext::AText;
use crate::attribution::split_attribution_lines;
use crate::error::Result;
use crate::line_marker::analyze_line;
use crate::pool::AttributePool;

/// The attributed text as plain text: each line, list lines as `<2·level−1 spaces>* text`.
pub fn atext_to_plain_text(atext: &AText, pool: &AttributePool) -> Result<String> {
    let body = atext.text.strip_suffix('\n').unwrap_or(&atext.text);
    let alines = split_attribution_lines(&atext.attribs, &atext.text)?;
    let mut out = String::with_capacity(atext.text.len());
    for (i, text) in body.split('\n').enumerate() {
        let aline = alines.get(i).map_or("", String::as_str);
        let line = analyze_line(text, aline, pool)?;
        if line.list_level > 0 {
            out.extend(std::iter::repeat_n(' ', line.list_level * 2 - 1));
            out.push_str("* ");
        }
        out.push_str(&line.text);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_get_bullets_and_lose_markers() {
        let mut pool = AttributePool::new();
        pool.put_attrib("lmkr", "1");
        pool.put_attrib("list", "bullet1");
        pool.put_attrib("list", "bullet2");
        let atext =
            AText::from_parts("title\n*one\n*two\nend\n", "|1+6*0*1+1|1+4*0*2+1|2+8").unwrap();
        assert_eq!(
            atext_to_plain_text(&atext, &pool).unwrap(),
            "title\n * one\n   * two\nend\n"
        );
    }

    #[test]
    fn plain_pads_are_unchanged() {
        let pool = AttributePool::new();
        let atext = AText::new("a\n\nb\n").unwrap();
        assert_eq!(atext_to_plain_text(&atext, &pool).unwrap(), "a\n\nb\n");
    }
}
