//! Query-string parameters as CouchDB reads them: booleans, numbers and JSON values.

use super::error::CouchError;
use axum::http::StatusCode;
use std::collections::HashMap;

/// The query string, decoded once.
pub type Params = HashMap<String, String>;

/// A boolean parameter, `false` when absent: see [`flag_or`].
pub fn flag(params: &Params, name: &str) -> Result<bool, CouchError> {
    flag_or(params, name, false)
}

/// A boolean parameter as CouchDB's `parse_bool_param` reads it: `true` or `false` in any case,
/// `default` when absent. Anything else (`revs=`, `new_edits=yes`) is CouchDB's 400
/// `query_parse_error`, not a silent `false`.
pub fn flag_or(params: &Params, name: &str, default: bool) -> Result<bool, CouchError> {
    match params.get(name) {
        None => Ok(default),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(CouchError::new(
            StatusCode::BAD_REQUEST,
            "query_parse_error",
            format!("Invalid boolean parameter: {v:?} for {name}"),
        )),
    }
}

/// A non-negative integer parameter.
pub fn number(params: &Params, name: &str) -> Result<Option<u64>, CouchError> {
    params
        .get(name)
        .map(|v| {
            v.trim_matches('"')
                .parse::<u64>()
                .map_err(|_| CouchError::bad_request(format!("Invalid value for {name}: `{v}`")))
        })
        .transpose()
}

/// A parameter holding JSON (`keys=["a"]`, `startkey="x"`, `open_revs=[...]`).
pub fn json<T: serde::de::DeserializeOwned>(
    params: &Params,
    name: &str,
) -> Result<Option<T>, CouchError> {
    params
        .get(name)
        .map(|v| {
            serde_json::from_str(v)
                .map_err(|_| CouchError::bad_request(format!("Invalid JSON in {name}")))
        })
        .transpose()
}

/// A JSON request body, or `T`'s default when the body is empty (CouchDB takes an empty
/// `POST` as no options); malformed JSON is a 400.
pub fn body_or_default<T: serde::de::DeserializeOwned + Default>(
    body: &[u8],
) -> Result<T, CouchError> {
    if body.is_empty() {
        return Ok(T::default());
    }
    serde_json::from_slice(body).map_err(|e| CouchError::bad_request(e.to_string()))
}
