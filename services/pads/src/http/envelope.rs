//! Etherpad's response envelope: `{"code": 0, "message": "ok", "data": …}` and its error codes.
//!
//! | code | meaning | HTTP status |
//! |---|---|---|
//! | 0 | ok | 200 |
//! | 1 | wrong parameters (`padID does not exist`, …) | 200, as Etherpad answers |
//! | 2 | internal error | 500 |
//! | 3 | no such function or API version | 404 |
//! | 4 | no or wrong API key | 401 |
//!
//! Etherpad answers wrong parameters with status 200 and code 1 (its clients read the code);
//! we keep that. A request whose body cannot be read at all is a 400 with code 1.

use crate::error::DomainError;
use crate::read::ReadError;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_log::{AppendError, LogError};
use palimpsest_web::ApiError;
use palimpsest_web::command::LoadError;
use serde::Serialize;

/// The media type of every answer.
pub const CONTENT_TYPE: &str = "application/json; charset=utf-8";

/// How every successful envelope begins; its `data` follows, then `}`.
const OK_PREFIX: &str = r#"{"code":0,"message":"ok","data":"#;

/// The `data` of a successful answer, already serialised (Etherpad sends `data || null`, so a
/// falsy value becomes `null`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Data(String);

impl Data {
    /// `data: null`.
    pub fn null() -> Self {
        Data("null".into())
    }

    /// `data` as `value` serialises, falsy values (`false`, `0`, `""`) turned into `null`.
    pub fn of(value: &impl Serialize) -> Result<Self, EnvelopeError> {
        let text = serde_json::to_string(value).map_err(EnvelopeError::internal)?;
        Ok(match text.as_str() {
            "false" | "0" | "\"\"" | "null" | "-0" => Data::null(),
            _ => Data(text),
        })
    }

    /// The JSON text.
    pub fn as_json(&self) -> &str {
        &self.0
    }

    /// The `data` of a successful envelope this API wrote (a command's answer, possibly the
    /// one stored under its Idempotency-Key), so it is answered again byte for byte.
    pub fn from_reply(reply: &palimpsest_web::command::Reply) -> Result<Self, EnvelopeError> {
        std::str::from_utf8(&reply.body)
            .ok()
            .and_then(|text| text.strip_prefix(OK_PREFIX))
            .and_then(|rest| rest.strip_suffix('}'))
            .map(|data| Data(data.to_owned()))
            .ok_or_else(|| EnvelopeError::internal("a stored answer is not a success envelope"))
    }
}

/// A failed call as Etherpad answers it, `{code, message, data: null}`: the code, the message
/// and the HTTP status it goes with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeError {
    /// 1 wrong parameters, 2 internal, 3 no such function, 4 API key.
    pub code: u8,
    /// The message Etherpad gives.
    pub message: String,
    /// The HTTP status.
    pub status: StatusCode,
    /// Whether the call named something that does not exist (the extension endpoints answer
    /// it with 404).
    pub missing: bool,
}

impl EnvelopeError {
    /// Code 1: the parameters were wrong; status 200 as in Etherpad.
    pub fn api(message: impl Into<String>) -> Self {
        EnvelopeError {
            code: 1,
            message: message.into(),
            status: StatusCode::OK,
            missing: false,
        }
    }

    /// Code 1 with status 400: the request could not be read at all.
    pub fn bad_request(message: impl Into<String>) -> Self {
        EnvelopeError {
            code: 1,
            message: message.into(),
            status: StatusCode::BAD_REQUEST,
            missing: false,
        }
    }

    /// Code 1 with the given status (the extension endpoints answer refusals with 4xx/5xx).
    pub fn new_status(status: StatusCode, message: impl Into<String>) -> Self {
        EnvelopeError {
            code: if status.is_server_error() { 2 } else { 1 },
            message: message.into(),
            status,
            missing: false,
        }
    }

    /// Code 3: no such function (or version).
    pub fn not_found(message: impl Into<String>) -> Self {
        EnvelopeError {
            code: 3,
            message: message.into(),
            status: StatusCode::NOT_FOUND,
            missing: false,
        }
    }

    /// Code 4: no or wrong API key.
    pub fn unauthorized() -> Self {
        EnvelopeError {
            code: 4,
            message: "no or wrong API Key".into(),
            status: StatusCode::UNAUTHORIZED,
            missing: false,
        }
    }

    /// Code 2: something failed that the client cannot fix; the detail is logged (with
    /// Postgres' SQLSTATE and message when a database error is behind it).
    pub fn internal<E: std::fmt::Display + 'static>(detail: E) -> Self {
        tracing::error!(error = %describe(&detail), "pads API internal error");
        EnvelopeError {
            code: 2,
            message: "internal error".into(),
            status: StatusCode::INTERNAL_SERVER_ERROR,
            missing: false,
        }
    }
}

/// The text of an internal error for the log: errors that can carry a Postgres error are
/// reported with their causes ([`palimpsest_web::error::report`]).
fn describe<E: std::fmt::Display + 'static>(detail: &E) -> String {
    let any: &dyn std::any::Any = detail;
    let error: Option<&(dyn std::error::Error + 'static)> =
        if let Some(e) = any.downcast_ref::<ReadError>() {
            Some(e)
        } else if let Some(e) = any.downcast_ref::<LoadError>() {
            Some(e)
        } else if let Some(e) = any.downcast_ref::<AppendError>() {
            Some(e)
        } else if let Some(e) = any.downcast_ref::<LogError>() {
            Some(e)
        } else if let Some(e) = any.downcast_ref::<tokio_postgres::Error>() {
            Some(e)
        } else {
            None
        };
    error.map_or_else(|| detail.to_string(), palimpsest_web::error::report)
}

impl From<DomainError> for EnvelopeError {
    fn from(e: DomainError) -> Self {
        EnvelopeError {
            missing: e.is_missing(),
            ..EnvelopeError::api(e.to_string())
        }
    }
}

impl From<ApiError> for EnvelopeError {
    fn from(e: ApiError) -> Self {
        let code = match e.status.as_u16() {
            401 | 403 => 4,
            404 => 3,
            400..=499 => 1,
            _ => 2,
        };
        EnvelopeError {
            code,
            missing: e.status == StatusCode::NOT_FOUND,
            message: e.message,
            status: e.status,
        }
    }
}

/// The envelope text of an answer.
pub fn envelope(outcome: &Result<Data, EnvelopeError>) -> (StatusCode, String) {
    match outcome {
        Ok(data) => (StatusCode::OK, format!("{OK_PREFIX}{}}}", data.as_json())),
        Err(f) => {
            let message = serde_json::to_string(&f.message).unwrap_or_else(|_| "\"\"".into());
            (
                f.status,
                format!(r#"{{"code":{},"message":{message},"data":null}}"#, f.code),
            )
        }
    }
}

/// An answer as an HTTP response.
pub fn respond(outcome: Result<Data, EnvelopeError>) -> Response {
    let (status, body) = envelope(&outcome);
    (status, [(header::CONTENT_TYPE, CONTENT_TYPE)], body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn success_envelope_has_etherpads_key_order_and_falsy_data_is_null() {
        let ok = Data::of(&json!({"text": "hi\n"})).expect("data");
        assert_eq!(
            envelope(&Ok(ok)).1,
            r#"{"code":0,"message":"ok","data":{"text":"hi\n"}}"#
        );
        assert_eq!(Data::of(&"").expect("data"), Data::null());
        assert_eq!(Data::of(&0).expect("data"), Data::null());
        assert_eq!(Data::of(&"john").expect("data").as_json(), "\"john\"");
    }

    #[test]
    fn failures_carry_code_and_status() {
        let (status, body) = envelope(&Err(EnvelopeError::api("padID does not exist")));
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            body,
            r#"{"code":1,"message":"padID does not exist","data":null}"#
        );
        assert_eq!(
            envelope(&Err(EnvelopeError::unauthorized())).0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(
            envelope(&Err(EnvelopeError::not_found("no such function"))).0,
            StatusCode::NOT_FOUND
        );
    }
}
