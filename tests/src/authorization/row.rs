//! One row of a context's table: an operation, its policy, and the minimal request that tries
//! it on the user's objects.
//!
//! Path parameters (`{db}`) are filled from the context's fixture variables of the same name
//! unless the row maps them ([`Row::param`]); `${name}` in a mapped parameter, the query or the
//! body is replaced by the fixture variable `name`.

use super::Policy;
use std::collections::HashMap;

/// A request body.
#[derive(Debug, Clone)]
pub struct Body {
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its text, with `${name}` placeholders.
    pub text: String,
}

/// An operation and how it is tried.
#[derive(Debug, Clone)]
pub struct Row {
    /// The HTTP method, upper case.
    pub method: &'static str,
    /// The path template as the document names it, server prefix included (`/docs/{db}`).
    pub path: String,
    /// Who may call it.
    pub policy: Policy,
    /// Path parameters mapped to other fixture values (`id` → `${section}`).
    pub params: Vec<(&'static str, String)>,
    /// The query string, without `?`.
    pub query: String,
    /// The body.
    pub body: Option<Body>,
    /// Extra headers.
    pub headers: Vec<(&'static str, String)>,
    /// Whether it removes the user's objects (tried after every other allowed request).
    pub destroys: bool,
    /// For a route that answers 2xx and refuses item by item (CouchDB's `_bulk_docs`): the text
    /// a refused item's answer holds (`"forbidden"`); a refusal may then be a 2xx holding it.
    pub refused_in_body: Option<&'static str>,
    /// Whether the operation is in an OpenAPI document (a route outside every document, such as
    /// `/v1` or `/pads/ext/…`, is listed by hand).
    pub documented: bool,
}

impl Row {
    /// A row for `method path`, held to `policy`.
    pub fn new(method: &'static str, path: impl Into<String>, policy: Policy) -> Row {
        Row {
            method,
            path: path.into(),
            policy,
            params: Vec::new(),
            query: String::new(),
            body: None,
            headers: Vec::new(),
            destroys: method == "DELETE",
            refused_in_body: None,
            documented: true,
        }
    }

    /// Fills the path parameter `name` with `value` (placeholders allowed).
    pub fn param(mut self, name: &'static str, value: &str) -> Row {
        self.params.push((name, value.to_owned()));
        self
    }

    /// The query string.
    pub fn query(mut self, query: &str) -> Row {
        self.query = query.to_owned();
        self
    }

    /// A JSON body.
    pub fn json(self, text: &str) -> Row {
        self.body("application/json", text)
    }

    /// A body of `content_type`.
    pub fn body(mut self, content_type: &'static str, text: &str) -> Row {
        self.body = Some(Body {
            content_type,
            text: text.to_owned(),
        });
        self
    }

    /// An extra header.
    pub fn header(mut self, name: &'static str, value: &str) -> Row {
        self.headers.push((name, value.to_owned()));
        self
    }

    /// Marks it as removing the user's objects, whatever its method.
    pub fn destroying(mut self) -> Row {
        self.destroys = true;
        self
    }

    /// Marks it as refusing item by item in a 2xx answer that holds `marker`.
    pub fn refuses_in_body(mut self, marker: &'static str) -> Row {
        self.refused_in_body = Some(marker);
        self
    }

    /// Marks it as a route outside every OpenAPI document.
    pub fn undocumented(mut self) -> Row {
        self.documented = false;
        self
    }

    /// `METHOD /path`, as failures name it.
    pub fn operation(&self) -> String {
        format!("{} {}", self.method, self.path)
    }

    /// The path with its parameters filled, or the name of a parameter without a value.
    pub fn fill_path(&self, vars: &HashMap<String, String>) -> Result<String, String> {
        let mut out = String::new();
        let mut rest = self.path.as_str();
        while let Some(open) = rest.find('{') {
            out.push_str(&rest[..open]);
            let close = rest[open..]
                .find('}')
                .map(|c| open + c)
                .ok_or_else(|| format!("unclosed parameter in {}", self.path))?;
            let name = &rest[open + 1..close];
            let value = match self.params.iter().find(|(p, _)| *p == name) {
                Some((_, mapped)) => substitute(mapped, vars)?,
                None => vars
                    .get(name)
                    .cloned()
                    .ok_or_else(|| format!("no fixture value for path parameter {{{name}}}"))?,
            };
            out.push_str(&value);
            rest = &rest[close + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// `text` with every `${name}` replaced by the fixture variable `name`.
pub fn substitute(text: &str, vars: &HashMap<String, String>) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .map(|e| start + e)
            .ok_or_else(|| format!("unclosed placeholder in {text}"))?;
        let name = &rest[start + 2..end];
        let value = vars
            .get(name)
            .ok_or_else(|| format!("no fixture value for ${{{name}}}"))?;
        out.push_str(value);
        rest = &rest[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> HashMap<String, String> {
        [("db", "alpha"), ("doc", "d1"), ("rev", "1-abc")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn a_path_is_filled_from_the_fixtures_and_the_rows_mappings() {
        let row =
            Row::new("GET", "/docs/{db}/{doc}/{name}", Policy::Owner).param("name", "att-${doc}");
        assert_eq!(
            row.fill_path(&vars()),
            Ok("/docs/alpha/d1/att-d1".to_owned())
        );
        let missing = Row::new("GET", "/docs/{nope}", Policy::Owner);
        assert!(missing.fill_path(&vars()).is_err());
    }

    #[test]
    fn placeholders_are_replaced_and_json_braces_kept() {
        let text = r#"{"_id": "${doc}", "_rev": "${rev}"}"#;
        assert_eq!(
            substitute(text, &vars()),
            Ok(r#"{"_id": "d1", "_rev": "1-abc"}"#.to_owned())
        );
        assert!(substitute("${unknown}", &vars()).is_err());
    }
}
