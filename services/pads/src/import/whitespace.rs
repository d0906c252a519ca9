//! `hast-util-minify-whitespace` (what `rehype-minify-whitespace` runs, with `newlines: false`),
//! on the body: runs of HTML white space collapse to one space, and a space is dropped at the
//! start and end of a block and after another collapsible space. `pre`, `textarea`, `script`,
//! `style`, `listing`, `plaintext` and `xmp` keep their white space; `nobr` (and `td`/`th` with
//! `nowrap`) only collapse it.

use super::tree::{Element, Node};

/// Elements that start and end a block of white space (the list `hast-util-minify-whitespace`
/// keeps, `br` and `wbr` included).
const BLOCKS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "br",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "legend",
    "li",
    "listing",
    "main",
    "menu",
    "nav",
    "ol",
    "optgroup",
    "option",
    "p",
    "plaintext",
    "pre",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
    "wbr",
    "xmp",
];

/// Elements that are content in themselves: white space next to them counts.
const CONTENT: &[&str] = &[
    "button", "input", "select", "textarea", "audio", "canvas", "embed", "iframe", "img", "math",
    "object", "picture", "svg", "video",
];

/// Elements whose content is never shown: looking ahead for a boundary skips them.
const SKIPPABLE: &[&str] = &[
    "area", "base", "basefont", "dialog", "datalist", "head", "link", "meta", "noembed",
    "noframes", "param", "rp", "script", "source", "style", "template", "track", "title",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Space {
    Normal,
    Pre,
    PreWrap,
    Nowrap,
}

#[derive(Debug, Clone, Copy)]
struct State {
    before: bool,
    after: bool,
    space: Space,
}

#[derive(Debug, Clone, Copy, Default)]
struct Outcome {
    ignore: bool,
    strip_at_start: bool,
    remove: bool,
}

/// Minifies the white space of `body` in place.
pub fn minify_body(body: &mut Element) {
    let state = State {
        before: true,
        after: true,
        space: Space::Normal,
    };
    minify_element(body, state);
}

fn is(node: &Node, names: &[&str]) -> bool {
    matches!(node, Node::Element(e) if names.contains(&e.name.as_str()))
}

fn is_html_space(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ')
}

/// Every run of `[\t\n\v\f\r ]` as one space.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_run = false;
    for c in text.chars() {
        if is_html_space(c) {
            if !in_run {
                out.push(' ');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

fn minify(node: &mut Node, state: State) -> Outcome {
    match node {
        Node::Element(e) => minify_element(e, state),
        Node::Text(text) => match state.space {
            Space::Normal => minify_text(text, state),
            Space::Nowrap => {
                *text = collapse(text);
                Outcome::default()
            }
            Space::Pre | Space::PreWrap => Outcome::default(),
        },
        Node::Ignorable => Outcome {
            ignore: true,
            ..Outcome::default()
        },
    }
}

fn minify_element(e: &mut Element, state: State) -> Outcome {
    let mut settings = state;
    if BLOCKS.contains(&e.name.as_str()) {
        settings.before = true;
        settings.after = true;
    }
    settings.space = infer_space(e, state.space);
    all(&mut e.children, settings)
}

fn minify_text(text: &mut String, state: State) -> Outcome {
    let value = collapse(text);
    let mut outcome = Outcome::default();
    let mut start = 0;
    let mut end = value.len();
    if state.before && value.starts_with(' ') {
        start += 1;
    }
    if start != end && value.ends_with(' ') {
        if state.after {
            end -= 1;
        } else {
            outcome.strip_at_start = true;
        }
    }
    if start >= end {
        outcome.remove = true;
    } else {
        *text = value[start..end].to_owned();
    }
    outcome
}

fn all(children: &mut Vec<Node>, state: State) -> Outcome {
    let mut before = state.before;
    let after = state.after;
    let mut index = 0;
    while index < children.len() {
        let child_state = State {
            after: collapsable_after(&children[index + 1..], Some(after)).unwrap_or(after),
            before,
            ..state
        };
        let result = minify(&mut children[index], child_state);
        let current = if result.remove {
            children.remove(index);
            // hast's loop steps back one and then looks at that (previous) child
            index.checked_sub(1)
        } else {
            if !result.ignore {
                before = result.strip_at_start;
            }
            Some(index)
        };
        if current.is_some_and(|i| is(&children[i], CONTENT)) {
            before = false;
        }
        if !result.remove {
            index += 1;
        }
    }
    Outcome {
        strip_at_start: before || after,
        ..Outcome::default()
    }
}

fn collapsable_after(nodes: &[Node], after: Option<bool>) -> Option<bool> {
    for node in nodes {
        let mut result = infer_boundary(node);
        if result.is_none()
            && let Node::Element(e) = node
            && !skippable(node)
        {
            result = collapsable_after(&e.children, None);
        }
        if result.is_some() {
            return result;
        }
    }
    after
}

fn infer_boundary(node: &Node) -> Option<bool> {
    match node {
        Node::Element(_) if is(node, CONTENT) => Some(false),
        Node::Element(_) if is(node, BLOCKS) => Some(true),
        Node::Element(_) | Node::Ignorable => None,
        Node::Text(t)
            if t.chars()
                .all(|c| matches!(c, ' ' | '\t' | '\n' | '\u{c}' | '\r')) =>
        {
            None
        }
        Node::Text(_) => Some(false),
    }
}

fn skippable(node: &Node) -> bool {
    match node {
        Node::Element(e) => e.attr("hidden").is_some() || SKIPPABLE.contains(&e.name.as_str()),
        Node::Ignorable => true,
        Node::Text(_) => false,
    }
}

fn infer_space(e: &Element, inherited: Space) -> Space {
    match e.name.as_str() {
        "listing" | "plaintext" | "script" | "style" | "xmp" => Space::Pre,
        "nobr" => Space::Nowrap,
        "pre" if e.attr("wrap").is_some() => Space::PreWrap,
        "pre" => Space::Pre,
        "td" | "th" if e.attr("nowrap").is_some() => Space::Nowrap,
        "textarea" => Space::PreWrap,
        _ => inherited,
    }
}

#[cfg(test)]
mod tests {
    use super::super::tree::parse_body;
    use super::*;

    fn texts(e: &Element, out: &mut Vec<String>) {
        for child in &e.children {
            match child {
                Node::Text(t) => out.push(t.clone()),
                Node::Element(e) => texts(e, out),
                Node::Ignorable => {}
            }
        }
    }

    fn minified(html: &str) -> Vec<String> {
        let mut body = parse_body(html);
        minify_body(&mut body);
        let mut out = Vec::new();
        texts(&body, &mut out);
        out
    }

    #[test]
    fn runs_collapse_and_block_edges_are_trimmed() {
        assert_eq!(
            minified("<p>  many   spaces\n and  </p>\n\n<p>\n second </p>"),
            ["many spaces and", "second"]
        );
        assert_eq!(minified("<p>a <b> b </b> c</p>"), ["a ", "b ", "c"]);
        assert_eq!(minified("<pre> keep\n  this </pre>"), [" keep\n  this "]);
    }
}
