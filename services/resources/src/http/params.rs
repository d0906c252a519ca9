//! Reading what a request names: ids, revisions, names, MIME types, the head the client saw.
//! Every failure is a 400 that says which parameter was wrong.

use crate::resource::Expect;
use axum::http::{HeaderMap, header};
use chrono::{DateTime, Utc};
use palimpsest_web::ApiError;

/// Longest name (Deki's `varchar(255)`), in characters.
const MAX_NAME: usize = 255;

/// The request's time, whole seconds (Deki's `datetime`).
pub fn now() -> DateTime<Utc> {
    let now = Utc::now();
    DateTime::from_timestamp(now.timestamp(), 0).unwrap_or(now)
}

/// A positive integer id from the path or query.
pub fn id(text: &str, what: &str) -> Result<i64, ApiError> {
    match text.trim().parse::<i64>() {
        Ok(id) if id > 0 && id <= i64::from(u32::MAX) => Ok(id),
        _ => Err(ApiError::bad_request(format!(
            "{what} must be a positive integer, got `{text}`"
        ))),
    }
}

/// `revision=head|N`: `None` for the head.
pub fn revision(text: Option<&str>) -> Result<Option<i64>, ApiError> {
    match text.map(str::trim) {
        None | Some("") => Ok(None),
        Some(t) if t.eq_ignore_ascii_case("head") => Ok(None),
        Some(t) => id(t, "revision").map(Some),
    }
}

/// A file name or property key: 1-255 characters, no control characters.
pub fn name(text: &str, what: &str) -> Result<String, ApiError> {
    let count = text.chars().count();
    if count == 0 || count > MAX_NAME {
        return Err(ApiError::bad_request(format!(
            "{what} must be 1-{MAX_NAME} characters, got {count}"
        )));
    }
    if text.chars().any(char::is_control) {
        return Err(ApiError::bad_request(format!(
            "{what} must not contain control characters"
        )));
    }
    Ok(text.to_owned())
}

/// The body's MIME type from `Content-Type` (default `default`), at most 255 characters.
pub fn mimetype(headers: &HeaderMap, default: &str) -> Result<String, ApiError> {
    let Some(value) = headers.get(header::CONTENT_TYPE) else {
        return Ok(default.to_owned());
    };
    let text = value
        .to_str()
        .map_err(|_| ApiError::bad_request("Content-Type must be visible ASCII"))?
        .trim();
    if text.is_empty() {
        return Ok(default.to_owned());
    }
    if text.len() > MAX_NAME {
        return Err(ApiError::bad_request(
            "Content-Type must be at most 255 characters",
        ));
    }
    Ok(text.to_owned())
}

/// The head the client based its write on: `revision=N` and `If-Match` (or `etag=`).
pub fn expect(
    revision_text: Option<&str>,
    headers: &HeaderMap,
    etag: Option<&str>,
) -> Result<Expect, ApiError> {
    let if_match = headers
        .get(header::IF_MATCH)
        .map(|v| {
            v.to_str()
                .map(str::to_owned)
                .map_err(|_| ApiError::bad_request("If-Match must be visible ASCII"))
        })
        .transpose()?;
    Ok(Expect {
        revision: revision(revision_text)?,
        etag: if_match
            .or(etag.map(str::to_owned))
            .filter(|e| !e.trim().is_empty()),
    })
}

/// `true|false` (default `default`).
pub fn flag(text: Option<&str>, what: &str, default: bool) -> Result<bool, ApiError> {
    match text.map(|t| t.trim().to_ascii_lowercase()) {
        None => Ok(default),
        Some(t) if t == "true" || t == "1" => Ok(true),
        Some(t) if t == "false" || t == "0" => Ok(false),
        Some(t) => Err(ApiError::bad_request(format!(
            "{what} must be true or false, got `{t}`"
        ))),
    }
}

/// A comma-separated list of revision numbers.
pub fn revision_ids(text: Option<&str>) -> Result<Vec<i64>, ApiError> {
    let text = text.unwrap_or("").trim();
    if text.is_empty() {
        return Err(ApiError::bad_request(
            "revisionids is required (e.g. revisionids=1,2)",
        ));
    }
    text.split(',').map(|t| id(t, "revisionids")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_read_or_refused_with_their_name() {
        assert_eq!(revision(Some("head")).ok(), Some(None));
        assert_eq!(revision(Some("3")).ok(), Some(Some(3)));
        assert!(revision(Some("-1")).is_err());
        assert!(name("a\u{0}b", "filename").is_err());
        assert!(name(&"x".repeat(256), "filename").is_err());
        assert_eq!(revision_ids(Some("1, 2")).ok(), Some(vec![1, 2]));
        assert!(id("abc", "fileid").unwrap_err().message.contains("fileid"));
    }
}
