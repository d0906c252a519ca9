//! Deki's XML request documents, read into the JSON form the handlers take: an attribute is
//! `"@name"`, an element's text `"#text"` (or the element itself, a string, when it has neither
//! attributes nor children), a child element goes under its name, repeated children as an
//! array. A Deki client that sends `<properties><property name="…"><contents type="…">…`
//! is then served exactly like one that sends the JSON form.
//!
//! Only XML's own five entities and character references are expanded: no DTD is read, so
//! no external or recursive entity can be (quick-xml does not resolve them either), and
//! elements nest at most [`MAX_DEPTH`] deep.

use quick_xml::Reader;
use quick_xml::events::{BytesRef, BytesStart, Event};
use serde_json::{Map, Value};

/// How deep elements may nest; Deki's documents are three levels deep.
const MAX_DEPTH: usize = 32;

/// Why a body is not an XML document we read.
#[derive(Debug, thiserror::Error)]
#[error("the body is not a well-formed XML document: {0}")]
pub struct XmlError(String);

fn error(e: impl std::fmt::Display) -> XmlError {
    XmlError(e.to_string())
}

/// An element being read: its name, its attributes and children so far, its text.
struct Open {
    name: String,
    fields: Map<String, Value>,
    text: String,
}

/// The root element's name and its value in the JSON form.
pub fn document(body: &[u8]) -> Result<(String, Value), XmlError> {
    let body = std::str::from_utf8(body).map_err(error)?;
    let mut reader = Reader::from_str(body);
    let mut stack: Vec<Open> = Vec::new();
    let mut root = None;
    loop {
        match reader.read_event().map_err(error)? {
            Event::Start(start) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(XmlError(format!("elements nest over {MAX_DEPTH} deep")));
                }
                stack.push(open(&start)?);
            }
            Event::Empty(start) => close(open(&start)?, &mut stack, &mut root)?,
            Event::End(_) => {
                let element = stack
                    .pop()
                    .ok_or_else(|| error("an end tag without a start"))?;
                close(element, &mut stack, &mut root)?;
            }
            Event::Text(text) => append_text(&mut stack, &text.decode().map_err(error)?)?,
            Event::CData(data) => append_text(&mut stack, &data.decode().map_err(error)?)?,
            Event::GeneralRef(reference) => append_text(&mut stack, &expand(&reference)?)?,
            Event::Eof => break,
            // The declaration, comments, processing instructions, a DOCTYPE: nothing to read.
            _ => {}
        }
    }
    if let Some(open) = stack.last() {
        return Err(XmlError(format!("<{}> is not closed", open.name)));
    }
    root.ok_or_else(|| error("no root element"))
}

/// Whether the request's `Content-Type` names XML (`application/xml`, `text/xml`, `…+xml`).
pub fn is_xml(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|media| {
            let media = media.trim().to_ascii_lowercase();
            media == "application/xml" || media == "text/xml" || media.ends_with("+xml")
        })
        .unwrap_or(false)
}

fn open(start: &BytesStart<'_>) -> Result<Open, XmlError> {
    let name = String::from_utf8(start.name().as_ref().to_vec()).map_err(error)?;
    let mut fields = Map::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(error)?;
        let key = String::from_utf8(attribute.key.as_ref().to_vec()).map_err(error)?;
        let value = attribute.unescape_value().map_err(error)?;
        fields.insert(format!("@{key}"), Value::String(value.into_owned()));
    }
    Ok(Open {
        name,
        fields,
        text: String::new(),
    })
}

/// Text outside the root element may only be white space.
fn append_text(stack: &mut [Open], text: &str) -> Result<(), XmlError> {
    match stack.last_mut() {
        Some(open) => open.text.push_str(text),
        None if text.trim().is_empty() => {}
        None => return Err(error("text outside the root element")),
    }
    Ok(())
}

/// A character reference, or one of XML's five entities; any other entity is refused.
fn expand(reference: &BytesRef<'_>) -> Result<String, XmlError> {
    if reference.is_char_ref() {
        let c = reference.resolve_char_ref().map_err(error)?;
        return c
            .map(String::from)
            .ok_or_else(|| error("a character reference to no character"));
    }
    let name = reference.decode().map_err(error)?;
    quick_xml::escape::resolve_predefined_entity(&name)
        .map(str::to_owned)
        .ok_or_else(|| XmlError(format!("unknown entity &{name};")))
}

/// Ends `element`: into its parent, or as the root.
fn close(
    element: Open,
    stack: &mut [Open],
    root: &mut Option<(String, Value)>,
) -> Result<(), XmlError> {
    let Open {
        name,
        mut fields,
        text,
    } = element;
    let value = if fields.is_empty() {
        Value::String(text)
    } else {
        if !text.trim().is_empty() {
            fields.insert("#text".into(), Value::String(text));
        }
        Value::Object(fields)
    };
    match stack.last_mut() {
        Some(parent) => add_child(&mut parent.fields, name, value),
        None if root.is_none() => *root = Some((name, value)),
        None => return Err(error("more than one root element")),
    }
    Ok(())
}

/// A child under its name; a second child of that name turns the entry into an array.
fn add_child(fields: &mut Map<String, Value>, name: String, value: Value) {
    match fields.get_mut(&name) {
        Some(Value::Array(items)) => items.push(value),
        Some(first) => {
            let first = first.take();
            fields.insert(name, Value::Array(vec![first, value]));
        }
        None => {
            fields.insert(name, value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_properties_batch_reads_as_its_json_form() {
        let xml = br#"<?xml version="1.0"?>
            <properties>
              <property name="urn:x#a" etag="1.r1_ts2"><contents type="text/plain">A &amp; &#66;</contents></property>
              <property name="b"><contents>plain</contents></property>
              <property name="gone"/>
            </properties>"#;
        let (root, value) = document(xml).expect("document");
        assert_eq!(root, "properties");
        assert_eq!(
            value,
            json!({"property": [
                {"@name": "urn:x#a", "@etag": "1.r1_ts2", "contents": {"@type": "text/plain", "#text": "A & B"}},
                {"@name": "b", "contents": "plain"},
                {"@name": "gone"}
            ]})
        );
    }

    #[test]
    fn what_is_not_a_plain_document_is_refused() {
        for bad in [
            &b"<a><b></a>"[..],
            b"<a>&lol;</a>",
            b"<a/><b/>",
            b"text<a/>",
            b"",
            b"<a>",
        ] {
            assert!(document(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
        let deep = format!(
            "{}{}",
            "<a>".repeat(MAX_DEPTH + 1),
            "</a>".repeat(MAX_DEPTH + 1)
        );
        assert!(document(deep.as_bytes()).is_err());
    }
}
