//! Reading a function's JSON arguments: a malformed body is a 400 naming what serde refused.

use crate::http::failure::Failure;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The body as `T`; an empty body reads as `{}`.
pub fn args<T: DeserializeOwned>(body: &[u8]) -> Result<T, Failure> {
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    serde_json::from_slice(body).map_err(|e| Failure::bad(format!("invalid arguments: {e}")))
}

/// `data.clazz`, required.
pub fn clazz(data: &Map<String, Value>) -> Result<String, Failure> {
    match data.get("clazz") {
        Some(Value::String(c)) => Ok(c.clone()),
        Some(_) => Err(Failure::bad("data.clazz must be a string")),
        None => Err(Failure::bad("data.clazz is required")),
    }
}
