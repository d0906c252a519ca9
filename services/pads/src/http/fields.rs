//! The fields of an API call, gathered as Etherpad gathers them: request headers, then the query
//! string, then (for POST) the form or JSON body, later sources overriding earlier ones.

use super::envelope::EnvelopeError;
use super::urlencoded;
use axum::body::Bytes;
use axum::extract::{FromRequest, Multipart, Request};
use axum::http::{HeaderMap, header};
use serde_json::Value;
use std::collections::HashMap;

/// Largest request body read (Etherpad pads hold at most 100k characters of initial text; a
/// `setText` body is allowed a few megabytes).
const MAX_BODY: usize = 16 * 1024 * 1024;

/// The fields of a call, by name. Query and form values are strings (a repeated query key is an
/// array); a JSON body keeps its JSON types.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Fields(HashMap<String, Value>);

impl Fields {
    /// The value of field `name`.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.0.get(name)
    }

    /// Sets field `name`.
    pub fn set(&mut self, name: &str, value: Value) {
        self.0.insert(name.to_owned(), value);
    }

    /// Fields from `name=value` pairs, repeated names becoming arrays (as Express' query parser
    /// does).
    fn merge_query(&mut self, pairs: Vec<(String, String)>) {
        let mut grouped: Vec<(String, Vec<String>)> = Vec::new();
        for (k, v) in pairs {
            match grouped.iter_mut().find(|(g, _)| *g == k) {
                Some((_, vs)) => vs.push(v),
                None => grouped.push((k, vec![v])),
            }
        }
        for (k, mut vs) in grouped {
            let value = if vs.len() == 1 {
                Value::String(vs.remove(0))
            } else {
                Value::Array(vs.into_iter().map(Value::String).collect())
            };
            self.0.insert(k, value);
        }
    }

    /// Form fields: a repeated name keeps its first value (as Etherpad does with formidable).
    fn merge_form(&mut self, pairs: Vec<(String, String)>) {
        let mut seen = std::collections::HashSet::new();
        for (k, v) in pairs {
            if seen.insert(k.clone()) {
                self.0.insert(k, Value::String(v));
            }
        }
    }
}

/// Header fields: every header whose value is text, by its lower-case name.
fn from_headers(headers: &HeaderMap) -> Fields {
    let mut fields = Fields::default();
    for (name, value) in headers {
        if let Ok(v) = value.to_str() {
            fields.set(name.as_str(), Value::String(v.to_owned()));
        }
    }
    fields
}

/// The fields of the request's head alone: headers, then the query (no body read).
pub fn of_head(request: &Request) -> Fields {
    let mut fields = from_headers(request.headers());
    if let Some(q) = request.uri().query() {
        fields.merge_query(urlencoded::pairs(q));
    }
    fields
}

/// Gathers the fields of `request`: headers, query, and for POST the body
/// (`application/x-www-form-urlencoded`, `multipart/form-data` or `application/json`).
pub async fn gather(request: Request) -> Result<Fields, EnvelopeError> {
    let mut fields = of_head(&request);
    if request.method() != axum::http::Method::POST {
        return Ok(fields);
    }
    let content_type = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if content_type.starts_with("multipart/form-data") {
        let mut multipart = Multipart::from_request(request, &())
            .await
            .map_err(|e| EnvelopeError::bad_request(format!("malformed multipart body: {e}")))?;
        let mut pairs = Vec::new();
        while let Some(field) = multipart
            .next_field()
            .await
            .map_err(|e| EnvelopeError::bad_request(format!("malformed multipart body: {e}")))?
        {
            let name = field.name().unwrap_or_default().to_owned();
            let text = field.text().await.map_err(|e| {
                EnvelopeError::bad_request(format!("malformed multipart body: {e}"))
            })?;
            pairs.push((name, text));
        }
        fields.merge_form(pairs);
        return Ok(fields);
    }
    let body: Bytes = axum::body::to_bytes(request.into_body(), MAX_BODY)
        .await
        .map_err(|e| EnvelopeError::bad_request(format!("cannot read the request body: {e}")))?;
    if body.is_empty() {
        return Ok(fields);
    }
    if content_type.starts_with("application/json") {
        let value: Value = serde_json::from_slice(&body)
            .map_err(|e| EnvelopeError::bad_request(format!("malformed JSON body: {e}")))?;
        let Value::Object(map) = value else {
            return Err(EnvelopeError::bad_request(
                "the JSON body must be an object",
            ));
        };
        for (k, v) in map {
            let v = match v {
                Value::Array(mut items) if !items.is_empty() => items.remove(0),
                other => other,
            };
            fields.set(&k, v);
        }
    } else {
        let text = std::str::from_utf8(&body)
            .map_err(|_| EnvelopeError::bad_request("the form body is not UTF-8"))?;
        fields.merge_form(urlencoded::pairs(text));
    }
    Ok(fields)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;

    #[tokio::test]
    async fn body_overrides_query_which_overrides_headers() {
        let request = Request::builder()
            .method("POST")
            .uri("/x?padID=q&text=q&rev=1&rev=2")
            .header("apikey", "k")
            .header("content-type", "application/json")
            .body(Body::from(r#"{"text":"b","time":12}"#))
            .expect("request");
        let f = gather(request).await.expect("fields");
        assert_eq!(f.get("apikey"), Some(&Value::String("k".into())));
        assert_eq!(f.get("padID"), Some(&Value::String("q".into())));
        assert_eq!(f.get("text"), Some(&Value::String("b".into())));
        assert_eq!(f.get("time"), Some(&serde_json::json!(12)));
        assert_eq!(f.get("rev"), Some(&serde_json::json!(["1", "2"])));
    }

    #[tokio::test]
    async fn form_bodies_and_bad_json() {
        let request = Request::builder()
            .method("POST")
            .uri("/x")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from("text=a+b%0A&text=second"))
            .expect("request");
        let f = gather(request).await.expect("fields");
        assert_eq!(f.get("text"), Some(&Value::String("a b\n".into())));
        let bad = Request::builder()
            .method("POST")
            .uri("/x")
            .header("content-type", "application/json")
            .body(Body::from("{nope"))
            .expect("request");
        let err = gather(bad).await.expect_err("malformed");
        assert_eq!(err.code, 1);
        assert_eq!(err.status, axum::http::StatusCode::BAD_REQUEST);
    }
}
