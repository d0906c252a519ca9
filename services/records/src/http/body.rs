//! Reading a function's JSON arguments: a malformed body is a 400 naming what serde refused.

use crate::coded_error::CodedError;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The body as `T`; an empty body reads as `{}`.
pub fn args<T: DeserializeOwned>(body: &[u8]) -> Result<T, CodedError> {
    let body: &[u8] = if body.iter().all(u8::is_ascii_whitespace) {
        b"{}"
    } else {
        body
    };
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| CodedError::bad(format!("invalid arguments: {e}")))?;
    if !value.is_object() {
        return Err(CodedError::bad("invalid arguments: expected a JSON object"));
    }
    serde_json::from_value(integral(value))
        .map_err(|e| CodedError::bad(format!("invalid arguments: {e}")))
}

/// `value` with every number that is a whole number written with a fraction (`7.0`) as the
/// integer it is: JSON has one number type (JSON Schema's `integer` accepts `7.0`), so an
/// integer argument may arrive so written.
fn integral(value: Value) -> Value {
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => match n.as_f64() {
            // Strict bounds: an integer literal past i64 reads as a float equal to a bound.
            Some(f) if f.fract() == 0.0 && f > i64::MIN as f64 && f < i64::MAX as f64 => {
                Value::from(f as i64)
            }
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(integral).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, integral(v))).collect())
        }
        other => other,
    }
}
