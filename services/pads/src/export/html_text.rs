//! The text transformations of Etherpad's HTML export: escaping, encoding characters outside
//! printable ASCII, and making runs of spaces survive HTML.

use crate::js_number::is_js_space;

/// `Security.escapeHTML`: `& < > " ' /` as entities.
pub fn escape_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#x27;"),
            '/' => out.push_str("&#x2F;"),
            c => out.push(c),
        }
    }
    out
}

/// `Security.escapeHTMLAttribute`: every character below 256 that is not a letter or digit is
/// escaped — `& < > " ' /` as [`escape_html`] writes them (so `/` stays `&#x2F;`), any other as
/// `&#xhh;` in lower-case hex, as Etherpad 2.5.3 writes `http&#x3a;&#x2F;&#x2F;x&#x2e;y`.
pub fn escape_html_attribute(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if (c as u32) >= 256 || c.is_ascii_alphanumeric() {
            out.push(c);
        } else if matches!(c, '&' | '<' | '>' | '"' | '\'' | '/') {
            out.push_str(&escape_html(c.encode_utf8(&mut [0; 4])));
        } else {
            out.push_str(&format!("&#x{:02x};", c as u32));
        }
    }
    out
}

/// Etherpad's `_encodeWhitespace`: characters that are neither printable ASCII nor white space
/// become numeric character references.
pub fn encode_whitespace(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if ('\u{21}'..='\u{7e}').contains(&c) || is_js_space(c) {
            out.push(c);
        } else {
            out.push_str(&format!("&#{};", c as u32));
        }
    }
    out
}

/// Splits HTML into Etherpad's tokens: tags (`<...>`), single spaces and runs of other text.
fn tokens(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let len = if rest.starts_with('<') {
            rest.find('>').map_or(rest.len(), |i| i + 1)
        } else if rest.starts_with(' ') {
            1
        } else {
            rest.find([' ', '<']).unwrap_or(rest.len())
        };
        out.push(&rest[..len]);
        rest = &rest[len..];
    }
    out
}

/// Etherpad's `_processSpaces` (wrapping on): in a run of spaces all but the last become
/// `&nbsp;`, as do a space ending the line and the first space of the line.
pub fn process_spaces(s: &str) -> String {
    let mut parts: Vec<String> = tokens(s).into_iter().map(str::to_owned).collect();
    let mut end_of_line = true;
    let mut before_space = false;
    for p in parts.iter_mut().rev() {
        if p == " " {
            if end_of_line || before_space {
                *p = "&nbsp;".into();
            }
            end_of_line = false;
            before_space = true;
        } else if !p.starts_with('<') {
            end_of_line = false;
            before_space = false;
        }
    }
    for p in parts.iter_mut() {
        if p == " " {
            *p = "&nbsp;".into();
            break;
        } else if !p.starts_with('<') {
            break;
        }
    }
    parts.concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_survive_html() {
        assert_eq!(process_spaces("a  b "), "a&nbsp; b&nbsp;");
        assert_eq!(process_spaces(" <b>x</b>"), "&nbsp;<b>x</b>");
        assert_eq!(process_spaces("a b"), "a b");
    }

    #[test]
    fn escapes_and_encodes() {
        assert_eq!(
            escape_html("<a href='/'>&"),
            "&lt;a href=&#x27;&#x2F;&#x27;&gt;&amp;"
        );
        assert_eq!(encode_whitespace("é x\t"), "&#233; x\t");
        assert_eq!(escape_html_attribute("a:b"), "a&#x3a;b");
        // Etherpad 2.5.3's href for this URL (tests/fixtures/etherpad/misc.json, getHTML_url)
        assert_eq!(
            escape_html_attribute("http://x.y/a_b?c=d&e=%20f#g:h"),
            "http&#x3a;&#x2F;&#x2F;x&#x2e;y&#x2F;a&#x5f;b&#x3f;c&#x3d;d&amp;e&#x3d;&#x25;20f&#x23;g&#x3a;h"
        );
    }
}
