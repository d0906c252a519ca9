//! Deki's documents: one element tree rendered as XML (Deki's native answer) or as JSON the way
//! Deki's `dream.out.format=json` renders XML (attributes as `"@name"`, text beside attributes
//! or children as `"#text"`, repeated children as arrays).

use axum::http::{HeaderMap, StatusCode, header};
use serde_json::{Map, Value};

use palimpsest_web::command::Reply;

/// An XML element.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Element {
    name: String,
    attrs: Vec<(String, String)>,
    text: Option<String>,
    children: Vec<Element>,
}

impl Element {
    /// An empty element.
    pub fn new(name: &str) -> Self {
        Element {
            name: name.to_owned(),
            ..Element::default()
        }
    }

    /// Adds an attribute.
    pub fn attr(mut self, name: &str, value: impl ToString) -> Self {
        self.attrs.push((name.to_owned(), value.to_string()));
        self
    }

    /// Sets the text.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// Adds a child.
    pub fn child(mut self, child: Element) -> Self {
        self.children.push(child);
        self
    }

    /// Adds a child holding only text.
    pub fn leaf(self, name: &str, text: impl Into<String>) -> Self {
        self.child(Element::new(name).text(text))
    }

    /// Adds children.
    pub fn children(mut self, children: impl IntoIterator<Item = Element>) -> Self {
        self.children.extend(children);
        self
    }

    /// The element as Deki's JSON: `{"<name>": ...}` without the outer name (as Deki answers).
    pub fn to_json(&self) -> Value {
        if self.attrs.is_empty() && self.children.is_empty() {
            return Value::String(self.text.clone().unwrap_or_default());
        }
        let mut map = Map::new();
        for (name, value) in &self.attrs {
            map.insert(format!("@{name}"), Value::String(value.clone()));
        }
        if let Some(text) = &self.text {
            map.insert("#text".into(), Value::String(text.clone()));
        }
        for child in &self.children {
            let value = child.to_json();
            match map.get_mut(&child.name) {
                Some(Value::Array(items)) => items.push(value),
                Some(existing) => *existing = Value::Array(vec![existing.take(), value]),
                None => {
                    map.insert(child.name.clone(), value);
                }
            }
        }
        Value::Object(map)
    }

    /// The element as XML.
    pub fn to_xml(&self) -> String {
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>");
        self.write_xml(&mut out);
        out
    }

    fn write_xml(&self, out: &mut String) {
        out.push('<');
        out.push_str(&self.name);
        for (name, value) in &self.attrs {
            out.push_str(&format!(" {name}=\"{}\"", escape(value)));
        }
        if self.text.is_none() && self.children.is_empty() {
            out.push_str(" />");
            return;
        }
        out.push('>');
        if let Some(text) = &self.text {
            out.push_str(&escape(text));
        }
        for child in &self.children {
            child.write_xml(out);
        }
        out.push_str(&format!("</{}>", self.name));
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// How the client wants documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// JSON (the default).
    Json,
    /// XML, when `Accept` names `application/xml` or `text/xml` (or `dream.out.format=xml`).
    Xml,
}

impl Format {
    /// The format asked by the request's `Accept` header.
    pub fn of(headers: &HeaderMap) -> Format {
        let accept = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if accept.contains("application/xml") || accept.contains("text/xml") {
            Format::Xml
        } else {
            Format::Json
        }
    }

    /// `element` as a reply in this format.
    pub fn reply(self, status: StatusCode, element: &Element) -> Reply {
        match self {
            Format::Json => Reply::json(status, &element.to_json()),
            Format::Xml => Reply::new(status, "application/xml; charset=utf-8", element.to_xml()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_element_renders_as_deki_json_and_as_xml() {
        let files = Element::new("files")
            .attr("count", 2)
            .child(
                Element::new("file")
                    .attr("id", 1)
                    .leaf("filename", "a&b.png"),
            )
            .child(Element::new("file").attr("id", 2).leaf("filename", "c.png"));
        assert_eq!(
            files.to_json(),
            json!({"@count": "2", "file": [{"@id": "1", "filename": "a&b.png"}, {"@id": "2", "filename": "c.png"}]})
        );
        assert_eq!(
            files.to_xml(),
            "<?xml version=\"1.0\" encoding=\"utf-8\"?><files count=\"2\"><file id=\"1\"><filename>a&amp;b.png</filename></file><file id=\"2\"><filename>c.png</filename></file></files>"
        );
        let contents = Element::new("contents")
            .attr("type", "text/plain")
            .text("hi");
        assert_eq!(
            contents.to_json(),
            json!({"@type": "text/plain", "#text": "hi"})
        );
    }
}
