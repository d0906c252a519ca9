//! Query-string parameters, read by hand so each bad one gets its own 400.

use chrono::{DateTime, NaiveDate, Utc};
use palimpsest_web::ApiError;
use std::collections::HashMap;

/// A request's query parameters.
pub type Params = HashMap<String, String>;

/// A non-blank text parameter.
pub fn text(p: &Params, key: &str) -> Option<String> {
    p.get(key).filter(|v| !v.trim().is_empty()).cloned()
}

/// An optional integer parameter.
pub fn integer(p: &Params, key: &str) -> Result<Option<i64>, ApiError> {
    match text(p, key) {
        None => Ok(None),
        Some(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| ApiError::bad_request(format!("{key} must be an integer"))),
    }
}

/// A required finite number parameter.
pub fn number(p: &Params, key: &str) -> Result<f64, ApiError> {
    let v = text(p, key).ok_or_else(|| ApiError::bad_request(format!("{key} is required")))?;
    match v.trim().parse::<f64>() {
        Ok(f) if f.is_finite() => Ok(f),
        _ => Err(ApiError::bad_request(format!("{key} must be a number"))),
    }
}

/// `time_as_of`: an RFC 3339 time, or a date (its midnight UTC).
pub fn as_of(p: &Params) -> Result<Option<DateTime<Utc>>, ApiError> {
    let Some(v) = text(p, "time_as_of") else {
        return Ok(None);
    };
    if let Ok(t) = DateTime::parse_from_rfc3339(v.trim()) {
        return Ok(Some(t.with_timezone(&Utc)));
    }
    if let Ok(d) = NaiveDate::parse_from_str(v.trim(), "%Y-%m-%d")
        && let Some(t) = d.and_hms_opt(0, 0, 0)
    {
        return Ok(Some(t.and_utc()));
    }
    Err(ApiError::bad_request(
        "time_as_of must be an RFC 3339 time or a YYYY-MM-DD date",
    ))
}
