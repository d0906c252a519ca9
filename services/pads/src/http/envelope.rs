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
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_web::ApiError;
use palimpsest_web::{PlatformError, PlatformKind};
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
            .ok_or_else(|| {
                EnvelopeError::internal_message("a stored answer is not a success envelope")
            })
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

    /// Code 2: `error` failed and the client cannot fix it; the error is logged with its
    /// causes (and Postgres' SQLSTATE and message when a database error is among them:
    /// [`palimpsest_web::error::report`]).
    pub fn internal<E: std::error::Error + 'static>(error: E) -> Self {
        Self::internal_message(palimpsest_web::error::report(&error))
    }

    /// Code 2 for a failure known only by its description (an invariant broken), logged.
    pub fn internal_message(detail: impl std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "pads API internal error");
        EnvelopeError {
            code: 2,
            message: "internal error".into(),
            status: StatusCode::INTERNAL_SERVER_ERROR,
            missing: false,
        }
    }
}

/// The platform's failures as Etherpad answers them: what the log refuses as malformed is
/// code 1 with status 200 (Etherpad's wrong parameters); a stream that kept changing through
/// every retry is a 409 with code 1 (a retry may succeed; code 2 would claim a server fault);
/// every other failure keeps the platform's status (413, 422, 503, 500).
impl From<PlatformError> for EnvelopeError {
    fn from(e: PlatformError) -> Self {
        match e.kind {
            PlatformKind::Malformed => EnvelopeError::api(e.message),
            _ => EnvelopeError::new_status(e.status(), e.message),
        }
    }
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
