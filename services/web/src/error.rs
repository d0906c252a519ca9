//! Errors as HTTP responses: every error has a status and a message.

use crate::platform_error::PlatformError;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An HTTP error: its status and a message for the client, sent as `{"error": message}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The response status.
    pub status: StatusCode,
    /// What went wrong, in words the client can act on.
    pub message: String,
}

impl ApiError {
    /// An error with a status and a message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// 400: the request is malformed.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404: no such thing.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message)
    }

    /// 409: the thing changed or is in a state that refuses the request.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, message)
    }

    /// 500 for a failure the client cannot fix; the detail goes to the log, not the client.
    pub fn internal(detail: impl std::fmt::Display) -> Self {
        tracing::error!(error = %detail, "internal error");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal error")
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.status, self.message)
    }
}

impl std::error::Error for ApiError {}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

impl From<PlatformError> for ApiError {
    fn from(e: PlatformError) -> Self {
        ApiError::new(e.status(), e.message)
    }
}

crate::renders_platform_failures!(ApiError);

/// An error and its causes, one after another, for the server log. A Postgres error in the
/// chain adds its SQLSTATE, message, detail and constraint (tokio-postgres itself only says
/// "db error").
pub fn report(error: &(dyn std::error::Error + 'static)) -> String {
    let mut text = error.to_string();
    let mut current = error;
    loop {
        if let Some(db) = current.downcast_ref::<tokio_postgres::error::DbError>() {
            text.push_str(&format!(
                " [SQLSTATE {}: {}",
                db.code().code(),
                db.message()
            ));
            if let Some(detail) = db.detail() {
                text.push_str(&format!("; detail: {detail}"));
            }
            if let Some(constraint) = db.constraint() {
                text.push_str(&format!("; constraint: {constraint}"));
            }
            text.push(']');
            return text;
        }
        let Some(next) = current.source() else {
            return text;
        };
        let shown = next.to_string();
        if !text.ends_with(&shown) {
            text.push_str(": ");
            text.push_str(&shown);
        }
        current = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_postgres_error_is_reported_with_its_sqlstate_and_message() {
        let (client, connection) = tokio_postgres::connect(
            "postgres://postgres@127.0.0.1:5432/postgres",
            tokio_postgres::NoTls,
        )
        .await
        .expect("connect");
        let driver = tokio::spawn(connection);
        let error = client
            .query_one("SELECT $1::text", &[&"a\u{0}b"])
            .await
            .expect_err("NUL is refused");
        let text = report(&error);
        assert!(text.starts_with("db error"), "{text}");
        assert!(text.contains("SQLSTATE 22021"), "{text}");
        assert!(text.contains("invalid byte sequence"), "{text}");
        drop(client);
        driver.await.expect("driver").expect("connection");
    }
}
