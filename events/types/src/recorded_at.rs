//! The one written form of the time an event was recorded.
//!
//! An event's hash covers its `recorded_at` as text, so whoever recomputes the hash from what
//! was published must be given that very text: RFC 3339 in UTC with a `Z` and exactly six
//! fractional digits (`2026-11-27T15:00:00.250000Z`), never fewer when the microseconds end in
//! zeros. The hash input ([`crate::envelope::HashedFields::content`]) and every published form
//! of the envelope (the relay's NATS messages, `/v1/events`, `/v1/streams/…`) write it through
//! [`text`]; reading accepts any RFC 3339 time, so messages published before the form was fixed
//! still decode (their hashes never depended on the published form: see `events/README.md`).

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serializer;

/// The published form as a regular expression (the envelope's JSON Schema says it).
pub const PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z$";

/// `at` as the hash covers it and as every envelope is published: RFC 3339, UTC `Z`, six
/// fractional digits (a finer time is truncated to the microsecond, as the log stores it).
pub fn text(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Micros, true)
}

/// Serialises `at` as [`text`]: the envelope's `recorded_at` uses it in place of chrono's own
/// form, which drops trailing zero digits (`.250Z`, or no fraction at all).
pub fn serialize<S: Serializer>(at: &DateTime<Utc>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&text(*at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(rfc3339: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(rfc3339)
            .expect("time")
            .with_timezone(&Utc)
    }

    #[test]
    fn always_six_fractional_digits_in_utc() {
        let cases = [
            ("2026-11-27T15:00:00.123456Z", "2026-11-27T15:00:00.123456Z"),
            ("2026-11-27T15:00:00.250Z", "2026-11-27T15:00:00.250000Z"),
            ("2026-11-27T15:00:00Z", "2026-11-27T15:00:00.000000Z"),
            ("2026-11-27T16:00:00.5+01:00", "2026-11-27T15:00:00.500000Z"),
            (
                "2026-11-27T15:00:00.123456789Z",
                "2026-11-27T15:00:00.123456Z",
            ),
        ];
        for (given, written) in cases {
            assert_eq!(text(at(given)), written, "{given}");
            assert_eq!(
                serde_json::to_string(&Wrapped(at(given))).expect("json"),
                format!("\"{written}\""),
                "{given}"
            );
        }
    }

    #[derive(serde::Serialize)]
    struct Wrapped(#[serde(serialize_with = "serialize")] DateTime<Utc>);
}
