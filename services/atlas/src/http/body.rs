//! Request bodies: JSON objects read field by field, so each bad field gets its own 400.
//!
//! An empty body counts as `{}`. Actor fields accept the names clients of the original send:
//! the first present of the names listed for each route.

use axum::body::Bytes;
use axum::extract::Request;
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use palimpsest_web::ApiError;
use serde_json::{Map, Value};

/// A request's JSON object.
#[derive(Debug, Clone, Default)]
pub struct Body(pub Map<String, Value>);

impl Body {
    /// Parses the bytes of a request body.
    pub fn parse(bytes: &Bytes) -> Result<Body, ApiError> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(Body::default());
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(m)) => Ok(Body(m)),
            Ok(_) => Err(ApiError::bad_request("request body must be a JSON object")),
            Err(e) => Err(ApiError::bad_request(format!(
                "request body is not JSON: {e}"
            ))),
        }
    }

    /// The first present, non-null of `keys`, which must be a string.
    pub fn string(&self, keys: &[&str]) -> Result<Option<String>, ApiError> {
        self.first(keys, false)
    }

    /// The first present, non-null, non-blank of `keys` as an id: a string, or an integer
    /// taken as its digits (user ids of the original's clients may be numbers).
    pub fn id(&self, keys: &[&str]) -> Result<Option<String>, ApiError> {
        Ok(self.first(keys, true)?.filter(|s| !s.trim().is_empty()))
    }

    fn first(&self, keys: &[&str], integers: bool) -> Result<Option<String>, ApiError> {
        for key in keys {
            match self.0.get(*key) {
                None | Some(Value::Null) => continue,
                Some(Value::String(s)) => return Ok(Some(s.clone())),
                Some(Value::Number(n)) if integers && (n.is_i64() || n.is_u64()) => {
                    return Ok(Some(n.to_string()));
                }
                Some(Value::Number(n)) if integers && whole_id(n).is_some() => {
                    return Ok(whole_id(n));
                }
                Some(_) => return Err(ApiError::bad_request(format!("{key} must be a string"))),
            }
        }
        Ok(None)
    }

    /// An optional integer field.
    pub fn integer(&self, key: &str) -> Result<Option<i64>, ApiError> {
        match self.0.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_i64()
                .or_else(|| v.as_number().and_then(whole_i64))
                .map(Some)
                .ok_or_else(|| ApiError::bad_request(format!("{key} must be an integer"))),
        }
    }

    /// Whether `key` is present (even as null).
    pub fn has(&self, key: &str) -> bool {
        self.0.contains_key(key)
    }

    /// A field's raw value.
    pub fn value(&self, key: &str) -> Option<&Value> {
        self.0.get(key)
    }
}

/// 2^53: the widest whole numbers a float holds exactly. An integer literal past `i64`/`u64`
/// also arrives as a float (rounded), so only floats within this are taken as integers.
const MAX_EXACT_FLOAT: f64 = 9_007_199_254_740_992.0;

/// A whole number written with a fraction (`7.0`) as an `i64`: JSON does not tell `7` from
/// `7.0`, and JSON Schema's `integer` is both.
fn whole_i64(n: &serde_json::Number) -> Option<i64> {
    let f = n.as_f64()?;
    (f.fract() == 0.0 && f.abs() <= MAX_EXACT_FLOAT).then_some(f as i64)
}

/// [`whole_i64`] as an id's digits.
fn whole_id(n: &serde_json::Number) -> Option<String> {
    whole_i64(n).map(|w| w.to_string())
}

/// Refuses with 415 a write whose body is declared as anything but JSON (a form or `text/plain`
/// body would otherwise be read as JSON); a body without a `Content-Type` is refused too, an
/// empty one without it is not (writes whose fields are all optional).
pub async fn json_only(request: Request, next: Next) -> Response {
    if matches!(*request.method(), Method::GET | Method::HEAD) {
        return next.run(request).await;
    }
    let headers = request.headers();
    let declared = headers
        .get(header::CONTENT_TYPE)
        .map(|v| v.to_str().unwrap_or("").to_ascii_lowercase());
    let json = declared.as_deref().is_some_and(|t| {
        let essence = t.split(';').next().unwrap_or("").trim();
        essence == "application/json" || essence.ends_with("+json")
    });
    let has_body = headers
        .get(header::CONTENT_LENGTH)
        .is_some_and(|n| n.as_bytes() != b"0")
        || headers.contains_key(header::TRANSFER_ENCODING);
    if json || (declared.is_none() && !has_body) {
        return next.run(request).await;
    }
    ApiError::new(
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "the request body must be JSON (Content-Type: application/json)",
    )
    .into_response()
}
