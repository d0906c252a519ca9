//! The facts of an HTTP request a command needs: its `Idempotency-Key` (the IETF httpapi
//! draft's header) and a fingerprint of the request (method, path and query, body), so a key
//! reused for a different request is told apart from a true repeat.
//!
//! [`fingerprint_requests`] is a middleware the platform puts in front of every context: for a
//! request with a key it hashes the body as the handler reads it (nothing is buffered, so
//! uploads stream as before) and hands the handler a [`CommandRequest`].

use crate::ApiError;
use axum::body::Body;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex};

/// The request header that names a command so it can be retried safely.
pub const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// Longest key accepted (the log keys it with the context's name in front).
const MAX_KEY_LEN: usize = 200;

/// Request headers that carry a write's input, so they are part of its fingerprint: the
/// body's media type (a property's or attachment's MIME type; form or JSON), the revision a
/// write is based on, a property's name (`Slug`, AtomPub), a copy's target (`Destination`).
/// Credentials are not among them: who may see a stored answer is the context's concern
/// (records seals each reply for its caller).
pub const SEMANTIC_HEADERS: [&str; 5] = [
    "content-type",
    "if-match",
    "if-none-match",
    "slug",
    "destination",
];

/// A write request's idempotency facts; take it as an argument of every write handler and pass
/// it to [`super::CommandRunner::run`].
#[derive(Clone, Default)]
pub struct CommandRequest {
    key: Option<String>,
    hasher: Option<Arc<Mutex<Sha256>>>,
    /// A fingerprint known in full already (a step of a call carries its call's).
    fixed: Option<Vec<u8>>,
}

impl std::fmt::Debug for CommandRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommandRequest")
            .field("key", &self.key)
            .finish()
    }
}

impl CommandRequest {
    /// A request without an Idempotency-Key (commands issued inside the process).
    pub fn none() -> Self {
        Self::default()
    }

    /// A request keyed `key` whose fingerprint is `fingerprint`, known in full already: a step
    /// of a call of several commands ([`super::Steps`]), or a caller inside the process.
    pub fn keyed(key: String, fingerprint: Vec<u8>) -> Self {
        CommandRequest {
            key: Some(key),
            hasher: None,
            fixed: Some(fingerprint),
        }
    }

    /// The client's Idempotency-Key, if it sent one.
    pub fn key(&self) -> Option<&str> {
        self.key.as_deref()
    }

    /// The fingerprint of the request so far: method, path and query, the
    /// [`SEMANTIC_HEADERS`] it carries, and the body bytes the handler has read (all of them,
    /// once its extractors are done).
    pub fn fingerprint(&self) -> Vec<u8> {
        if let Some(fixed) = &self.fixed {
            return fixed.clone();
        }
        match &self.hasher {
            Some(hasher) => match hasher.lock() {
                Ok(h) => h.clone().finalize().to_vec(),
                Err(_) => Vec::new(),
            },
            None => Vec::new(),
        }
    }
}

impl<S: Send + Sync> FromRequestParts<S> for CommandRequest {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(parts
            .extensions
            .get::<CommandRequest>()
            .cloned()
            .unwrap_or_default())
    }
}

/// The key a header value names: the value without surrounding spaces and tabs (HTTP's optional
/// whitespace), 1-[`MAX_KEY_LEN`] visible ASCII characters with spaces inside; `None` for anything
/// else (a tab or other control character inside, non-ASCII, blank, too long). The OpenAPI
/// documents say the same ([`super::openapi::idempotency_key_parameter`]).
fn valid_key(value: &str) -> Option<&str> {
    let key = value.trim_matches([' ', '\t']);
    let printable = key.bytes().all(|b| (b' '..=b'~').contains(&b));
    (printable && !key.is_empty() && key.len() <= MAX_KEY_LEN).then_some(key)
}

/// Middleware: checks the `Idempotency-Key` of a request that carries one (400 if malformed),
/// and fingerprints the request for [`CommandRequest`].
pub async fn fingerprint_requests(mut request: Request, next: Next) -> Response {
    let Some(raw) = request.headers().get(IDEMPOTENCY_KEY) else {
        return next.run(request).await;
    };
    let key = match raw.to_str().ok().and_then(valid_key) {
        Some(k) => k.to_owned(),
        None => {
            return ApiError::bad_request(format!(
                "Idempotency-Key must be 1-{MAX_KEY_LEN} visible ASCII characters"
            ))
            .into_response();
        }
    };
    let mut hasher = Sha256::new();
    hasher.update(request.method().as_str().as_bytes());
    hasher.update(b" ");
    hasher.update(
        request
            .uri()
            .path_and_query()
            .map(|p| p.as_str())
            .unwrap_or("/")
            .as_bytes(),
    );
    hasher.update(b"\n");
    hash_semantic_headers(&mut hasher, request.headers());
    let hasher = Arc::new(Mutex::new(hasher));
    let feed = hasher.clone();
    let body = std::mem::take(request.body_mut());
    let hashed = body.into_data_stream().map(move |chunk| {
        if let (Ok(bytes), Ok(mut h)) = (&chunk, feed.lock()) {
            h.update(bytes);
        }
        chunk
    });
    *request.body_mut() = Body::from_stream(hashed);
    request.extensions_mut().insert(CommandRequest {
        key: Some(key),
        hasher: Some(hasher),
        fixed: None,
    });
    next.run(request).await
}

/// Feeds each [`SEMANTIC_HEADERS`] value present (all values of a repeated one, in order) to
/// `hasher`, each line naming its header so that no two header sets hash alike.
fn hash_semantic_headers(hasher: &mut Sha256, headers: &axum::http::HeaderMap) {
    for name in SEMANTIC_HEADERS {
        for value in headers.get_all(name) {
            hasher.update(name.as_bytes());
            hasher.update(b": ");
            hasher.update(value.as_bytes());
            hasher.update(b"\n");
        }
    }
    hasher.update(b"\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_visible_ascii_with_inner_spaces_and_surrounding_whitespace_dropped() {
        assert_eq!(valid_key("abc"), Some("abc"));
        assert_eq!(valid_key(" a b\t"), Some("a b"));
        assert_eq!(
            valid_key(&"k".repeat(MAX_KEY_LEN)),
            Some("k".repeat(MAX_KEY_LEN).as_str())
        );
        // Found by schemathesis: a tab inside was accepted although the documents refuse it.
        assert_eq!(valid_key("a\tb"), None);
        assert_eq!(valid_key(" \t "), None);
        assert_eq!(valid_key(&"k".repeat(MAX_KEY_LEN + 1)), None);
        assert_eq!(valid_key("é"), None);
    }
}
