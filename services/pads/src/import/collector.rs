//! Etherpad's content collector (`contentcollector.ts`, as `setPadHTML` runs it: styles
//! collected, no browser, no author classes, no plugins), on the minified body.
//!
//! It keeps JavaScript's quirks where they change what is stored: attribute counters keep their
//! first-seen order (the pool numbers follow it); a bullet list's `start` counter becomes `NaN`
//! (`undefined++`) and so every bullet line's `start` is 0 (no attribute); the numbered-list
//! counter is never reset between lists; an `<li>` outside any list, and a `div`/`p` of class
//! `ace-line`, make Etherpad throw (its `HTML is malformed`), which [`Malformed`] stands for.

use super::tree::{Element, Node};
use crate::changes::AttributePool;
use easysync::num_to_string;
use unicode_normalization::UnicodeNormalization;

/// The deepest list level.
const MAX_LIST_LEVEL: i64 = 16;
/// Lines longer than `LINE_LIMIT + LINE_BUFFER` are cut every `LINE_LIMIT` characters.
const LINE_LIMIT: usize = 2000;
const LINE_BUFFER: usize = 10;

/// The HTML made Etherpad's collector throw; Etherpad answers `HTML is malformed`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("HTML is malformed: {0}")]
pub struct Malformed(pub &'static str);

/// One run of a line: its attribute string (`*0*1`) and its length in UTF-16 units.
pub type Run = (String, usize);

/// What the collector found: lines without their newlines, and each line's attribute runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collected {
    /// The lines' text.
    pub lines: Vec<String>,
    /// Each line's runs, merged as Etherpad's `SmartOpAssembler` merges them.
    pub runs: Vec<Vec<Run>>,
}

/// Walks `body`, putting the attributes it uses into `pool` in the order Etherpad does.
pub fn collect(body: &Element, pool: &mut AttributePool) -> Result<Collected, Malformed> {
    let mut cc = Collector {
        pool,
        lines: Lines::new(),
        state: State::default(),
    };
    cc.element(body, None)?;
    Ok(cc.finish())
}

/// The lines being written (`lines` in the collector).
struct Lines {
    text: Vec<String>,
    runs: Vec<Vec<Run>>,
}

impl Lines {
    fn new() -> Lines {
        Lines {
            text: vec![String::new()],
            runs: vec![Vec::new()],
        }
    }

    fn at_column_zero(&self) -> bool {
        self.text.last().is_some_and(String::is_empty)
    }

    fn start_new(&mut self) {
        self.text.push(String::new());
        self.runs.push(Vec::new());
    }

    fn append(&mut self, text: &str, attribs: &str) {
        let units = text.encode_utf16().count();
        if let Some(line) = self.text.last_mut() {
            line.push_str(text);
        }
        if units == 0 {
            return;
        }
        if let Some(runs) = self.runs.last_mut() {
            match runs.last_mut() {
                Some((a, n)) if a == attribs => *n += units,
                _ => runs.push((attribs.to_owned(), units)),
            }
        }
    }
}

/// A line attribute's value: `list` is a text, `start` a number (0 counts as absent).
#[derive(Debug, Clone, PartialEq, Eq)]
enum LineValue {
    Text(String),
    Number(i64),
}

impl LineValue {
    /// `v || ''` then `String(v)`.
    fn as_attribute(&self) -> String {
        match self {
            LineValue::Text(t) => t.clone(),
            LineValue::Number(0) => String::new(),
            LineValue::Number(n) => n.to_string(),
        }
    }
}

/// The collector's `state`. Object keys keep their insertion order, as JavaScript's do.
#[derive(Debug, Default)]
struct State {
    pre_mode: i64,
    /// Attribute name → nesting count, in first-seen order.
    attribs: Vec<(String, i64)>,
    attrib_string: String,
    /// `lineAttributes`, in insertion order.
    line_attributes: Vec<(&'static str, LineValue)>,
    /// `listNesting` (`undefined` reads as 0).
    list_nesting: i64,
    /// `start`: `None` is `undefined` or `NaN`, both falsy, both staying `NaN` when incremented.
    start: Option<i64>,
    /// `localAttribs`: the attributes the element being walked switched on.
    local_attribs: Option<Vec<String>>,
}

impl State {
    fn line_attribute(&self, key: &str) -> Option<&LineValue> {
        self.line_attributes
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v)
    }

    fn set_line_attribute(&mut self, key: &'static str, value: LineValue) {
        match self.line_attributes.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.line_attributes.push((key, value)),
        }
    }

    fn delete_line_attribute(&mut self, key: &str) {
        self.line_attributes.retain(|(k, _)| *k != key);
    }

    fn list(&self) -> Option<String> {
        match self.line_attribute("list") {
            Some(LineValue::Text(t)) if !t.is_empty() => Some(t.clone()),
            _ => None,
        }
    }
}

/// The list type an `<ul>`/`<ol>` had entered with (`oldListTypeOrNull`).
type OldList = Option<String>;

struct Collector<'a> {
    pool: &'a mut AttributePool,
    lines: Lines,
    state: State,
}

/// `AttributeMap.toString()`: the attributes sorted by key, as pool numbers.
fn attribs_string(pool: &mut AttributePool, map: &[(String, String)]) -> String {
    let mut sorted: Vec<&(String, String)> = map.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    sorted
        .into_iter()
        .map(|(k, v)| format!("*{}", num_to_string(pool.put_attrib(k, v))))
        .collect()
}

/// `AttributeMap.set`: the pool learns the attribute at once; an existing key keeps its place.
fn map_set(pool: &mut AttributePool, map: &mut Vec<(String, String)>, key: &str, value: &str) {
    pool.put_attrib(key, value);
    match map.iter_mut().find(|(k, _)| k == key) {
        Some((_, v)) => *v = value.to_owned(),
        None => map.push((key.to_owned(), value.to_owned())),
    }
}

/// `textify`: newlines and NBSPs as spaces, tabs as eight spaces, then NFC.
fn textify(s: &str) -> String {
    let joined = s.replace("\n ", " ").replace(" \n", " ");
    let spaced: String = joined
        .chars()
        .map(|c| match c {
            '\n' | '\r' | '\u{a0}' => " ".to_owned(),
            '\t' => "        ".to_owned(),
            c => c.to_string(),
        })
        .collect();
    spaced.nfc().collect()
}

/// Whether a `style` attribute says `property: value` (`/\bproperty:\s*value\b/i`).
fn style_says(style: &str, property: &str, value: &str) -> bool {
    let style = style.to_ascii_lowercase();
    let needle = format!("{property}:");
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    style.match_indices(&needle).any(|(at, _)| {
        if word(style[..at].chars().next_back()) {
            return false;
        }
        let rest = style[at + needle.len()..].trim_start_matches(|c: char| c.is_whitespace());
        rest.starts_with(value) && !word(rest[value.len()..].chars().next())
    })
}

fn is_block(name: &str) -> bool {
    matches!(name, "div" | "p" | "pre" | "li")
}

impl Collector<'_> {
    fn recalc_attrib_string(&mut self) {
        let mut map = Vec::new();
        for (name, count) in &self.state.attribs {
            if *count != 0 {
                map_set(self.pool, &mut map, name, "true");
            }
        }
        self.state.attrib_string = attribs_string(self.pool, &map);
    }

    fn increment_attrib(&mut self, name: &str) {
        match self.state.attribs.iter_mut().find(|(k, _)| k == name) {
            Some((_, n)) => *n += 1,
            None => self.state.attribs.push((name.to_owned(), 1)),
        }
        self.recalc_attrib_string();
    }

    fn decrement_attrib(&mut self, name: &str) {
        if let Some((_, n)) = self.state.attribs.iter_mut().find(|(k, _)| k == name) {
            *n -= 1;
        }
        self.recalc_attrib_string();
    }

    fn do_attrib(&mut self, name: &str) {
        self.state
            .local_attribs
            .get_or_insert_with(Vec::new)
            .push(name.to_owned());
        self.increment_attrib(name);
    }

    fn line_marker(&mut self) {
        let mut map = Vec::new();
        map_set(self.pool, &mut map, "lmkr", "1");
        map_set(self.pool, &mut map, "insertorder", "first");
        for (key, value) in self.state.line_attributes.clone() {
            let value = value.as_attribute();
            if value.is_empty() {
                map.retain(|(k, _)| k != key);
            } else {
                map_set(self.pool, &mut map, key, &value);
            }
        }
        let attribs = attribs_string(self.pool, &map);
        self.lines.append("*", &attribs);
    }

    fn start_new_line(&mut self) {
        if self.lines.at_column_zero() && !self.state.line_attributes.is_empty() {
            self.line_marker();
        }
        self.lines.start_new();
    }

    fn ensure_column_zero(&mut self) {
        if !self.lines.at_column_zero() {
            self.start_new_line();
        }
    }

    fn enter_list(&mut self, list_type: String) -> OldList {
        let old = self.state.list();
        self.state.list_nesting += 1;
        if list_type.contains("number") {
            self.state.start = Some(self.state.start.unwrap_or(0) + 1);
        }
        self.state
            .set_line_attribute("list", LineValue::Text(list_type));
        self.recalc_attrib_string();
        old
    }

    fn exit_list(&mut self, old: OldList) {
        if self.state.list().is_some() {
            self.state.list_nesting -= 1;
        }
        match old {
            Some(list) => self.state.set_line_attribute("list", LineValue::Text(list)),
            None => {
                self.state.delete_line_attribute("list");
                self.state.delete_line_attribute("start");
            }
        }
        self.recalc_attrib_string();
    }

    fn text(&mut self, text: &str) {
        let mut txt = text.to_owned();
        while !txt.is_empty() {
            let mut rest = String::new();
            if self.state.pre_mode > 0 {
                match txt.split_once('\n') {
                    Some((first, tail)) => {
                        rest = tail.to_owned();
                        txt = first.to_owned();
                    }
                    None => rest.clear(),
                }
            }
            let mut txt2 = txt.clone();
            if self.state.pre_mode == 0 && txt.chars().all(|c| c == '\r' || c == '\n') {
                txt2.clear();
            }
            let at_line_start = self.lines.at_column_zero();
            if at_line_start {
                txt2 = txt2.trim_start_matches('\n').to_owned();
                if !self.state.line_attributes.is_empty() {
                    self.line_marker();
                }
            }
            let attribs = self.state.attrib_string.clone();
            self.lines.append(&textify(&txt2), &attribs);
            txt = rest;
            if !txt.is_empty() {
                self.start_new_line();
            }
        }
    }

    /// `collectContent(node, state)` for an element; `parent` is its parent's tag name.
    fn element(&mut self, e: &Element, parent: Option<&str>) -> Result<(), Malformed> {
        let local_attribs = self.state.local_attribs.take();
        let block = is_block(&e.name);
        if block {
            self.ensure_column_zero();
        }
        let start_line = self.lines.text.len() - 1;
        match e.name.as_str() {
            "br" => self.start_new_line(),
            "script" | "style" => {}
            _ if e.children.is_empty() => {}
            _ => {
                if !self.styled_element(e, parent)? {
                    // Etherpad returns at once for LibreOffice's list symbols: no block end,
                    // and `localAttribs` is left unrestored.
                    return Ok(());
                }
            }
        }
        if block {
            if self.lines.text.len() - 1 == start_line {
                self.start_new_line();
            } else {
                self.ensure_column_zero();
            }
        }
        self.state.local_attribs = local_attribs;
        Ok(())
    }

    /// The body of a non-empty element; `false` when Etherpad returns early.
    fn styled_element(&mut self, e: &Element, parent: Option<&str>) -> Result<bool, Malformed> {
        let name = e.name.as_str();
        let style = e.attr("style");
        let class = e.attr("class");
        let pre = name == "pre";
        if pre {
            self.state.pre_mode += 1;
        }
        if matches!(class, Some("Numbering_20_Symbols" | "Bullet_20_Symbols")) {
            return Ok(false);
        }
        let styled =
            |property: &str, value: &str| style.is_some_and(|s| style_says(s, property, value));
        if matches!(name, "b" | "strong") || styled("font-weight", "bold") {
            self.do_attrib("bold");
        }
        if matches!(name, "i" | "em") || styled("font-style", "italic") {
            self.do_attrib("italic");
        }
        if matches!(name, "u" | "ins") || styled("text-decoration", "underline") {
            self.do_attrib("underline");
        }
        if matches!(name, "s" | "del") || styled("text-decoration", "line-through") {
            self.do_attrib("strikethrough");
        }
        let mut old_list: Option<OldList> = None;
        if matches!(name, "ul" | "ol") {
            let list_type = self.list_type(e);
            old_list = Some(self.enter_list(list_type));
        } else if matches!(name, "div" | "p") && class.is_some_and(is_ace_line) {
            // `abrowser.chrome` with no browser: Etherpad throws here.
            return Err(Malformed("an ace-line element"));
        } else if name == "li" {
            self.list_item(parent)?;
        }
        for child in &e.children {
            match child {
                Node::Element(c) => self.element(c, Some(name))?,
                Node::Text(t) => self.text(t),
                Node::Ignorable => {}
            }
        }
        if pre {
            self.state.pre_mode -= 1;
        }
        if let Some(local) = self.state.local_attribs.clone() {
            for attrib in local {
                self.decrement_attrib(&attrib);
            }
        }
        if let Some(old) = old_list {
            self.exit_list(old);
        }
        Ok(true)
    }

    fn list_type(&self, e: &Element) -> String {
        let class = e.attr("class");
        let declared = class.and_then(declared_list_type);
        if let Some(t) = declared {
            return t;
        }
        let mut hint = class.filter(|c| !c.is_empty()).map(str::to_owned);
        if hint.is_none() {
            hint = e.children.iter().find_map(|c| match c {
                Node::Element(u) if u.name == "ul" => {
                    u.attr("class").filter(|c| !c.is_empty()).map(str::to_owned)
                }
                _ => None,
            });
        }
        let kind = if e.name == "ul" {
            let indent = hint.as_deref().is_some_and(|t| t.contains("indent"))
                || class.is_some_and(|c| c.contains("indent"));
            if indent { "indent" } else { "bullet" }
        } else {
            "number"
        };
        format!("{kind}{}", MAX_LIST_LEVEL.min(self.state.list_nesting + 1))
    }

    fn list_item(&mut self, parent: Option<&str>) -> Result<(), Malformed> {
        self.state
            .set_line_attribute("start", LineValue::Number(self.state.start.unwrap_or(0)));
        self.recalc_attrib_string();
        let Some(list) = self.state.list() else {
            // `state.lineAttributes.list.indexOf` on undefined: Etherpad throws.
            return Err(Malformed("a list item outside a list"));
        };
        let increment = |start: Option<i64>| start.map(|n| n + 1);
        if list.contains("number") && parent != Some("ol") {
            self.state.start = increment(self.state.start);
        }
        if parent == Some("ul") {
            self.state.start = increment(self.state.start);
        }
        Ok(())
    }

    fn finish(mut self) -> Collected {
        self.lines.text.pop();
        self.lines.runs.pop();
        let mut out = Collected::default();
        for (text, runs) in self.lines.text.into_iter().zip(self.lines.runs) {
            split_long_line(text, runs, &mut out);
        }
        out
    }
}

fn is_ace_line(class: &str) -> bool {
    class.match_indices("ace-line").any(|(at, _)| {
        (at == 0 || class[..at].ends_with(' '))
            && !class[at + "ace-line".len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// `/(?:^| )list-([a-z]+[0-9]+)\b/` on a list's class.
fn declared_list_type(class: &str) -> Option<String> {
    class.match_indices("list-").find_map(|(at, _)| {
        if at != 0 && !class[..at].ends_with(' ') {
            return None;
        }
        let rest = &class[at + "list-".len()..];
        let letters = rest.bytes().take_while(u8::is_ascii_lowercase).count();
        let digits = rest[letters..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let end = letters + digits;
        let boundary = !rest[end..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        (letters > 0 && digits > 0 && boundary).then(|| rest[..end].to_owned())
    })
}

/// `fixLongLines`: a line over 2010 characters is cut into lines of 2000.
fn split_long_line(text: String, runs: Vec<Run>, out: &mut Collected) {
    let units: Vec<u16> = text.encode_utf16().collect();
    if units.len() <= LINE_LIMIT + LINE_BUFFER {
        out.lines.push(text);
        out.runs.push(runs);
        return;
    }
    let mut runs = runs.into_iter().collect::<std::collections::VecDeque<_>>();
    for chunk in units.chunks(LINE_LIMIT) {
        let mut need = chunk.len();
        let mut line_runs = Vec::new();
        while need > 0 {
            let Some((attribs, n)) = runs.pop_front() else {
                break;
            };
            let take = n.min(need);
            line_runs.push((attribs.clone(), take));
            if n > take {
                runs.push_front((attribs, n - take));
            }
            need -= take;
        }
        out.lines.push(String::from_utf16_lossy(chunk));
        out.runs.push(line_runs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_classes_and_styles_are_read_as_etherpads_patterns() {
        assert_eq!(declared_list_type("x list-number2"), Some("number2".into()));
        assert_eq!(declared_list_type("list-bullet"), None);
        assert_eq!(declared_list_type("mylist-bullet1"), None);
        assert!(style_says(
            "color: red; Font-Weight:  bold",
            "font-weight",
            "bold"
        ));
        assert!(!style_says("font-weight: bolder", "font-weight", "bold"));
        assert!(is_ace_line("x ace-line"));
        assert!(!is_ace_line("ace-lines"));
        assert_eq!(textify("a\n b\tc\u{a0}"), "a b        c ");
    }
}
