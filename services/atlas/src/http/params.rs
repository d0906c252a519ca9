//! Query-string parameters, read by hand so each bad one gets its own 400.

use chrono::{DateTime, Datelike, NaiveDate, Utc};
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

/// The earliest `timestamptz` Postgres holds: 4713 BC (the proleptic year -4712), 1 January.
const EARLIEST_YEAR: i32 = -4712;

/// `time_as_of`: an RFC 3339 time, or a date (its midnight UTC), no earlier than 4713 BC.
pub fn as_of(p: &Params) -> Result<Option<DateTime<Utc>>, ApiError> {
    let Some(v) = text(p, "time_as_of") else {
        return Ok(None);
    };
    let time = parse_time(v.trim()).ok_or_else(|| {
        ApiError::bad_request("time_as_of must be an RFC 3339 time or a YYYY-MM-DD date")
    })?;
    if time.year() < EARLIEST_YEAR {
        return Err(ApiError::bad_request(
            "time_as_of must not be earlier than 4713 BC",
        ));
    }
    Ok(Some(time))
}

fn parse_time(v: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(v) {
        return Some(t.with_timezone(&Utc));
    }
    let d = NaiveDate::parse_from_str(v, "%Y-%m-%d").ok()?;
    Some(d.and_hms_opt(0, 0, 0)?.and_utc())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(v: &str) -> Params {
        [("time_as_of".to_owned(), v.to_owned())].into()
    }

    #[test]
    fn time_as_of_reads_times_and_dates_from_4713_bc_on() {
        assert!(as_of(&params("2020-01-02")).expect("date").is_some());
        assert!(
            as_of(&params("2020-01-02T03:04:05+02:00"))
                .expect("time")
                .is_some()
        );
        assert!(as_of(&params("-4712-01-01")).expect("earliest").is_some());
        let early = as_of(&params("-4713-12-31")).expect_err("too early");
        assert_eq!(early.status, axum::http::StatusCode::BAD_REQUEST);
        assert!(as_of(&params("yesterday")).is_err());
    }
}
