//! CouchDB's collation of view keys: `null` < `false` < `true` < numbers < strings < arrays <
//! objects; arrays element by element, objects member by member in their order, a shorter one
//! first when it is a prefix. Strings compare case-insensitively first (`"a"` < `"B"` < `"b"`),
//! then lowercase before uppercase, then by code point: ICU's order for letters, not ICU's
//! whole table (README, "Where we differ").

use serde_json::Value;
use std::cmp::Ordering;

fn rank(value: &Value) -> u8 {
    match value {
        Value::Null => 0,
        Value::Bool(false) => 1,
        Value::Bool(true) => 2,
        Value::Number(_) => 3,
        Value::String(_) => 4,
        Value::Array(_) => 5,
        Value::Object(_) => 6,
    }
}

/// The order of two view keys.
pub fn collate(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
            x.partial_cmp(&y).unwrap_or(Ordering::Equal)
        }
        (Value::String(x), Value::String(y)) => strings(x, y),
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .map(|(x, y)| collate(x, y))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        (Value::Object(x), Value::Object(y)) => x
            .iter()
            .zip(y)
            .map(|((kx, vx), (ky, vy))| strings(kx, ky).then_with(|| collate(vx, vy)))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        _ => rank(a).cmp(&rank(b)),
    }
}

fn strings(a: &str, b: &str) -> Ordering {
    let folded = |s: &str| s.chars().flat_map(char::to_lowercase).collect::<Vec<_>>();
    let case = |s: &str| s.chars().map(char::is_uppercase).collect::<Vec<_>>();
    folded(a)
        .cmp(&folded(b))
        .then_with(|| case(a).cmp(&case(b)))
        .then_with(|| a.cmp(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_sort_in_couchdbs_order() {
        let sorted = [
            json!(null),
            json!(false),
            json!(true),
            json!(-1),
            json!(1),
            json!(2.5),
            json!("a"),
            json!("A"),
            json!("aa"),
            json!("b"),
            json!("B"),
            json!([]),
            json!([1]),
            json!([1, "a"]),
            json!([2]),
            json!({}),
            json!({"a": 1}),
            json!({"a": 2}),
            json!({"b": 1}),
        ];
        for (i, a) in sorted.iter().enumerate() {
            for (j, b) in sorted.iter().enumerate() {
                assert_eq!(collate(a, b), i.cmp(&j), "{a} against {b}");
            }
        }
    }
}
