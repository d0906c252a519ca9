//! Whether a request *presents* a credential, judged from its head alone (headers and query),
//! before any byte of its body is read: the one list of every credential a context accepts.
//!
//! It exists for the slot split of [`crate::limits`]: a request that presents nothing takes one
//! of the few anonymous slots, so clients without credentials (or a flood of them holding
//! unfinished bodies) cannot hold the slots of everyone else. Presenting is not being
//! authenticated: a context checks the credential itself, from the headers, before it reads the
//! body, so a false one is refused at once and holds its slot for no time.
//!
//! The list, by context (README, "Configuration", and `docs/authorization/platform-limits.md`):
//! - `Authorization` (any scheme): `/v1` and records (bearer), docs (Basic or bearer), atlas
//!   (bearer), resources (bearer), pads (Etherpad's `authorization` field);
//! - `X-Authtoken`: resources (Deki's header);
//! - `apikey` / `api_key` headers: pads (Etherpad reads every header as a field);
//! - cookies `SyncGatewaySession` (docs, Sync Gateway) and `AuthSession` (docs, CouchDB);
//! - query parameters `apikey` / `api_key` (pads, resources) and `authtoken` (resources).

use axum::http::{HeaderMap, Uri, header};

/// Headers that carry a credential (lower case).
pub const CREDENTIAL_HEADERS: [&str; 4] = ["authorization", "x-authtoken", "apikey", "api_key"];

/// Cookies that carry a session.
pub const SESSION_COOKIES: [&str; 2] = ["SyncGatewaySession", "AuthSession"];

/// Query parameters that carry a credential.
pub const CREDENTIAL_PARAMETERS: [&str; 3] = ["apikey", "api_key", "authtoken"];

/// Whether the request head holds a non-empty credential in any of the places listed above.
pub fn presented(headers: &HeaderMap, uri: &Uri) -> bool {
    in_headers(headers) || in_cookies(headers) || uri.query().is_some_and(in_query)
}

fn non_empty(value: &[u8]) -> bool {
    value.iter().any(|b| !b.is_ascii_whitespace())
}

fn in_headers(headers: &HeaderMap) -> bool {
    CREDENTIAL_HEADERS.iter().any(|name| {
        headers
            .get_all(*name)
            .iter()
            .any(|value| non_empty(value.as_bytes()))
    })
}

fn in_cookies(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .any(|(name, value)| SESSION_COOKIES.contains(&name.trim()) && non_empty(value.as_bytes()))
}

fn in_query(query: &str) -> bool {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .any(|(name, value)| CREDENTIAL_PARAMETERS.contains(&name) && non_empty(value.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(headers: &[(&str, &str)], uri: &str) -> bool {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(
                axum::http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                value.parse().expect("value"),
            );
        }
        presented(&map, &uri.parse().expect("uri"))
    }

    #[test]
    fn every_listed_place_counts() {
        assert!(head(&[("Authorization", "Bearer x")], "/v1/head"));
        assert!(head(
            &[("authorization", "Basic YTpi")],
            "/docs/db/_all_docs"
        ));
        assert!(head(&[("X-Authtoken", "k")], "/resources/files"));
        assert!(head(&[("apikey", "k")], "/pads/api/1/getText"));
        assert!(head(&[("api_key", "k")], "/pads/api/1/getText"));
        assert!(head(
            &[("Cookie", "a=b; SyncGatewaySession=t")],
            "/docs/db/"
        ));
        assert!(head(&[("Cookie", "AuthSession=t")], "/docs/db/"));
        assert!(head(&[], "/pads/api/1/getText?padID=p&apikey=k"));
        assert!(head(&[], "/pads/api/1/getText?api_key=k"));
        assert!(head(&[], "/resources/files?authtoken=k"));
    }

    #[test]
    fn nothing_or_empty_values_are_anonymous() {
        assert!(!head(&[], "/healthz"));
        assert!(!head(&[("Authorization", " ")], "/v1/head"));
        assert!(!head(
            &[("Cookie", "other=t; SyncGatewaySession=")],
            "/docs/db/"
        ));
        assert!(!head(&[], "/pads/api/1/getText?apikey=&padID=p"));
        assert!(!head(&[], "/pads/api/1/getText?padID=apikey"));
        assert!(!head(&[("X-Other", "Bearer x")], "/x?token=k"));
    }
}
