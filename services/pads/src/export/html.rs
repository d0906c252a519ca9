//! `getHTML`: Etherpad's `getHTMLFromAtext` without plugins. Bold, italic, underline,
//! strikethrough and the two heading attributes become tags, URLs become links, list lines
//! become nested `<ul>`/`<ol>` lists, every other line ends with `<br>`.

use super::html_text::{encode_whitespace, escape_html, escape_html_attribute, process_spaces};
use super::urls::find_urls;
use super::{analyze, lines};
use crate::changes::{AttributePool, Error};
use crate::js_number;
use easysync::{Line, decode_attribs, parse_ops, subattribution};
use palimpsest_events::pads::AText;
use std::collections::HashMap;

/// The tags, in nesting order, and the attributes (`[name, "true"]`) they render.
const TAGS: [&str; 6] = ["h1", "h2", "strong", "em", "u", "s"];
const PROPS: [&str; 6] = [
    "heading1",
    "heading2",
    "bold",
    "italic",
    "underline",
    "strikethrough",
];

/// What attributes render as (Etherpad's `props` and `anumMap`): for `getHTML` the six tags;
/// for `createDiffHTML` also a `<span class=…>` per author and for removed text.
pub(crate) struct Props {
    /// Per prop, its opening text.
    open: Vec<String>,
    /// Per prop, its closing text.
    close: Vec<String>,
    /// Attribute number → prop index.
    of_attrib: HashMap<usize, usize>,
}

impl Props {
    /// The six tags of [`TAGS`], for the attributes of `pool` that are `[prop, "true"]`.
    pub(crate) fn tags(pool: &AttributePool) -> Self {
        let mut props = Props {
            open: TAGS.iter().map(|t| format!("<{t}>")).collect(),
            close: TAGS.iter().map(|t| format!("</{t}>")).collect(),
            of_attrib: HashMap::new(),
        };
        for (i, prop) in PROPS.iter().enumerate() {
            if let Some(n) = pool.lookup(prop, "true") {
                props.of_attrib.insert(n, i);
            }
        }
        props
    }

    /// Adds a prop rendered as `<span class="{class}">` for the attribute numbered `attrib`;
    /// its index.
    pub(crate) fn push_span(&mut self, class: &str, attrib: usize) -> usize {
        self.open.push(format!("<span class=\"{class}\">"));
        self.close.push("</span>".into());
        let i = self.open.len() - 1;
        self.of_attrib.insert(attrib, i);
        i
    }

    /// Renders the attribute numbered `attrib` as the prop `prop`.
    pub(crate) fn map(&mut self, attrib: usize, prop: usize) {
        self.of_attrib.insert(attrib, prop);
    }
}

/// One line's HTML (Etherpad's `getLineHTML`).
struct LineHtml<'a> {
    props: &'a Props,
    out: String,
    open: Vec<usize>,
    taken: usize,
}

impl LineHtml<'_> {
    fn close(&mut self) {
        if !self.open.is_empty() {
            let t = self.open.remove(0);
            self.out.push_str(&self.props.close[t]);
        }
    }

    /// Renders the next `n` characters of the line (Etherpad's `processNextChars`).
    fn next_chars(&mut self, text: &[u16], attribs: &str, n: usize) -> Result<(), Error> {
        if n == 0 {
            return Ok(());
        }
        let cut = subattribution(attribs, self.taken, Some(self.taken + n))?;
        for op in parse_ops(&cut)? {
            let used: Vec<usize> = decode_attribs(&op.attribs)?
                .into_iter()
                .filter_map(|a| self.props.of_attrib.get(&a).copied())
                .collect();
            if let Some(outermost) = (0..self.open.len())
                .rev()
                .find(|&i| !used.contains(&self.open[i]))
            {
                for _ in 0..=outermost {
                    self.close();
                }
            }
            for t in &used {
                if !self.open.contains(t) {
                    self.open.insert(0, *t);
                    self.out.push_str(&self.props.open[*t]);
                }
            }
            let chars = if op.lines > 0 {
                op.chars.saturating_sub(1)
            } else {
                op.chars
            };
            let end = (self.taken + chars).min(text.len());
            let mut s = String::from_utf16_lossy(&text[self.taken.min(end)..end]);
            self.taken = end;
            if let Some(i) = s.find('\u{c}') {
                s.remove(i);
            }
            self.out.push_str(&encode_whitespace(&escape_html(&s)));
        }
        while !self.open.is_empty() {
            self.close();
        }
        Ok(())
    }
}

/// A line's content as HTML, links included, spaces processed.
fn line_html(text: &str, attribs: &str, props: &Props) -> Result<String, Error> {
    let units: Vec<u16> = text.encode_utf16().collect();
    let mut line = LineHtml {
        props,
        out: String::new(),
        open: Vec::new(),
        taken: 0,
    };
    for (start, url) in find_urls(text) {
        let before = start.saturating_sub(line.taken);
        line.next_chars(&units, attribs, before)?;
        line.out.push_str(&format!(
            "<a href=\"{}\" rel=\"noreferrer noopener\">",
            escape_html_attribute(&url)
        ));
        line.next_chars(&units, attribs, url.encode_utf16().count())?;
        line.out.push_str("</a>");
    }
    let rest = units.len().saturating_sub(line.taken);
    line.next_chars(&units, attribs, rest)?;
    Ok(process_spaces(&line.out))
}

/// The list a line is part of: (level, type).
type OpenList = (usize, String);

/// The body of Etherpad's `getHTML` answer (what goes between `<body>` and `</body>`).
pub fn html_body(atext: &AText, pool: &AttributePool) -> Result<String, Error> {
    render(atext, pool, &Props::tags(pool), String::new())
}

/// The lines of `atext` as HTML with `props`, after `head` (Etherpad's `pieces = [css]`).
pub(crate) fn render(
    atext: &AText,
    pool: &AttributePool,
    props: &Props,
    head: String,
) -> Result<String, Error> {
    let all = lines(atext)?;
    let analyzed: Vec<Line> = all
        .iter()
        .map(|(t, a)| analyze(t, a, pool))
        .collect::<Result<_, _>>()?;
    let blank = Line {
        text: String::new(),
        attribs: String::new(),
        list_type: None,
        list_level: 0,
        start: None,
    };
    let mut pieces: Vec<String> = vec![head];
    let mut open_lists: Vec<OpenList> = Vec::new();
    for (i, line) in analyzed.iter().enumerate() {
        let content = line_html(&line.text, &line.attribs, props)?;
        if line.list_level == 0 {
            pieces.push(content);
            pieces.push("<br>".into());
            continue;
        }
        let kind = line.list_type.clone().unwrap_or_default();
        let prev = i.checked_sub(1).map(|p| &analyzed[p]);
        // Etherpad looks one line past the last and finds an empty, list-less line there.
        let next = analyzed.get(i + 1);
        let next_is_empty_number =
            next.is_some_and(|n| n.list_type.as_deref() == Some("number") && n.text.is_empty());
        let next = next.unwrap_or(&blank);
        let starts_list = prev.is_none_or(|p| p.list_level != line.list_level)
            || prev.is_some_and(|p| p.list_type != line.list_type);
        if starts_list
            && !open_lists
                .iter()
                .any(|(l, t)| *l == line.list_level && *t == kind)
        {
            open_list_levels(
                line,
                prev,
                &kind,
                next_is_empty_number,
                &mut pieces,
                &mut open_lists,
            );
        }
        if !content.is_empty() {
            pieces.push("<li>".into());
            pieces.push(content.clone());
        }
        if next.list_level == line.list_level
            && next.list_type == line.list_type
            && !content.is_empty()
            && !next_is_empty_number
        {
            pieces.push("</li>".into());
        }
        if next.list_level == 0
            || next.list_level < line.list_level
            || next.list_type != line.list_type
        {
            close_list_levels(line, next, &kind, &mut pieces, &mut open_lists);
        }
    }
    Ok(pieces.concat())
}

/// Opens the lists `line` starts, one `<ul>`/`<ol>` per level above the previous line's (from
/// level 0 when the previous line's list is of another type), as Etherpad's `getHTML` does.
fn open_list_levels(
    line: &Line,
    prev: Option<&Line>,
    kind: &str,
    next_is_empty_number: bool,
    pieces: &mut Vec<String>,
    open_lists: &mut Vec<OpenList>,
) {
    let mut prev_level = prev.map_or(0, |p| p.list_level);
    if prev.is_some_and(|p| p.list_type != line.list_type) {
        prev_level = 0;
    }
    for diff in prev_level..line.list_level {
        open_lists.push((diff, kind.to_owned()));
        let last = pieces.last().map(String::as_str).unwrap_or("");
        if (last.starts_with("<ul") || last.starts_with("<ol") || last.starts_with("</li>"))
            && !next_is_empty_number
        {
            pieces.push("<li>".into());
        }
        if kind == "number" {
            match &line.start {
                Some(start) => pieces.push(format!(
                    "<ol start=\"{}\" class=\"{kind}\">",
                    js_number_text(js_number::number(start))
                )),
                None => pieces.push(format!("<ol class=\"{kind}\">")),
            }
        } else {
            pieces.push(format!("<ul class=\"{kind}\">"));
        }
    }
}

/// Closes the lists `line` ends before `next`, one per level down to the next line's (to 0 when
/// the next line's list is of another type), as Etherpad's `getHTML` does.
fn close_list_levels(
    line: &Line,
    next: &Line,
    kind: &str,
    pieces: &mut Vec<String>,
    open_lists: &mut Vec<OpenList>,
) {
    let mut next_level = next.list_level;
    if next.list_type != line.list_type {
        next_level = 0;
    }
    for diff in next_level..line.list_level {
        open_lists.retain(|(l, t)| *l != diff && t != kind);
        let last = pieces.last().map(String::as_str).unwrap_or("");
        if last.starts_with("</ul") || last.starts_with("</ol") {
            pieces.push("</li>".into());
        }
        pieces.push(if kind == "number" {
            "</ol>".into()
        } else {
            "</ul>".into()
        });
    }
}

/// JavaScript's text of a number as `Number(x)` gives it in a template literal.
fn js_number_text(n: f64) -> String {
    if n.is_nan() {
        "NaN".into()
    } else if n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{n:.0}")
    } else {
        n.to_string()
    }
}

/// `getHTML`'s whole document.
pub fn html_document(atext: &AText, pool: &AttributePool) -> Result<String, Error> {
    Ok(format!(
        "<!DOCTYPE HTML><html><body>{}</body></html>",
        html_body(atext, pool)?
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_lines_end_with_br_and_text_is_escaped() {
        let a = AText {
            text: "a<b\n\nc  d\n".into(),
            attribs: "|3+a".into(),
        };
        assert_eq!(
            html_document(&a, &AttributePool::new()).expect("html"),
            "<!DOCTYPE HTML><html><body>a&lt;b<br><br>c&nbsp; d<br></body></html>"
        );
    }

    #[test]
    fn bold_and_links() {
        let mut pool = AttributePool::new();
        pool.put_attrib("bold", "true");
        let a = AText {
            text: "hi http://x.y\n".into(),
            attribs: "*0+2|1+c".into(),
        };
        assert_eq!(
            html_body(&a, &pool).expect("html"),
            "<strong>hi</strong> <a href=\"http&#x3a;&#x2F;&#x2F;x&#x2e;y\" rel=\"noreferrer noopener\">http:&#x2F;&#x2F;x.y</a><br>"
        );
    }

    #[test]
    fn bullet_lists_nest() {
        let mut pool = AttributePool::new();
        pool.put_attrib("lmkr", "1");
        pool.put_attrib("list", "bullet1");
        let a = AText {
            text: "*one\n*two\n".into(),
            attribs: "*0*1+1|1+4*0*1+1|1+4".into(),
        };
        assert_eq!(
            html_body(&a, &pool).expect("html"),
            // As Etherpad writes it: the last item of a list is not closed before `</ul>`.
            "<ul class=\"bullet\"><li>one</li><li>two</ul>"
        );
    }
}
