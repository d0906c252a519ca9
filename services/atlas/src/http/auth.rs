//! Taking the [`Caller`] from a request's headers, before any body is read: extract it before
//! the body in every handler. The admin token names the administrator; any other bearer token
//! is looked up in the `users` read model ([`crate::read::users::caller`]).

use crate::read::users;
use crate::user::Caller;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use palimpsest_web::{AppState, secret};
use serde_json::json;

/// A 401: no credential, or one that names nobody.
#[derive(Debug)]
pub struct Unauthenticated(pub &'static str);

impl IntoResponse for Unauthenticated {
    fn into_response(self) -> Response {
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer realm=\"atlas\"")],
            axum::Json(json!({ "error": self.0 })),
        )
            .into_response()
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let token = bearer(parts).ok_or_else(|| {
            Unauthenticated("an Authorization: Bearer token is required").into_response()
        })?;
        if secret::equal(token, &state.admin_token) {
            return Ok(Caller::Admin);
        }
        users::caller(state, token)
            .await
            .map_err(IntoResponse::into_response)?
            .ok_or_else(|| Unauthenticated("unknown or revoked bearer token").into_response())
    }
}

/// The bearer token of the request, if it sent one.
fn bearer(parts: &Parts) -> Option<&str> {
    let value = parts.headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}
