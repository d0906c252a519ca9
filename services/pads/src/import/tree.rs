//! The body of a parsed HTML document as the import walks it: elements with the few attributes
//! the import reads, text, and nodes it passes over (comments, doctypes).

use scraper::Html;

/// One node of the body.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// An element.
    Element(Element),
    /// A text node.
    Text(String),
    /// A comment or another node that contributes nothing (whitespace minification ignores it).
    Ignorable,
}

/// An element: its lower-case tag name, attributes and children.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    /// The tag name, lower case (`p`, `ul`, `strong`, …).
    pub name: String,
    /// Its attributes, as written.
    pub attrs: Vec<(String, String)>,
    /// Its children.
    pub children: Vec<Node>,
}

impl Element {
    /// An element without attributes or children.
    pub fn empty(name: &str) -> Element {
        Element {
            name: name.to_owned(),
            attrs: Vec::new(),
            children: Vec::new(),
        }
    }

    /// The value of attribute `name`, if present (`getAttribute`).
    pub fn attr(&self, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Parses `html` as a document (as rehype and jsdom do) and returns its `<body>`.
pub fn parse_body(html: &str) -> Element {
    let document = Html::parse_document(html);
    let body = document
        .tree
        .root()
        .descendants()
        .find(|n| n.value().as_element().is_some_and(|e| e.name() == "body"));
    match body {
        Some(body) => convert_element(body),
        None => Element::empty("body"),
    }
}

fn convert(node: ego_tree::NodeRef<'_, scraper::Node>) -> Node {
    match node.value() {
        scraper::Node::Element(_) => Node::Element(convert_element(node)),
        scraper::Node::Text(text) => Node::Text(text.text.to_string()),
        _ => Node::Ignorable,
    }
}

fn convert_element(node: ego_tree::NodeRef<'_, scraper::Node>) -> Element {
    let (name, attrs) = match node.value().as_element() {
        Some(e) => (
            e.name().to_ascii_lowercase(),
            e.attrs()
                .map(|(k, v)| (k.to_owned(), v.to_owned()))
                .collect(),
        ),
        None => (String::new(), Vec::new()),
    };
    Element {
        name,
        attrs,
        children: node.children().map(convert).collect(),
    }
}
