//! Query-string parameters as CouchDB reads them: booleans, numbers and JSON values.

use super::error::CouchError;
use std::collections::HashMap;

/// The query string, decoded once.
pub type Params = HashMap<String, String>;

/// `true` when the parameter is `true` (CouchDB is strict about the spelling).
pub fn flag(params: &Params, name: &str) -> bool {
    params.get(name).is_some_and(|v| v == "true")
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
